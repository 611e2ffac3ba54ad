// Brute force, slowed: failed sign-ins are counted per account (the email as typed,
// whether or not it exists) and per client address. Past a free allowance each
// further failure locks that subject for twice as long as the last, up to a cap;
// while locked, a sign-in is refused without checking the password. A success
// clears the account's count (not the address's: one good password does not buy
// an address more guesses at other accounts).
import type { Clock } from '../../clock.ts';
import type { Executor } from '../../db/transaction.ts';
import type { CabinetTables } from '../cabinet-tables.ts';

const FREE_FAILURES = { account: 5, address: 20 } as const;
const FIRST_LOCK_MS = 1_000;
const MAX_LOCK_MS = 15 * 60_000;
/** A subject's count starts again after this long without a failure. */
const FORGET_AFTER_MS = 24 * 3_600_000;

export type ThrottleSubject = { readonly kind: 'account' | 'address'; readonly value: string };

export function accountSubject(email: string): ThrottleSubject {
  return { kind: 'account', value: email.trim().toLowerCase().slice(0, 320) };
}

/**
 * The second factor's own count: a right password clears the account's count, so codes
 * guessed between sign-ins must count where only a right code clears them.
 */
export function secondFactorSubject(userId: string): ThrottleSubject {
  return { kind: 'account', value: `second-factor:${userId}` };
}

export function addressSubject(ip: string): ThrottleSubject {
  return { kind: 'address', value: ip.slice(0, 100) };
}

function key(subject: ThrottleSubject): string {
  return `${subject.kind}:${subject.value}`;
}

/** The lock that follows the n-th failure: none within the allowance, then 1 s, 2 s, 4 s, … up to 15 min. */
function lockAfter(kind: ThrottleSubject['kind'], failures: number): number {
  const over = failures - FREE_FAILURES[kind];
  if (over <= 0) return 0;
  return Math.min(MAX_LOCK_MS, FIRST_LOCK_MS * 2 ** Math.min(over - 1, 30));
}

/** When the earliest of these subjects may try again, or undefined when none is locked. */
export async function lockedUntil(
  db: Executor<CabinetTables>,
  clock: Clock,
  subjects: readonly ThrottleSubject[],
): Promise<Date | undefined> {
  const rows = await db
    .selectFrom('cabinet_sign_in_failures')
    .select(['locked_until'])
    .where('subject', 'in', subjects.map(key))
    .execute();
  const now = clock.now();
  const locks = rows.map((row) => row.locked_until).filter((until): until is Date => until !== null && until > now);
  return locks.length === 0 ? undefined : new Date(Math.max(...locks.map((until) => until.getTime())));
}

export async function recordFailure(
  db: Executor<CabinetTables>,
  clock: Clock,
  subject: ThrottleSubject,
): Promise<void> {
  const now = clock.now();
  const existing = await db
    .selectFrom('cabinet_sign_in_failures')
    .select(['failures', 'last_failed_at'])
    .where('subject', '=', key(subject))
    .forUpdate()
    .executeTakeFirst();
  const stale = existing && now.getTime() - existing.last_failed_at.getTime() > FORGET_AFTER_MS;
  const failures = existing && !stale ? existing.failures + 1 : 1;
  const lockMs = lockAfter(subject.kind, failures);
  const row = {
    failures,
    last_failed_at: now,
    locked_until: lockMs > 0 ? new Date(now.getTime() + lockMs) : null,
  };
  await db
    .insertInto('cabinet_sign_in_failures')
    .values({ subject: key(subject), ...row })
    .onConflict((conflict) => conflict.column('subject').doUpdateSet(row))
    .execute();
}

export async function clearFailures(db: Executor<CabinetTables>, subject: ThrottleSubject): Promise<void> {
  await db.deleteFrom('cabinet_sign_in_failures').where('subject', '=', key(subject)).execute();
}

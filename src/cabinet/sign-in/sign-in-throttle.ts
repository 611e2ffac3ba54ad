// Brute force, slowed: failed sign-ins are counted per account (the email as typed,
// whether or not it exists) and per client address. Past a free allowance each
// further failure locks that subject for twice as long as the last, up to a cap;
// while locked, a sign-in is refused without checking the password. A success
// clears the account's count (not the address's: one good password does not buy
// an address more guesses at other accounts). Each attempt is counted before it
// is checked (beginAttempt), so parallel guesses cannot slip past the lock.
import type { Clock } from '../../clock.ts';
import { inTransaction, type Db, type Executor } from '../../db/transaction.ts';
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

/**
 * Counts one attempt against every subject before the attempt is checked, or
 * refuses it: the time the latest lock ends when any subject is locked (nothing
 * is counted then). The subjects' rows are locked while this decides, so
 * attempts sent in parallel are counted one after another and each sees the
 * count and the lock its predecessors left: a burst cannot all pass the check
 * before the first failure lands. A right attempt gives its count back
 * (`attemptSucceeded`).
 */
export async function beginAttempt(
  db: Db,
  clock: Clock,
  subjects: readonly ThrottleSubject[],
): Promise<Date | undefined> {
  const kinds = new Map(subjects.map((subject) => [key(subject), subject.kind]));
  // One order for every caller, so two attempts on overlapping subjects never wait on each other in a circle.
  const keys = [...kinds.keys()].sort();
  return inTransaction(db, async (tx) => {
    const now = clock.now();
    await tx
      .insertInto('cabinet_sign_in_failures')
      .values(keys.map((subject) => ({ subject, failures: 0, last_failed_at: now, locked_until: null })))
      .onConflict((conflict) => conflict.column('subject').doNothing())
      .execute();
    const rows = await tx
      .selectFrom('cabinet_sign_in_failures')
      .selectAll()
      .where('subject', 'in', keys)
      .orderBy('subject')
      .forUpdate()
      .execute();
    const locks = rows.map((row) => row.locked_until).filter((until): until is Date => until !== null && until > now);
    if (locks.length > 0) return new Date(Math.max(...locks.map((until) => until.getTime())));
    for (const row of rows) {
      const stale = now.getTime() - row.last_failed_at.getTime() > FORGET_AFTER_MS;
      const failures = stale ? 1 : row.failures + 1;
      const lockMs = lockAfter(kinds.get(row.subject)!, failures);
      await tx
        .updateTable('cabinet_sign_in_failures')
        .set({ failures, last_failed_at: now, locked_until: lockMs > 0 ? new Date(now.getTime() + lockMs) : null })
        .where('subject', '=', row.subject)
        .execute();
    }
    return undefined;
  });
}

/**
 * The attempt `beginAttempt` counted was right: the first subject's count is
 * cleared (the account, or its second factor); the others (the address) get
 * the one attempt back, so signing in right does not use up an address's
 * allowance, nor buy it more guesses.
 */
export async function attemptSucceeded(
  tx: Executor<CabinetTables>,
  subjects: readonly ThrottleSubject[],
): Promise<void> {
  const [first, ...others] = subjects;
  if (first) await clearFailures(tx, first);
  for (const subject of others) {
    const row = await tx
      .selectFrom('cabinet_sign_in_failures')
      .select(['failures'])
      .where('subject', '=', key(subject))
      .forUpdate()
      .executeTakeFirst();
    if (!row) continue;
    const failures = Math.max(row.failures - 1, 0);
    await tx
      .updateTable('cabinet_sign_in_failures')
      // Back within the allowance, the lock this attempt set goes; past it, the lock stands.
      .set(lockAfter(subject.kind, failures) === 0 ? { failures, locked_until: null } : { failures })
      .where('subject', '=', key(subject))
      .execute();
  }
}

export async function clearFailures(db: Executor<CabinetTables>, subject: ThrottleSubject): Promise<void> {
  await db.deleteFrom('cabinet_sign_in_failures').where('subject', '=', key(subject)).execute();
}

// SQL of payment attempts (migration 0007_payment_attempts.sql): one row per
// charge key, written before the acquirer is called.
import type { Insertable, Selectable, Updateable } from 'kysely';
import type { Executor, Tx } from '../db/transaction.ts';
import type { PaymentTables } from './payment-tables.ts';

export type AttemptRow = Selectable<PaymentTables['payment_attempts']>;
type AttemptPatch = Updateable<PaymentTables['payment_attempts']>;

/** Attempts whose outcome is not known yet: the reconciliation worker asks the acquirer about them. */
const UNRESOLVED = ['pending', 'requires_confirmation', 'requires_action'] as const;

/** Inserts the attempt unless its charge key exists; returns the stored row either way. */
export async function insertAttemptOnce(
  tx: Tx<PaymentTables>,
  row: Insertable<PaymentTables['payment_attempts']>,
): Promise<AttemptRow> {
  await tx
    .insertInto('payment_attempts')
    .values(row)
    .onConflict((conflict) => conflict.column('charge_key').doNothing())
    .execute();
  return tx
    .selectFrom('payment_attempts')
    .selectAll()
    .where('charge_key', '=', row.charge_key)
    .executeTakeFirstOrThrow();
}

export async function findAttemptByChargeKey(
  db: Executor<PaymentTables>,
  chargeKey: string,
): Promise<AttemptRow | undefined> {
  return db.selectFrom('payment_attempts').selectAll().where('charge_key', '=', chargeKey).executeTakeFirst();
}

/** A payment's newest attempt: what the payer's page waits on. */
export async function findLatestAttemptOfPayment(
  db: Executor<PaymentTables>,
  paymentId: string,
): Promise<AttemptRow | undefined> {
  return db
    .selectFrom('payment_attempts')
    .selectAll()
    .where('payment_id', '=', paymentId)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(1)
    .executeTakeFirst();
}

/** A payment's attempts, oldest first (a payment has a handful). */
export async function listAttemptsOfPayment(
  db: Executor<PaymentTables>,
  paymentId: string,
  limit: number,
): Promise<AttemptRow[]> {
  return db
    .selectFrom('payment_attempts')
    .selectAll()
    .where('payment_id', '=', paymentId)
    .orderBy('created_at')
    .orderBy('id')
    .limit(limit)
    .execute();
}

export async function lockAttempt(tx: Tx<PaymentTables>, attemptId: string): Promise<AttemptRow | undefined> {
  return tx.selectFrom('payment_attempts').selectAll().where('id', '=', attemptId).forUpdate().executeTakeFirst();
}

export async function updateAttempt(
  tx: Tx<PaymentTables>,
  attemptId: string,
  patch: AttemptPatch,
): Promise<AttemptRow> {
  return tx
    .updateTable('payment_attempts')
    .set(patch)
    .where('id', '=', attemptId)
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** Gives up on an attempt the acquirer never heard of (or the payer never confirmed); guarded on its status. */
export async function abandonAttempt(
  tx: Tx<PaymentTables>,
  attemptId: string,
  at: Date,
): Promise<AttemptRow | undefined> {
  return tx
    .updateTable('payment_attempts')
    .set({ status: 'abandoned', updated_at: at, resolved_at: at })
    .where('id', '=', attemptId)
    .where('status', 'in', UNRESOLVED)
    .returningAll()
    .executeTakeFirst();
}

/** When to ask the acquirer next about an attempt still unknown. */
export async function scheduleAttemptCheck(tx: Tx<PaymentTables>, attemptId: string, at: Date): Promise<void> {
  await tx
    .updateTable('payment_attempts')
    .set({ next_check_at: at })
    .where('id', '=', attemptId)
    .where('status', 'in', UNRESOLVED)
    .execute();
}

/**
 * Takes up to `limit` attempts due for a look-up at the acquirer and moves their
 * next check to `leaseUntil`, so that another worker leaves them alone while the
 * look-up (network I/O, outside any transaction) runs. One statement: no read-then-write.
 */
export async function claimAttemptsToReconcile(
  tx: Tx<PaymentTables>,
  now: Date,
  leaseUntil: Date,
  limit: number,
): Promise<AttemptRow[]> {
  return tx
    .updateTable('payment_attempts')
    .set((eb) => ({ next_check_at: leaseUntil, lookups: eb('lookups', '+', 1) }))
    .where('id', 'in', (eb) =>
      eb
        .selectFrom('payment_attempts')
        .select('id')
        .where('status', 'in', UNRESOLVED)
        .where('next_check_at', '<=', now)
        .orderBy('next_check_at')
        .limit(limit)
        .forUpdate()
        .skipLocked(),
    )
    .returningAll()
    .execute();
}

/** The attempt a connector charged under the acquirer's own id (a notification may name only that). */
export async function findAttemptByProviderReference(
  db: Executor<PaymentTables>,
  connector: string,
  providerReference: string,
): Promise<AttemptRow | undefined> {
  return db
    .selectFrom('payment_attempts')
    .selectAll()
    .where('connector', '=', connector)
    .where('provider_reference', '=', providerReference)
    .orderBy('created_at')
    .limit(1)
    .executeTakeFirst();
}

/** A connector's attempts created in [from, to), oldest first, at most `limit`. */
export async function listAttemptsOfConnector(
  db: Executor<PaymentTables>,
  connector: string,
  range: { readonly from: Date; readonly to: Date },
  limit: number,
): Promise<AttemptRow[]> {
  return db
    .selectFrom('payment_attempts')
    .selectAll()
    .where('connector', '=', connector)
    .where('created_at', '>=', range.from)
    .where('created_at', '<', range.to)
    .orderBy('created_at')
    .limit(limit)
    .execute();
}

/** Captures held in suspense, newest first. */
export async function listSuspenseAttempts(db: Executor<PaymentTables>, limit: number): Promise<AttemptRow[]> {
  return db
    .selectFrom('payment_attempts')
    .selectAll()
    .where('applied_as', '=', 'suspense')
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
    .execute();
}

/** Captures held in suspense whose refund has not completed. */
export async function countUnrefundedSuspense(db: Executor<PaymentTables>): Promise<number> {
  const row = await db
    .selectFrom('payment_attempts')
    .select((eb) => eb.fn.countAll<bigint | number | string>().as('count'))
    .where('applied_as', '=', 'suspense')
    .where((eb) => eb.or([eb('refund_status', 'is', null), eb('refund_status', '<>', 'refunded')]))
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

/** The earliest scheduled look-up of an unresolved attempt after `now`. */
export async function nextCheckAfter(db: Executor<PaymentTables>, now: Date): Promise<Date | undefined> {
  const row = await db
    .selectFrom('payment_attempts')
    .select('next_check_at')
    .where('status', 'in', UNRESOLVED)
    .where('next_check_at', '>', now)
    .orderBy('next_check_at')
    .limit(1)
    .executeTakeFirst();
  return row?.next_check_at;
}

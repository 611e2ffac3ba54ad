// The SQL of the hourly outflow cap (crypto_outflow_signings, migration 0029).
import { sql } from 'kysely';
import type { Executor, Tx } from '../../db/transaction.ts';
import type { OutflowTables } from './outflow-tables.ts';
import type { ChainName, SendingTables } from './sending-tables.ts';

/** The transfers signed after `since` on the chain, with their amounts. */
export async function signingsSince(
  db: Executor<OutflowTables>,
  chain: ChainName,
  since: Date,
): Promise<Map<string, bigint>> {
  const rows = await db
    .selectFrom('crypto_outflow_signings')
    .select(['transfer_id', 'amount'])
    .where('chain', '=', chain)
    .where('signed_at', '>', since)
    .execute();
  return new Map(rows.map((row) => [row.transfer_id, BigInt(row.amount)]));
}

/**
 * Serializes the cap's decision per chain until the transaction ends: two executors (a
 * leader whose lease ran out and its successor) never both spend the same room.
 */
export async function lockChainOutflow(tx: Tx<OutflowTables>, chain: ChainName): Promise<void> {
  await sql`select pg_advisory_xact_lock(hashtext(${`paygate.outflow.${chain}`}))`.execute(tx);
}

/** Records transfers signed now (a re-signed one moves to its latest signing), and forgets what left the window. */
export async function recordSignings(
  tx: Tx<OutflowTables>,
  chain: ChainName,
  rows: readonly { readonly id: string; readonly amount: bigint }[],
  signedAt: Date,
  windowStart: Date,
): Promise<void> {
  await tx
    .deleteFrom('crypto_outflow_signings')
    .where('chain', '=', chain)
    .where('signed_at', '<=', windowStart)
    .execute();
  if (rows.length === 0) return;
  await tx
    .insertInto('crypto_outflow_signings')
    .values(rows.map((row) => ({ transfer_id: row.id, chain, amount: row.amount, signed_at: signedAt })))
    .onConflict((conflict) => conflict.column('transfer_id').doUpdateSet({ signed_at: signedAt }))
    .execute();
}

/** USDT the hot wallet still has to send: its transfers queued or on their way (any purpose). */
export async function openHotWalletUsdt(db: Executor<SendingTables>, chain: ChainName): Promise<bigint> {
  const row = await db
    .selectFrom('crypto_outgoing_transfers')
    .select((eb) => eb.fn.coalesce(eb.fn.sum<bigint>('amount'), sql<bigint>`0::int8`).as('total'))
    .where('chain', '=', chain)
    .where('from_kind', '=', 'hot_wallet')
    .where('asset', '=', 'USDT')
    .where('status', 'in', ['queued', 'submitted'])
    .executeTakeFirstOrThrow();
  return BigInt(row.total);
}

// What the sending module tells the modules that own outgoing transfers (payouts,
// refunds, withdrawals) about them for the accounting export: each transfer's
// on-chain transaction id, once it has one, for a page of ids at once.
import type { Executor } from '../../db/transaction.ts';
import type { SendingTables } from './sending-tables.ts';

export async function outgoingTransactionIds(
  db: Executor<SendingTables>,
  ids: readonly string[],
): Promise<Map<string, string | null>> {
  if (ids.length === 0) return new Map();
  const rows = await db
    .selectFrom('crypto_outgoing_transfers')
    .select(['id', 'tx_id'])
    .where('id', 'in', [...new Set(ids)])
    .execute();
  return new Map(rows.map((row) => [row.id, row.tx_id]));
}

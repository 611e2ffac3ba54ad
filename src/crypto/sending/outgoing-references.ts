// What the sending module tells the modules that own outgoing transfers (payouts,
// refunds, withdrawals) about them for the accounting export: each owner row's
// reference with its transfer's on-chain transaction id, once it has one, for a
// page of rows at once. Each owner reads its own rows; this adds the transactions.
import type { Executor } from '../../db/transaction.ts';
import type { ObjectReference } from '../../ledger/ledger-entries.ts';
import type { SendingTables } from './sending-tables.ts';

/** An owner's row as its references need it: its shop, the merchant's key and its outgoing transfer. */
export interface OutgoingOwnerRow {
  readonly id: string;
  readonly shop_id: string;
  readonly external_id: string | null;
  readonly outgoing_transfer_id: string | null;
}

async function transactionIds(
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

/** Each owner row's reference, keyed by its id, with its transfer's tx hash (null until signed, or without a transfer). */
export async function outgoingOwnerReferences(
  db: Executor<SendingTables>,
  owners: readonly OutgoingOwnerRow[],
): Promise<Map<string, ObjectReference>> {
  const transactions = await transactionIds(
    db,
    owners.flatMap((row) => (row.outgoing_transfer_id === null ? [] : [row.outgoing_transfer_id])),
  );
  return new Map(
    owners.map((row) => [
      row.id,
      {
        shopId: row.shop_id,
        externalRef: row.external_id,
        txHash: row.outgoing_transfer_id === null ? null : (transactions.get(row.outgoing_transfer_id) ?? null),
      },
    ]),
  );
}

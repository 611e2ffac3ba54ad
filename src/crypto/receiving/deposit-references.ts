// What the receiving module tells the accounting export about deposits its
// ledger entries name: the shop, the merchant's key of what was paid into (the
// invoice's external_id or the wallet's client_id) and the transaction, for a
// page of ids at once.
import type { Executor } from '../../db/transaction.ts';
import type { ObjectReference } from '../../ledger/ledger-entries.ts';
import type { CryptoReceivingTables } from './receiving-tables.ts';

export async function depositReferences(
  db: Executor<CryptoReceivingTables>,
  ids: readonly string[],
): Promise<Map<string, ObjectReference>> {
  if (ids.length === 0) return new Map();
  const rows = await db
    .selectFrom('crypto_deposits as d')
    .leftJoin('crypto_invoices as i', 'i.id', 'd.invoice_id')
    .leftJoin('crypto_wallets as w', 'w.id', 'd.wallet_id')
    .select(['d.id', 'd.shop_id', 'd.tx_id', 'i.external_id', 'w.client_id'])
    .where('d.id', 'in', [...new Set(ids)])
    .execute();
  return new Map(
    rows.map((row) => [
      row.id,
      { shopId: row.shop_id, externalRef: row.external_id ?? row.client_id, txHash: row.tx_id },
    ]),
  );
}

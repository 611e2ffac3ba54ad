// What the payments module tells the accounting export about payments its
// ledger entries name: the shop and the merchant's order_id, for a page of ids at once.
import type { Executor } from '../db/transaction.ts';
import type { ObjectReference } from '../ledger/ledger-entries.ts';
import type { PaymentTables } from './payment-tables.ts';

export async function paymentReferences(
  db: Executor<PaymentTables>,
  ids: readonly string[],
): Promise<Map<string, ObjectReference>> {
  if (ids.length === 0) return new Map();
  const rows = await db
    .selectFrom('payments')
    .select(['id', 'shop_id', 'order_id'])
    .where('id', 'in', [...new Set(ids)])
    .execute();
  return new Map(rows.map((row) => [row.id, { shopId: row.shop_id, externalRef: row.order_id, txHash: null }]));
}

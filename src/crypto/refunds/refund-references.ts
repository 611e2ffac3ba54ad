// What the refunds module tells the accounting export about refunds its ledger
// entries name: the shop, the merchant's external_id and the on-chain
// transaction (through the sending module), for a page of ids at once.
import type { Executor } from '../../db/transaction.ts';
import type { ObjectReference } from '../../ledger/ledger-entries.ts';
import { outgoingOwnerReferences } from '../sending/outgoing-references.ts';

export async function refundReferences(db: Executor, ids: readonly string[]): Promise<Map<string, ObjectReference>> {
  if (ids.length === 0) return new Map();
  const rows = await db
    .selectFrom('crypto_refunds')
    .select(['id', 'shop_id', 'external_id', 'outgoing_transfer_id'])
    .where('id', 'in', [...new Set(ids)])
    .execute();
  return outgoingOwnerReferences(db, rows);
}

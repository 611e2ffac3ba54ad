// What the ledger holds about one object (a payment, a deposit, an outgoing
// transfer …): its transfers, oldest first, for the object's timeline in the
// cabinet. The ledger names the object by the reference its transfers carry.
import type { Executor } from '../db/transaction.ts';
import * as repository from './ledger-repository.ts';
import type { LedgerCurrency, TransferStatus } from './ledger-tables.ts';

export interface ObjectTransfer {
  readonly transferId: string;
  readonly type: string;
  readonly currency: LedgerCurrency;
  /** Minor units. */
  readonly amount: bigint;
  readonly status: TransferStatus;
  readonly debitAccountId: string;
  readonly creditAccountId: string;
  readonly createdAt: Date;
}

/** The most transfers an object's timeline shows. */
const TRANSFERS_ABOUT_MAX = 100;

/** The transfers whose reference is (`referenceType`, `referenceId`), oldest first. */
export async function transfersAbout(
  db: Executor,
  referenceType: string,
  referenceId: string,
): Promise<ObjectTransfer[]> {
  const rows = await repository.transfersByReference(db, referenceType, referenceId, TRANSFERS_ABOUT_MAX);
  return rows.map((row) => ({
    transferId: row.id,
    type: row.type,
    currency: row.currency,
    amount: row.amount,
    status: row.status,
    debitAccountId: row.debit_account_id,
    creditAccountId: row.credit_account_id,
    createdAt: row.created_at,
  }));
}

// A merchant's ledger entries in one book, for the accounting export: every
// history entry of each of its accounts (RUB main, RUB payout, USDT main, USDT
// payout), oldest first within the account, read a page at a time by keyset on
// the entry's sequence number. No HTTP here; the cabinet's accounting area
// names each entry's object through the owning modules.
import type { Executor } from '../db/transaction.ts';
import * as repository from './ledger-repository.ts';
import type { AccountKind, LedgerBook, LedgerCurrency, TransferStatus } from './ledger-tables.ts';

export interface LedgerEntry {
  readonly entryId: string;
  readonly transferId: string;
  readonly accountId: string;
  readonly currency: LedgerCurrency;
  readonly accountKind: AccountKind;
  /** The signed change of the account's available balance, minor units (0: an incoming credit announced while pending). */
  readonly amount: bigint;
  readonly balanceAfter: bigint;
  readonly createdAt: Date;
  /** The originating transfer's type: payment, deposit, payout, payout_fee, refund, withdrawal, transfer, reversal. */
  readonly type: string;
  /** The originating transfer's current status; a reservation's is its post's or void's once it has one. */
  readonly status: TransferStatus;
  readonly referenceType: string;
  readonly referenceId: string;
}

export interface EntryRange {
  readonly merchantId: string;
  readonly book: LedgerBook;
  readonly from?: Date | undefined;
  readonly before?: Date | undefined;
}

/** The most entries one page reads. */
const ENTRY_PAGE_MAX = 1000;

/** The merchant's entries in the range, a page (at most `pageSize`) at a time, account by account. */
export async function* ledgerEntryPages(
  db: Executor,
  range: EntryRange,
  pageSize = ENTRY_PAGE_MAX,
): AsyncGenerator<LedgerEntry[]> {
  const limit = Math.min(Math.max(1, pageSize), ENTRY_PAGE_MAX);
  const accounts = await repository.merchantAccountsOfBook(db, range.merchantId, range.book);
  for (const account of accounts) {
    let afterSeq = 0n;
    for (;;) {
      const rows = await repository.listAccountEntries(db, {
        accountId: account.id,
        afterSeq,
        from: range.from,
        before: range.before,
        limit,
      });
      if (rows.length > 0)
        yield rows.map((row) => ({
          entryId: row.id,
          transferId: row.transfer_id,
          accountId: account.id,
          currency: account.currency,
          accountKind: account.kind,
          amount: row.amount,
          balanceAfter: row.balance_after,
          createdAt: row.created_at,
          type: row.type,
          status: row.origin_status === 'pending' ? (row.resolution_status ?? 'pending') : row.origin_status,
          referenceType: row.reference_type,
          referenceId: row.reference_id,
        }));
      if (rows.length < limit) break;
      afterSeq = rows.at(-1)!.seq;
    }
  }
}

/** What the module owning an object tells about it, for an entry that names it: its shop and external keys. */
export interface ObjectReference {
  readonly shopId: string;
  /** The merchant's own key of the object: a payment's order_id, an invoice's or a payout's external_id, a wallet's client_id. */
  readonly externalRef: string | null;
  /** The on-chain transaction, when there is one. */
  readonly txHash: string | null;
}

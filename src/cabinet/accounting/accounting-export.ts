// The accounting export's rows: one per ledger entry of the merchant's accounts
// in the shop's book (src/ledger/ledger-entries.ts), each naming the object it
// belongs to — a payment, a deposit, a payout (its amount and its fees), a
// refund, a withdrawal, a transfer between the merchant's accounts — with that
// object's shop, the merchant's own key of it (order_id, external_id,
// client_id) and the on-chain transaction, so that a bookkeeper can match an
// invoice, its transaction and its fee. The keys are asked of each owning
// module once per page of entries (at most 1000), never once per row.
import type { Db } from '../../db/transaction.ts';
import { ledgerEntryPages, type LedgerEntry, type ObjectReference } from '../../ledger/ledger-entries.ts';
import type { ShopProfile } from '../../merchants/merchant-service.ts';
import { formatMinor } from '../../money/decimal.ts';
import { depositReferences } from '../../crypto/receiving/deposit-references.ts';
import { payoutReferences } from '../../crypto/payouts/payout-references.ts';
import { refundReferences } from '../../crypto/refunds/refund-references.ts';
import { withdrawalReferences } from '../../crypto/withdrawals/withdrawal-references.ts';
import { paymentReferences } from '../../payments/payment-references.ts';
import type { ListingColumn } from '../listings/listing.ts';
import { translator } from '../views/cabinet-language.ts';
import ACCOUNTING_TEXTS from './accounting-texts.json' with { type: 'json' };

export const accountingText = translator(ACCOUNTING_TEXTS);

export interface AccountingRow {
  readonly entry: LedgerEntry;
  /** payment, deposit, payout, refund, withdrawal, transfer (or the ledger's reference type for any other). */
  readonly objectType: string;
  readonly objectId: string;
  readonly reference: ObjectReference | undefined;
}

/** Each object kind's lookup in its owning module, by reference type. */
const LOOKUPS: Readonly<Record<string, (db: Db, ids: readonly string[]) => Promise<Map<string, ObjectReference>>>> = {
  payment: paymentReferences,
  deposit: depositReferences,
  payout: payoutReferences,
  refund: refundReferences,
  withdrawal: withdrawalReferences,
};

/** A transfer between the merchant's accounts names itself by its external_id; a reversal names the ledger transfer it reverses. */
function transferReference(entry: LedgerEntry): ObjectReference | undefined {
  if (entry.referenceType !== 'transfer' || entry.type !== 'transfer') return undefined;
  return { shopId: '', externalRef: entry.referenceId, txHash: null };
}

async function withObjects(db: Db, entries: readonly LedgerEntry[]): Promise<AccountingRow[]> {
  const found = new Map<string, Map<string, ObjectReference>>();
  for (const [type, lookup] of Object.entries(LOOKUPS)) {
    const ids = entries.filter((entry) => entry.referenceType === type).map((entry) => entry.referenceId);
    if (ids.length > 0) found.set(type, await lookup(db, ids));
  }
  return entries.map((entry) => ({
    entry,
    objectType: entry.referenceType,
    objectId: entry.referenceId,
    reference: found.get(entry.referenceType)?.get(entry.referenceId) ?? transferReference(entry),
  }));
}

/** Every entry of the merchant's accounts in the shop's book within [from, before), account by account, oldest first, a page at a time. */
export async function* accountingPages(
  db: Db,
  shop: ShopProfile,
  range: { readonly from?: Date | undefined; readonly before?: Date | undefined },
): AsyncGenerator<readonly AccountingRow[]> {
  const pages = ledgerEntryPages(db, { merchantId: shop.merchantId, book: shop.mode, ...range });
  for await (const page of pages) yield await withObjects(db, page);
}

const money = (minor: bigint, row: AccountingRow) => formatMinor(minor, row.entry.currency);

type Column = ListingColumn<AccountingRow> & { readonly describe: (lang: 'ru' | 'en') => string };

function column(
  key: Parameters<typeof accountingText>[1] & `column_${string}`,
  text: (row: AccountingRow) => string,
  amount = false,
): Column {
  const name = key.slice('column_'.length);
  return {
    key: name,
    label: (lang) => accountingText(lang, key),
    describe: (lang) => accountingText(lang, `${key}_about` as Parameters<typeof accountingText>[1]),
    text,
    amount,
  };
}

/** The export's columns, in file order. */
export const ACCOUNTING_COLUMNS: readonly Column[] = [
  column('column_created_at', (row) => row.entry.createdAt.toISOString()),
  column('column_entry_id', (row) => row.entry.entryId),
  column('column_transfer_id', (row) => row.entry.transferId),
  column('column_account_id', (row) => row.entry.accountId),
  column('column_currency', (row) => row.entry.currency),
  column('column_account_kind', (row) => row.entry.accountKind),
  column('column_debit', (row) => (row.entry.amount < 0n ? money(-row.entry.amount, row) : ''), true),
  column('column_credit', (row) => (row.entry.amount >= 0n ? money(row.entry.amount, row) : ''), true),
  column('column_amount', (row) => money(row.entry.amount, row), true),
  column('column_balance_after', (row) => money(row.entry.balanceAfter, row), true),
  column('column_operation_type', (row) => row.entry.type),
  column('column_status', (row) => row.entry.status),
  column('column_object_type', (row) => row.objectType),
  column('column_object_id', (row) => row.objectId),
  column('column_shop_id', (row) => row.reference?.shopId ?? ''),
  column('column_external_ref', (row) => row.reference?.externalRef ?? ''),
  column('column_tx_hash', (row) => row.reference?.txHash ?? ''),
];

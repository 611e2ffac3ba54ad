// The ledger operations of the shop's book as a cabinet table: the merchant's
// accounts in the book of the shop's mode, as GET /v1/crypto/balance/operations
// lists them (newest first, its own `op:` cursor). The table's status filter is
// the operation type; days narrow by when the entry was written. There is no
// amount filter (the rows are RUB and USDT) and no search. Each row links to the
// page of the object it moved money for, when that object has one.
import { listMerchantOperations, OPERATION_TYPES, type OperationView } from '../../ledger/balance-service.ts';
import { InvalidRequestError } from '../../errors.ts';
import type { CabinetDeps } from '../cabinet-context.ts';
import type { Listing } from '../listings/listing.ts';
import { html } from '../views/html.ts';
import { translator } from '../views/cabinet-language.ts';
import OPERATION_TEXTS from './operation-texts.json' with { type: 'json' };

const text = translator(OPERATION_TEXTS);

/** The cabinet page of each kind of object a ledger reference names (built by their areas at these paths). */
const OBJECT_PAGES: Readonly<Record<string, string>> = {
  payment: 'payments',
  deposit: 'deposits',
  payout: 'payouts',
  refund: 'refunds',
  withdrawal: 'withdrawals',
};

/** The path under the shop of the object an operation is about, when it has a page. */
function objectPathOf(reference: OperationView['reference']): string | undefined {
  const page = OBJECT_PAGES[reference.type];
  return page && `${page}/${encodeURIComponent(reference.id)}`;
}

/** An operation as the table holds it: with the shop whose page lists it (its links stay under that shop). */
export interface OperationRow {
  readonly operation: OperationView;
  readonly shopId: string;
}

export function operationListing(deps: CabinetDeps): Listing<OperationRow> {
  return {
    path: 'operations',
    title: (lang) => text(lang, 'operations'),
    permission: 'balances.read',
    statuses: OPERATION_TYPES,
    columns: [
      {
        key: 'operation_id',
        label: (lang) => text(lang, 'operation_id'),
        text: (row) => row.operation.operation_id,
        cell: (row) => html`<code>${row.operation.operation_id}</code>`,
        onPage: false,
      },
      {
        key: 'created_at',
        label: (lang) => text(lang, 'created'),
        text: (row) => row.operation.created_at.slice(0, 19).replace('T', ' '),
      },
      { key: 'type', label: (lang) => text(lang, 'type'), text: (row) => row.operation.type },
      { key: 'amount', label: (lang) => text(lang, 'amount'), text: (row) => row.operation.amount },
      { key: 'currency', label: (lang) => text(lang, 'currency'), text: (row) => row.operation.currency },
      { key: 'status', label: (lang) => text(lang, 'status'), text: (row) => row.operation.status },
      {
        key: 'balance_after',
        label: (lang) => text(lang, 'balance_after'),
        text: (row) => row.operation.balance_after,
      },
      {
        key: 'account_id',
        label: (lang) => text(lang, 'account_id'),
        text: (row) => row.operation.account_id,
        onPage: false,
      },
      {
        key: 'transfer_id',
        label: (lang) => text(lang, 'transfer_id'),
        text: (row) => row.operation.transfer_id,
        onPage: false,
      },
      {
        key: 'reference',
        label: (lang) => text(lang, 'reference'),
        text: (row) => `${row.operation.reference.type}:${row.operation.reference.id}`,
        cell: (row) => {
          const path = objectPathOf(row.operation.reference);
          const label = html`${row.operation.reference.type} <code>${row.operation.reference.id}</code>`;
          return path ? html`<a href=${`/cabinet/shops/${row.shopId}/${path}`}>${label}</a>` : label;
        },
      },
    ],
    read: async (shop, filter, page) => {
      if (filter.search !== undefined) throw new InvalidRequestError('This table has no search.');
      const result = await listMerchantOperations(
        deps,
        { shopId: shop.shopId, merchantId: shop.merchantId, book: shop.mode },
        {
          limit: page.limit,
          cursor: page.cursor,
          type: filter.status,
          from: filter.createdFrom?.toISOString(),
          to: filter.createdBefore?.toISOString(),
        },
      );
      return {
        data: result.data.map((operation) => ({ operation, shopId: shop.shopId })),
        next_cursor: result.next_cursor,
      };
    },
  };
}

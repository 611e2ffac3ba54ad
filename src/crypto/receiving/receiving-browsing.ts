// What the cabinet's tables and detail pages read of crypto receiving: a shop's
// invoices, static wallets and deposits, filtered by status, days, amounts and
// one exact search (ids, external_id, client_id, address, tx hash), newest
// first in keyset pages; an invoice with its deposits; a deposit with how many
// blocks the watcher has seen on top of it. The API's lists stay as they are.
import type { Executor } from '../../db/transaction.ts';
import {
  createdAtOrder,
  parseStatusFilter,
  readListPage,
  type ListOrder,
  type ListPage,
  type ListQuery,
  type ListRange,
} from '../../db/list-page.ts';
import { NotFoundError } from '../../errors.ts';
import type { ChainName } from '../chain/crypto-chain.ts';
import * as repository from './receiving-repository.ts';
import { DEPOSIT_STATUSES, INVOICE_STATUSES, WALLET_STATUSES } from './receiving-tables.ts';

/** The statuses each table filters by. */
export { DEPOSIT_STATUSES, INVOICE_STATUSES, WALLET_STATUSES };
import {
  depositView,
  invoiceView,
  walletView,
  type DepositView,
  type InvoiceView,
  type WalletView,
} from './receiving-views.ts';

interface BrowseDeps {
  readonly db: Executor;
}

/** A table's filter: a status of the object's, the days and amounts, an exact search. */
export interface TableFilter extends ListRange {
  readonly status?: string | undefined;
  readonly search?: string | undefined;
}

/** A deposit as the cabinet shows it: the API's view, its address, and the blocks seen on top of it. */
export interface DepositRecord extends DepositView {
  readonly address: string;
  /** Blocks the watcher has scanned from the deposit's block on (its own included); null before the watcher's cursor reaches it. */
  readonly confirmations: number | null;
}

const ID_LENGTH_MAX = 100;
const isInvoiceId = (id: string) => id.startsWith('inv_') && id.length <= ID_LENGTH_MAX;
const isWalletId = (id: string) => id.startsWith('wal_') && id.length <= ID_LENGTH_MAX;
const isDepositId = (id: string) => id.startsWith('dep_') && id.length <= ID_LENGTH_MAX;

const INVOICE_ORDER = createdAtOrder(isInvoiceId);
const WALLET_ORDER = createdAtOrder(isWalletId);
const DEPOSIT_ORDER: ListOrder<repository.DepositRow> = {
  isListId: isDepositId,
  positionOf: (row) => ({ createdAt: row.seen_at, id: row.id }),
};

function rangeOf(filter: TableFilter): ListRange {
  return {
    createdFrom: filter.createdFrom,
    createdBefore: filter.createdBefore,
    amountMin: filter.amountMin,
    amountMax: filter.amountMax,
  };
}

export async function browseInvoices(
  deps: BrowseDeps,
  shopId: string,
  filter: TableFilter,
  page: ListQuery,
): Promise<ListPage<InvoiceView>> {
  const status = parseStatusFilter(filter.status, INVOICE_STATUSES);
  return readListPage(
    page,
    INVOICE_ORDER,
    (window) =>
      repository.listInvoices(deps.db, { shopId, status, range: rangeOf(filter), search: filter.search, ...window }),
    (rows) => rows.map(invoiceView),
  );
}

export async function browseWallets(
  deps: BrowseDeps,
  shopId: string,
  filter: TableFilter,
  page: ListQuery,
): Promise<ListPage<WalletView>> {
  const status = parseStatusFilter(filter.status, WALLET_STATUSES);
  return readListPage(
    page,
    WALLET_ORDER,
    (window) =>
      repository.listWallets(deps.db, { shopId, status, range: rangeOf(filter), search: filter.search, ...window }),
    async (rows) => {
      const totals = await repository.walletTotals(
        deps.db,
        rows.map((row) => row.id),
      );
      return rows.map((row) => walletView(row, totals.get(row.id)!));
    },
  );
}

export async function browseDeposits(
  deps: BrowseDeps,
  shopId: string,
  filter: TableFilter,
  page: ListQuery,
): Promise<ListPage<DepositRecord>> {
  const status = parseStatusFilter(filter.status, DEPOSIT_STATUSES);
  return readListPage(
    page,
    DEPOSIT_ORDER,
    (window) =>
      repository.listDeposits(deps.db, { shopId, status, range: rangeOf(filter), search: filter.search, ...window }),
    (rows) => depositRecords(deps, rows),
  );
}

async function depositRecords(deps: BrowseDeps, rows: readonly repository.DepositRow[]): Promise<DepositRecord[]> {
  const heads = new Map<ChainName, bigint | undefined>();
  for (const chain of new Set(rows.map((row) => row.chain)))
    heads.set(chain, (await repository.findCursor(deps.db, chain))?.block_number);
  return rows.map((row) => {
    const head = heads.get(row.chain);
    const seen = head === undefined || head < row.block_number ? null : Number(head - row.block_number + 1n);
    return { ...depositView(row), address: row.address, confirmations: seen };
  });
}

/** An invoice of the shop with every deposit to it, oldest first; another shop's or an unknown id is 404. */
export async function invoiceWithDeposits(
  deps: BrowseDeps,
  shopId: string,
  invoiceId: string,
): Promise<{ invoice: InvoiceView; deposits: DepositRecord[] }> {
  const row = isInvoiceId(invoiceId) ? await repository.findInvoiceOfShop(deps.db, shopId, invoiceId) : undefined;
  if (!row) throw new NotFoundError('No such invoice.');
  const deposits = await repository.depositsOfInvoice(deps.db, row.id);
  return { invoice: invoiceView(row), deposits: await depositRecords(deps, deposits) };
}

/** A deposit of the shop; another shop's or an unknown id is 404. */
export async function depositRecordOfShop(deps: BrowseDeps, shopId: string, depositId: string): Promise<DepositRecord> {
  const row = isDepositId(depositId) ? await repository.findDepositOfShop(deps.db, shopId, depositId) : undefined;
  if (!row) throw new NotFoundError('No such deposit.');
  const [record] = await depositRecords(deps, [row]);
  return record!;
}

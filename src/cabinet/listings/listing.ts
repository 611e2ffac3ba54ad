// What a browsable table of the cabinet is: the objects of one kind in one shop
// (payments, invoices, deposits, payouts …), a GET form of filters, keyset pages
// newest first, a link to each object's own page, and a CSV download of the
// filtered rows with a choice of columns. An area describes its table once as a
// Listing; listing-routes.ts serves the page and the download from it.
import type { ListPage, ListQuery, ListRange } from '../../db/list-page.ts';
import { InvalidRequestError } from '../../errors.ts';
import type { ShopProfile } from '../../merchants/merchant-service.ts';
import type { Asset } from '../../money/asset.ts';
import { parseMinor } from '../../money/decimal.ts';
import { isStorableInstant } from '../../clock.ts';
import type { Permission } from '../roles.ts';
import type { Children } from '../views/html.ts';
import type { Lang } from '../views/cabinet-language.ts';

/** The filters every table takes; each list applies those it has. */
export interface ListingFilter extends ListRange {
  readonly status?: string | undefined;
  /** An exact id, order_id, external_id, address or tx hash, as the table's `searchHint` says. */
  readonly search?: string | undefined;
}

export interface ListingColumn<Row> {
  /** The CSV header and the value of the column choice. */
  readonly key: string;
  readonly label: (lang: Lang) => string;
  /** The cell as text: the CSV cell, and the page's cell unless `cell` is given. */
  readonly text: (row: Row) => string;
  /** The page's cell when it is more than text (a badge, a link, code). */
  readonly cell?: (row: Row, lang: Lang) => Children;
  /** Shown on the page (every column is offered in the download); true unless false. */
  readonly onPage?: boolean;
  /** The text is an amount as a plain decimal (`-12.50`): a number cell in XLSX when a number holds it exactly. */
  readonly amount?: boolean;
}

export interface Listing<Row> {
  /** The path under the shop: `payments` serves /cabinet/shops/:shopId/payments and payments.csv. */
  readonly path: string;
  readonly title: (lang: Lang) => string;
  /** Who may open the table; the download needs `exports.create` as well. */
  readonly permission: Permission;
  readonly statuses: readonly string[];
  /** The asset of the amount filter; absent when the table has no amount to filter by. */
  readonly amountAsset?: Asset | undefined;
  /** What the search box finds, as the page tells the person: "payment id or order_id". */
  readonly searchHint?: ((lang: Lang) => string) | undefined;
  readonly columns: ReadonlyArray<ListingColumn<Row>>;
  /** One page of the shop's rows that pass the filter, newest first. */
  read(shop: ShopProfile, filter: ListingFilter, page: ListQuery): Promise<ListPage<Row>>;
  /** The path of a row's own page under the shop (`payments/<id>`), when it has one. */
  readonly detailPath?: ((row: Row) => string) | undefined;
  /** Whether the table applies to a shop of this mode (the sandbox-only tables); all shops unless given. */
  readonly appliesTo?: ((shop: ShopProfile) => boolean) | undefined;
}

/** The filter fields of a table's form, as typed (empty when absent). */
const FILTER_FIELDS = ['status', 'from', 'to', 'amount_min', 'amount_max', 'q'] as const;
type FilterField = (typeof FILTER_FIELDS)[number];
export type FilterValues = Readonly<Record<FilterField, string>>;

const DAY_MS = 86_400_000;
const SEARCH_MAX_LENGTH = 200;

/** The fields of a query string (a repeated field counts once; anything else is empty). */
export function filterValuesOf(query: unknown): FilterValues {
  const fields = (query ?? {}) as Record<string, unknown>;
  const single = (value: unknown): string => (typeof value === 'string' ? value.trim() : '');
  return Object.fromEntries(FILTER_FIELDS.map((field) => [field, single(fields[field])])) as FilterValues;
}

/** A UTC day as its first instant; anything but an existing `YYYY-MM-DD` is refused. */
function parseDay(value: string, field: string): Date {
  const day = new Date(`${value}T00:00:00.000Z`);
  if (!/^\d{4}-\d{2}-\d{2}$/.test(value) || Number.isNaN(day.getTime()) || day.toISOString().slice(0, 10) !== value)
    throw new InvalidRequestError(`${field} must be a day as YYYY-MM-DD.`);
  // The whole day, to its end, must be an instant both databases store.
  if (!isStorableInstant(day) || !isStorableInstant(new Date(day.getTime() + DAY_MS)))
    throw new InvalidRequestError(`${field} must be a day between the years 1 and 9999.`);
  return day;
}

/** Above any amount a row holds (10^15 minor units) and within the databases' 64-bit integers. */
const AMOUNT_FILTER_MAX = 10n ** 15n;

function parseAmount(value: string, field: string, asset: Asset | undefined): bigint | undefined {
  if (value === '') return undefined;
  if (!asset) throw new InvalidRequestError('This table has no amount to filter by.');
  const parsed = parseMinor(value, asset, 'decimal-string');
  if (!parsed.ok) throw new InvalidRequestError(`${field} ${parsed.problem}.`);
  if (parsed.minor > AMOUNT_FILTER_MAX) throw new InvalidRequestError(`${field} is larger than any amount.`);
  return parsed.minor;
}

/** The filter a table's form asks for; InvalidRequestError says what is wrong with it. */
export function parseListingFilter(listing: Pick<Listing<unknown>, 'statuses' | 'amountAsset'>, values: FilterValues) {
  if (values.status !== '' && !listing.statuses.includes(values.status))
    throw new InvalidRequestError(`status must be one of ${listing.statuses.join(', ')}.`);
  if (values.q.length > SEARCH_MAX_LENGTH)
    throw new InvalidRequestError(`The search must be at most ${SEARCH_MAX_LENGTH} characters.`);
  const filter: ListingFilter = {
    status: values.status || undefined,
    search: values.q || undefined,
    createdFrom: values.from === '' ? undefined : parseDay(values.from, 'from'),
    // The whole of the last day: before the next one starts.
    createdBefore: values.to === '' ? undefined : new Date(parseDay(values.to, 'to').getTime() + DAY_MS),
    amountMin: parseAmount(values.amount_min, 'amount_min', listing.amountAsset),
    amountMax: parseAmount(values.amount_max, 'amount_max', listing.amountAsset),
  };
  if (filter.createdFrom && filter.createdBefore && filter.createdFrom >= filter.createdBefore)
    throw new InvalidRequestError('from must not be after to.');
  if (filter.amountMin !== undefined && filter.amountMax !== undefined && filter.amountMin > filter.amountMax)
    throw new InvalidRequestError('amount_min must not be above amount_max.');
  return filter;
}

/** The query string of a filter as typed, with `extra` fields (a cursor, columns); empty fields are left out. */
export function queryOf(values: FilterValues, extra: Readonly<Record<string, string>> = {}): string {
  const params = new URLSearchParams();
  for (const [field, value] of [...Object.entries(values), ...Object.entries(extra)])
    if (value) params.set(field, value);
  const text = params.toString();
  return text ? `?${text}` : '';
}

// A table's rows as CSV (RFC 4180: CRLF line ends; a field with a comma, a quote
// or a line break quoted; quotes doubled), header first. Rows are read a page at
// a time through the table's own keyset pages and each page is written as one
// chunk, so a download of any size holds two pages in memory (the one written and
// the one read ahead). A cell a spreadsheet would run
// as a formula (it starts with = + - @, a tab or a carriage return) gets a
// leading single quote: an order_id or a client_id is the merchant's customer's
// text and must stay text when the file is opened. A plain number ("-12.50", a
// debit) is left as it is, so that the sums still add up in a spreadsheet.
import { Readable } from 'node:stream';
import type { ListPage } from '../../db/list-page.ts';
import { InvalidRequestError } from '../../errors.ts';
import type { ShopProfile } from '../../merchants/merchant-service.ts';
import type { Listing, ListingColumn, ListingFilter } from './listing.ts';

/**
 * Rows per page read for a download: large enough to keep the per-query cost small (1,000 a page
 * exported 64,000 payments/s, 5,000 77,000/s), small enough to stay flat in memory (two pages of
 * payments, the one written and the one read ahead, take about 15 MB).
 */
const EXPORT_PAGE_ROWS = 5000;

/**
 * Every row of the shop that passes the filter, newest first, a page at a time. The next page is
 * asked for before this one is handed on, so the database reads it while this one is written.
 */
export async function* everyPage<Row>(
  listing: Listing<Row>,
  shop: ShopProfile,
  filter: ListingFilter,
): AsyncGenerator<readonly Row[]> {
  const read = (cursor: string | undefined): Promise<ListPage<Row>> =>
    listing.read(shop, filter, { limit: EXPORT_PAGE_ROWS, cursor });
  let next: Promise<ListPage<Row>> | undefined = read(undefined);
  try {
    while (next !== undefined) {
      const page: ListPage<Row> = await next;
      next = page.next_cursor === null ? undefined : read(page.next_cursor);
      yield page.data;
    }
  } finally {
    // The download stopped early (the reader went away, or a write failed): the page read ahead is
    // dropped, and its failure, if any, is nobody's to report.
    next?.catch(() => undefined);
  }
}

/** The columns a download asks for (`columns`, repeated or comma-separated); none named: all. Unknown names are refused. */
export function chosenColumns<Row>(listing: Listing<Row>, asked: unknown): ReadonlyArray<ListingColumn<Row>> {
  const names = (Array.isArray(asked) ? asked : [asked])
    .filter((name): name is string => typeof name === 'string')
    .flatMap((name) => name.split(','))
    .map((name) => name.trim())
    .filter((name) => name !== '');
  if (names.length === 0) return listing.columns;
  const unknown = names.filter((name) => !listing.columns.some((column) => column.key === name));
  if (unknown.length > 0)
    throw new InvalidRequestError(
      `Unknown column ${unknown.slice(0, 3).join(', ')}; the columns are ${listing.columns.map((column) => column.key).join(', ')}.`,
    );
  // The table's own order, each once.
  return listing.columns.filter((column) => names.includes(column.key));
}

const FORMULA_START = /^[=+\-@\t\r]/;
const PLAIN_NUMBER = /^-?\d+(?:\.\d+)?$/;

/** The cell as a spreadsheet must show it: as text, never as a formula. */
export function formulaSafe(cell: string): string {
  return FORMULA_START.test(cell) && !PLAIN_NUMBER.test(cell) ? `'${cell}` : cell;
}

const NEEDS_QUOTES = /[",\r\n]/;

/** A field as RFC 4180 writes it: quoted, its quotes doubled, when it holds a comma, a quote, a CR or an LF. */
function csvField(text: string): string {
  return NEEDS_QUOTES.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

/** A page of rows as CSV records, each ending in CRLF. */
function csvRecords<Row>(columns: ReadonlyArray<ListingColumn<Row>>, rows: readonly Row[]): string {
  let records = '';
  for (const row of rows) {
    for (let index = 0; index < columns.length; index++) {
      if (index > 0) records += ',';
      records += csvField(formulaSafe(columns[index]!.text(row)));
    }
    records += '\r\n';
  }
  return records;
}

/**
 * The pages of rows as a CSV byte stream, one chunk per page; a failed read ends the stream with the
 * error (the download breaks off). A page is written at once, without csv-stringify: at a million rows
 * its per-field work and one stream chunk and one await per record cost more than reading the rows.
 */
export function listingCsv<Row>(
  columns: ReadonlyArray<ListingColumn<Row>>,
  pages: AsyncIterable<readonly Row[]>,
): Readable {
  async function* chunks(): AsyncGenerator<string> {
    // The header waits for the first page: a read refused before any byte is sent still answers with its own status.
    let chunk = columns.map((column) => csvField(column.key)).join(',') + '\r\n';
    for await (const page of pages) {
      chunk += csvRecords(columns, page);
      if (chunk !== '') yield chunk;
      chunk = '';
    }
    if (chunk !== '') yield chunk;
  }
  return Readable.from(chunks(), { objectMode: false });
}

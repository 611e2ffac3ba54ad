// A table's rows as CSV (RFC 4180: CRLF line ends; a field with a comma, a quote
// or a line break quoted; quotes doubled), header first. Rows are read a page at
// a time through the table's own keyset pages and written as they come, so a
// download of any size holds one page in memory. A cell a spreadsheet would run
// as a formula (it starts with = + - @, a tab or a carriage return) gets a
// leading single quote: an order_id or a client_id is the merchant's customer's
// text and must stay text when the file is opened. A plain number ("-12.50", a
// debit) is left as it is, so that the sums still add up in a spreadsheet.
import { Readable } from 'node:stream';
import { InvalidRequestError } from '../../errors.ts';
import type { ShopProfile } from '../../merchants/merchant-service.ts';
import type { Listing, ListingColumn, ListingFilter } from './listing.ts';

/** Rows per page read for a download: large enough to keep the per-query cost small, small enough to stay flat in memory. */
const EXPORT_PAGE_ROWS = 1000;

/** Every row of the shop that passes the filter, newest first, read a page at a time. */
export async function* everyRow<Row>(
  listing: Listing<Row>,
  shop: ShopProfile,
  filter: ListingFilter,
): AsyncGenerator<Row> {
  let cursor: string | undefined;
  do {
    const page = await listing.read(shop, filter, { limit: EXPORT_PAGE_ROWS, cursor });
    yield* page.data;
    cursor = page.next_cursor ?? undefined;
  } while (cursor !== undefined);
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
export function csvField(text: string): string {
  return NEEDS_QUOTES.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

/** Characters gathered before a write: one chunk of about 64 KB instead of a stream chunk per row. */
const CHUNK_CHARS = 65_536;

/**
 * The rows as a CSV byte stream; a failed read ends the stream with the error (the download breaks off).
 * Each record is joined here rather than by csv-stringify: at a million rows its per-field work and
 * one stream chunk per record cost more than reading and formatting the rows.
 */
export function listingCsv<Row>(columns: ReadonlyArray<ListingColumn<Row>>, rows: AsyncIterable<Row>): Readable {
  async function* chunks(): AsyncGenerator<string> {
    let chunk = columns.map((column) => csvField(column.key)).join(',') + '\r\n';
    for await (const row of rows) {
      let record = '';
      for (let index = 0; index < columns.length; index++) {
        if (index > 0) record += ',';
        record += csvField(formulaSafe(columns[index]!.text(row)));
      }
      chunk += record + '\r\n';
      if (chunk.length >= CHUNK_CHARS) {
        yield chunk;
        chunk = '';
      }
    }
    yield chunk;
  }
  return Readable.from(chunks(), { objectMode: false });
}

// A table's rows as an XLSX workbook (one sheet, a header row first), written
// as the rows come: @cj-tech-master/excelts's streaming WorkbookWriter puts each
// committed row into the zip stream at once and keeps no rows, without shared
// strings (a shared-string table would grow with the file) and without styles.
// The writer is paused whenever the response is not being read fast enough
// (its buffer is full), so a download of any size holds a page of rows (two for a
// table's download, which reads the next page ahead) and a few buffers in memory
// (docs/cabinet.md, "Exports").
//
// Every cell is a string cell except an amount column's plain decimal that a
// number holds exactly; a string cell is never a formula, whatever it starts
// with, so no quote is put before `=`, `+`, `-` or `@` here (the CSV needs one).
// Characters XML cannot carry (control characters but tab and line breaks, lone
// surrogates) are left out by the writer.
import { PassThrough, type Readable } from 'node:stream';
import { WorkbookWriter } from '@cj-tech-master/excelts';
import type { ListingColumn } from './listing.ts';

/** Rows written between two looks at the response's buffer. */
const ROWS_BETWEEN_DRAIN_CHECKS = 100;

const PLAIN_DECIMAL = /^-?\d+(?:\.\d+)?$/;
/** Excel shows and keeps 15 significant digits; a longer amount stays text. */
const MAX_EXACT_DIGITS = 15;

/** A decimal's digits without a sign, leading zeros, trailing fraction zeros or a bare point: `-012.50` → `12.5`. */
function canonicalDecimal(text: string): string {
  const unsigned = text.startsWith('-') ? text.slice(1) : text;
  const [whole = '', fraction = ''] = unsigned.split('.');
  const trimmedFraction = fraction.replace(/0+$/, '');
  const trimmedWhole = whole.replace(/^0+(?=\d)/, '');
  const digits = trimmedFraction === '' ? trimmedWhole : `${trimmedWhole}.${trimmedFraction}`;
  const negative = text.startsWith('-') && digits !== '0';
  return negative ? `-${digits}` : digits;
}

/**
 * The number an amount's text is, when a spreadsheet number holds that decimal exactly
 * (at most 15 significant digits, and the number's own shortest text is the same decimal);
 * otherwise undefined and the cell stays text.
 */
function exactNumber(text: string): number | undefined {
  if (!PLAIN_DECIMAL.test(text)) return undefined;
  const canonical = canonicalDecimal(text);
  const significant = canonical.replace(/^-/, '').replace('.', '').replace(/^0+/, '');
  if (significant.length > MAX_EXACT_DIGITS) return undefined;
  const value = Number(text);
  return canonicalDecimal(String(value)) === canonical ? value : undefined;
}

/** Until the stream's buffer has room again, or the stream is gone. */
function drainedOrClosed(out: PassThrough): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      out.off('drain', done);
      out.off('close', done);
      resolve();
    };
    out.on('drain', done);
    out.on('close', done);
  });
}

function cellOf<Row>(column: ListingColumn<Row>, row: Row): string | number {
  const text = column.text(row);
  if (column.amount !== true) return text;
  return exactNumber(text) ?? text;
}

/** The rows as an XLSX byte stream; a failed read ends the stream with the error (the download breaks off). */
export function listingXlsx<Row>(
  columns: ReadonlyArray<ListingColumn<Row>>,
  pages: AsyncIterable<readonly Row[]>,
  sheetName: string,
): Readable {
  const out = new PassThrough();
  const workbook = new WorkbookWriter({ stream: out, useSharedStrings: false, useStyles: false, trueStreaming: true });
  const sheet = workbook.addWorksheet(sheetName.slice(0, 31));
  async function write(): Promise<void> {
    sheet.addRow(columns.map((column) => column.key)).commit();
    let written = 0;
    for await (const page of pages)
      for (const row of page) {
        // The reader went away (the download was cancelled): stop reading pages.
        if (out.destroyed) return;
        sheet.addRow(columns.map((column) => cellOf(column, row))).commit();
        written += 1;
        if (written % ROWS_BETWEEN_DRAIN_CHECKS === 0 && out.writableNeedDrain) await drainedOrClosed(out);
      }
    sheet.commit();
    await workbook.commit();
  }
  write().catch((error: unknown) => {
    out.destroy(error instanceof Error ? error : new Error(String(error)));
  });
  return out;
}

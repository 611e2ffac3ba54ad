// How a download is sent, in either format: a table's export (listing-routes.ts)
// and the accounting export (accounting/) both stream their rows through here.
import type { FastifyReply } from 'fastify';
import type { Readable } from 'node:stream';
import type { ListingColumn } from './listing.ts';
import { listingCsv } from './listing-csv.ts';
import { listingXlsx } from './listing-xlsx.ts';

export const DOWNLOAD_FORMATS = ['csv', 'xlsx'] as const;
export type DownloadFormat = (typeof DOWNLOAD_FORMATS)[number];

const CONTENT_TYPES: Readonly<Record<DownloadFormat, string>> = {
  csv: 'text/csv; charset=utf-8',
  xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
};

export interface Download<Row> {
  readonly format: DownloadFormat;
  /** The file's name without its extension: `payments-shp_…-2026-11-28`. */
  readonly name: string;
  /** The XLSX sheet's name (at most 31 characters are kept). */
  readonly sheetName: string;
  readonly columns: ReadonlyArray<ListingColumn<Row>>;
  /** The rows a page at a time (a page is formatted at once). */
  readonly pages: AsyncIterable<readonly Row[]>;
}

function bodyOf<Row>(download: Download<Row>): Readable {
  return download.format === 'csv'
    ? listingCsv(download.columns, download.pages)
    : listingXlsx(download.columns, download.pages, download.sheetName);
}

/** Streams the rows as a file download. */
export function sendDownload<Row>(reply: FastifyReply, download: Download<Row>): FastifyReply {
  return reply
    .header('content-type', CONTENT_TYPES[download.format])
    .header('content-disposition', `attachment; filename="${download.name}.${download.format}"`)
    .send(bodyOf(download));
}

// The audit log as CSV (RFC 4180: CRLF line ends, fields with a comma, a quote
// or a line break quoted, quotes doubled), with a header row. A cell that a
// spreadsheet would run as a formula (it starts with = + - @, a tab or a carriage
// return) gets a leading single quote: an actor label or a user agent is typed
// by whoever signs in, and must stay text when the file is opened.
import { pipeline, Readable } from 'node:stream';
import { stringify } from 'csv-stringify';
import type { AuditEventRow } from './audit-repository.ts';

const COLUMNS: ReadonlyArray<{ readonly header: string; readonly value: (row: AuditEventRow) => string }> = [
  { header: 'time_utc', value: (row) => row.created_at.toISOString() },
  { header: 'actor_kind', value: (row) => row.actor_kind },
  { header: 'actor_id', value: (row) => row.actor_id ?? '' },
  { header: 'actor_label', value: (row) => row.actor_label },
  { header: 'action', value: (row) => row.action },
  { header: 'shop_id', value: (row) => row.shop_id ?? '' },
  { header: 'target', value: (row) => row.target ?? '' },
  { header: 'ip', value: (row) => row.ip },
  { header: 'user_agent', value: (row) => row.user_agent },
  { header: 'details', value: (row) => JSON.stringify(row.details) },
  { header: 'event_id', value: (row) => row.id },
];

async function* records(events: AsyncIterable<AuditEventRow>): AsyncGenerator<string[]> {
  for await (const event of events) yield COLUMNS.map((column) => column.value(event));
}

/** The events as a CSV byte stream; a failed read ends the stream with the error (the download breaks off). */
export function auditCsv(events: AsyncIterable<AuditEventRow>): Readable {
  const csv = stringify({
    header: true,
    columns: COLUMNS.map((column) => column.header),
    record_delimiter: 'windows',
    // With CRLF records the package quotes a field holding CRLF, not a lone LF or CR; RFC 4180 wants both quoted.
    quoted_match: /[\r\n]/,
    escape_formulas: true,
  });
  return pipeline(Readable.from(records(events)), csv, () => {
    // An error has already destroyed `csv`, which the reader of the stream sees.
  });
}

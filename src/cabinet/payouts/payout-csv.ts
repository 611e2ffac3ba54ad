// A batch payout file as a person uploads it: UTF-8 CSV (RFC 4180, csv-parse),
// the header row `external_id,amount,address`, then 1 to 500 payout rows. What
// is wrong with the file as a whole refuses it; a row with the wrong number of
// fields is a row problem; the values themselves are the payouts module's to
// judge (batch-service.ts reviewBatch). Pure: nothing here reads or writes.
import { parse } from 'csv-parse/sync';
import { BATCH_ITEMS_MAX } from '../../crypto/payouts/batch-service.ts';

export const BATCH_FILE_BYTES_MAX = 128 * 1024;
const HEADER = ['external_id', 'amount', 'address'] as const;

export interface BatchFileRow {
  /** The file's line the row ends on (the header is line 1). */
  readonly line: number;
  readonly external_id: string;
  readonly amount: string;
  readonly address: string;
}

export interface RowProblem {
  readonly line: number;
  readonly field: string;
  readonly message: string;
}

export type BatchFileReading =
  | {
      readonly kind: 'refused';
      readonly reason: 'not_utf8' | 'bad_header' | 'too_many_rows' | 'no_rows' | 'bad_csv' | 'too_large';
      readonly detail?: string;
    }
  | { readonly kind: 'read'; readonly rows: readonly BatchFileRow[]; readonly problems: readonly RowProblem[] };

function utf8Text(bytes: Uint8Array): string | undefined {
  try {
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(bytes);
  } catch {
    return undefined;
  }
}

export function readBatchFile(bytes: Uint8Array): BatchFileReading {
  if (bytes.length > BATCH_FILE_BYTES_MAX) return { kind: 'refused', reason: 'too_large' };
  const text = utf8Text(bytes);
  if (text === undefined) return { kind: 'refused', reason: 'not_utf8' };
  const lines: number[] = [];
  let records: string[][];
  try {
    records = parse(text, {
      bom: true,
      skip_empty_lines: true,
      relax_column_count: true,
      // The header and one row more than allowed: enough to refuse a longer file without reading it all.
      to: BATCH_ITEMS_MAX + 2,
      on_record: (record: string[], context) => {
        lines.push(context.lines);
        return record;
      },
    });
  } catch (error) {
    return { kind: 'refused', reason: 'bad_csv', detail: error instanceof Error ? error.message : String(error) };
  }
  const [header, ...body] = records.map((record, index) => ({ record, line: lines[index] ?? index + 1 }));
  if (!header || header.record.length !== HEADER.length || HEADER.some((name, i) => header.record[i]?.trim() !== name))
    return { kind: 'refused', reason: 'bad_header' };
  if (body.length === 0) return { kind: 'refused', reason: 'no_rows' };
  if (body.length > BATCH_ITEMS_MAX) return { kind: 'refused', reason: 'too_many_rows' };
  const problems: RowProblem[] = [];
  const rows = body.map(({ record, line }) => {
    if (record.length !== HEADER.length) problems.push({ line, field: '', message: 'wrong_columns' });
    return { line, external_id: record[0] ?? '', amount: record[1] ?? '', address: record[2] ?? '' };
  });
  return { kind: 'read', rows, problems };
}

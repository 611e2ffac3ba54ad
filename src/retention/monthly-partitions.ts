// A table partitioned by month of created_at (migration 0047's
// create_month_partition): partitions are made three months ahead, and a month
// past retention is archived and its partition detached and dropped whole,
// which deletes no rows and leaves nothing for vacuum.
import { sql } from 'kysely';
import type { Db } from '../db/transaction.ts';
import { RetentionRowsChangedError, type RetentionSource, type RetentionUnit } from './retention-source.ts';

/** Months made ahead of the current one. */
const MONTHS_AHEAD = 3;
/** Rows read per page while archiving. */
const PAGE_ROWS = 5_000;

interface MonthPartition {
  readonly name: string;
  /** Months since year 0 (year × 12 + month − 1), UTC. */
  readonly monthIndex: number;
}

function monthIndexOf(at: Date): number {
  return at.getUTCFullYear() * 12 + at.getUTCMonth();
}

function periodOf(monthIndex: number): string {
  return `${String(Math.floor(monthIndex / 12)).padStart(4, '0')}-${String((monthIndex % 12) + 1).padStart(2, '0')}`;
}

/**
 * `table` kept `monthsKept` whole months after the month a row was written (undefined: forever): the
 * partition of month M goes once M + monthsKept has ended, so a row is kept at least that long.
 */
export function monthlyPartitionSource(table: string, monthsKept: number | undefined): RetentionSource {
  const pattern = new RegExp(`^${table}_p(\\d{4})(\\d{2})$`);

  async function partitions(db: Db): Promise<MonthPartition[]> {
    const result = await sql<{ name: string }>`
      select c.relname as name from pg_inherits i join pg_class c on c.oid = i.inhrelid
       where i.inhparent = to_regclass(${table})`.execute(db);
    return result.rows
      .flatMap((row) => {
        const match = pattern.exec(row.name);
        return match ? [{ name: row.name, monthIndex: Number(match[1]) * 12 + Number(match[2]) - 1 }] : [];
      })
      .sort((a, b) => a.monthIndex - b.monthIndex);
  }

  function unitOf(db: Db, partition: MonthPartition): RetentionUnit {
    return {
      period: periodOf(partition.monthIndex),
      label: '',
      parts: [{ table, lines: () => partitionLines(db, partition.name) }],
      async remove(tx, archivedCounts) {
        // Writers into the partition wait from here; none are expected in a month long past.
        await sql`lock table ${sql.table(partition.name)} in share mode`.execute(tx);
        const count = await sql<{
          count: string;
        }>`select count(*)::text as count from ${sql.table(partition.name)}`.execute(tx);
        const found = Number(count.rows[0]?.count ?? 0);
        const archived = archivedCounts.get(table) ?? -1;
        if (found !== archived) throw new RetentionRowsChangedError(partition.name, archived, found);
        await sql`alter table ${sql.table(table)} detach partition ${sql.table(partition.name)}`.execute(tx);
        await sql`drop table ${sql.table(partition.name)}`.execute(tx);
      },
    };
  }

  return {
    name: table,
    kept: monthsKept === undefined ? undefined : `${monthsKept} months`,
    async prepare(db, now) {
      const current = monthIndexOf(now);
      for (let month = current; month <= current + MONTHS_AHEAD; month++) {
        await sql`select create_month_partition(${table}, ${`${periodOf(month)}-01`}::date)`.execute(db);
      }
    },
    async nextUnit(db, now) {
      if (monthsKept === undefined) return undefined;
      const oldest = (await partitions(db))[0];
      if (oldest === undefined || oldest.monthIndex + monthsKept >= monthIndexOf(now)) return undefined;
      return unitOf(db, oldest);
    },
    async describe(db) {
      const months = (await partitions(db)).map((partition) => periodOf(partition.monthIndex));
      if (months.length === 0) return 'no monthly partitions';
      return `${months.length} monthly partitions, ${months[0]} to ${months[months.length - 1]}`;
    },
  };
}

/** The partition's rows in (created_at, id) order, a page at a time (keyset on the exact text of created_at). */
async function* partitionLines(db: Db, partition: string): AsyncIterable<readonly string[]> {
  let after: { at: string; id: string } | undefined;
  for (;;) {
    const from = after ? sql`where (t.created_at, t.id) > (${after.at}::timestamptz, ${after.id})` : sql``;
    const page = await sql<{ line: string; at: string; id: string }>`
      select row_to_json(t)::text as line, t.created_at::text as at, t.id
        from ${sql.table(partition)} t ${from}
       order by t.created_at, t.id
       limit ${PAGE_ROWS}`.execute(db);
    yield page.rows.map((row) => row.line);
    const last = page.rows[page.rows.length - 1];
    if (last === undefined || page.rows.length < PAGE_ROWS) return;
    after = { at: last.at, id: last.id };
  }
}

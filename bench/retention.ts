// What ageing out a month costs, with and without monthly partitions: the
// audit log's shape (migration 0046) filled with ROWS rows over four months,
// then the oldest month removed by DELETE from a plain table, or by detaching
// and dropping its partition. Prints sizes, the removal's time, the dead rows
// it leaves and the VACUUM that clears them. On the benchmark's PostgreSQL
// server (BENCH_DATABASE_URL), in a database of its own, dropped at the end.
//   node bench/retention.ts [ROWS]   (default 2,000,000)
import pg from 'pg';
import { createBenchDatabase } from './bench-database.ts';

const ROWS = Number(process.argv[2] ?? 2_000_000);
const MONTHS = 4;

const COLUMNS = `
  id text not null, merchant_id text, shop_id text, actor_kind text not null, actor_id text,
  actor_label text not null default '', action text not null, target text, ip text not null default '',
  user_agent text not null default '', details jsonb not null default '{}'::jsonb, created_at timestamptz not null`;

// Rows spread evenly over MONTHS months from 2026-01-01, ids time-ordered like TypeIDs.
const FILL = (table: string) => `
  insert into ${table} (id, merchant_id, actor_kind, actor_id, actor_label, action, target, ip, user_agent, details, created_at)
  select 'aud_' || lpad(n::text, 12, '0'), 'mer_' || (n % 500), 'user', 'user_' || (n % 2000), 'person' || (n % 2000) || '@example.test',
         'payment.created', 'pay_' || n, '203.0.113.' || (n % 250), 'Mozilla/5.0 (X11; Linux x86_64)',
         jsonb_build_object('amount', n % 100000, 'currency', 'RUB'),
         timestamptz '2026-01-01 00:00:00+00' + (n::float8 / ${ROWS} * interval '${MONTHS * 30} days')
    from generate_series(1, ${ROWS}) n`;

const INDEXES = (table: string) => `
  create index ${table}_merchant_created_idx on ${table} (merchant_id, created_at desc, id desc);
  create index ${table}_actor_idx on ${table} (actor_id, created_at desc) where actor_id is not null`;

async function timed<T>(work: () => Promise<T>): Promise<{ ms: number; result: T }> {
  const started = process.hrtime.bigint();
  const result = await work();
  return { ms: Number(process.hrtime.bigint() - started) / 1e6, result };
}

const megabytes = (bytes: string | number) => `${(Number(bytes) / 1024 / 1024).toFixed(1)} MB`;

async function main(): Promise<void> {
  const database = await createBenchDatabase('retention');
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  try {
    await client.query(`create table audit_flat (${COLUMNS}, primary key (id))`);
    await client.query(
      `create table audit_part (${COLUMNS}, primary key (id, created_at)) partition by range (created_at)`,
    );
    for (let month = 1; month <= MONTHS + 1; month++) {
      const from = `2026-${String(month).padStart(2, '0')}-01 00:00:00+00`;
      const to = month === 12 ? '2027-01-01 00:00:00+00' : `2026-${String(month + 1).padStart(2, '0')}-01 00:00:00+00`;
      await client.query(
        `create table audit_part_p${month} partition of audit_part for values from ('${from}') to ('${to}')`,
      );
    }
    await client.query(INDEXES('audit_flat'));
    await client.query(INDEXES('audit_part'));
    const fillFlat = await timed(() => client.query(FILL('audit_flat')));
    const fillPart = await timed(() => client.query(FILL('audit_part')));
    await client.query('vacuum analyze audit_flat');
    await client.query('vacuum analyze audit_part');
    const size = async (table: string) =>
      (
        await client.query<{ total: string; indexes: string }>(
          `select sum(pg_total_relation_size(c.oid))::text as total, sum(pg_indexes_size(c.oid))::text as indexes
             from pg_class c where c.relname = $1 or c.oid in (select inhrelid from pg_inherits where inhparent = $1::regclass)`,
          [table],
        )
      ).rows[0]!;
    const flatSize = await size('audit_flat');
    const partSize = await size('audit_part');
    const january = `created_at >= '2026-01-01 00:00:00+00' and created_at < '2026-02-01 00:00:00+00'`;
    const monthRows = (
      await client.query<{ count: string }>(`select count(*)::text as count from audit_flat where ${january}`)
    ).rows[0]!.count;

    const deleted = await timed(() => client.query(`delete from audit_flat where ${january}`));
    const dead = (
      await client.query<{ dead: string }>(
        `select n_dead_tup::text as dead from pg_stat_user_tables where relname = 'audit_flat'`,
      )
    ).rows[0]!.dead;
    const vacuumed = await timed(() => client.query('vacuum audit_flat'));
    const flatAfter = await size('audit_flat');
    const dropped = await timed(async () => {
      await client.query('begin');
      await client.query('alter table audit_part detach partition audit_part_p1');
      await client.query('drop table audit_part_p1');
      await client.query('commit');
    });
    const partAfter = await size('audit_part');

    const lines = [
      `rows: ${ROWS} over ${MONTHS} months; the oldest month: ${monthRows} rows`,
      `fill: plain ${fillFlat.ms.toFixed(0)} ms, partitioned ${fillPart.ms.toFixed(0)} ms`,
      `size before: plain ${megabytes(flatSize.total)} (indexes ${megabytes(flatSize.indexes)}), partitioned ${megabytes(partSize.total)} (indexes ${megabytes(partSize.indexes)})`,
      `remove the oldest month: DELETE ${deleted.ms.toFixed(0)} ms (${deleted.result.rowCount} rows, ${dead} dead rows left), then VACUUM ${vacuumed.ms.toFixed(0)} ms; detach + drop ${dropped.ms.toFixed(1)} ms`,
      `size after: plain ${megabytes(flatAfter.total)} (space kept by the table for reuse), partitioned ${megabytes(partAfter.total)} (returned to the file system)`,
    ];
    for (const line of lines) console.log(line);
  } finally {
    await client.end();
    await database.drop();
  }
}

await main();

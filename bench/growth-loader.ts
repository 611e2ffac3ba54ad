// The data of bench:growth: a year of several merchants' history — at scale 1,
// 10,000,000 payments, 1,000,000 USDT deposits, 1,000,000 payouts and with them
// about 12,000,000 webhook events (each with its delivery and attempt) and
// 19,000,000 ledger history entries — written by SQL `generate_series` straight
// into the gateway's tables. Each shop's rows are bench:cabinet's
// (bench/cabinet-loader.ts: rows the gateway itself could have written, a ledger
// that adds up); one shop is big (half of every count), the others share the rest.
// Every deposit but the last day's is swept to the hot wallet (bench/growth-sweeps.ts),
// as the sweeper leaves a running gateway's. The ledger's history and account totals
// are computed once, over every shop.
import pg from 'pg';
import {
  addressFunction,
  addressTotalsStatement,
  derivedStatements,
  ledgerHistoryStatements,
  shopRowStatements,
  type CabinetLoad,
} from './cabinet-loader.ts';
import { sweepStatement, type GrowthSweeps } from './growth-sweeps.ts';

/** The full size: scale 1. */
export const FULL_SIZE = { payments: 10_000_000, deposits: 1_000_000, payouts: 1_000_000 } as const;
/** The big shop's share of every count; the small shops split the rest evenly. */
const BIG_SHARE = 0.5;

export interface GrowthShop {
  readonly merchantId: string;
  readonly shopId: string;
}

/** Every shop's load at `scale` (1 = FULL_SIZE), the first shop the big one. */
export function growthShopLoads(shops: readonly GrowthShop[], scale: number): CabinetLoad[] {
  if (shops.length < 2) throw new Error('bench:growth loads one big shop and at least one small one');
  if (!(scale > 0)) throw new Error(`the scale must be positive, got ${scale}`);
  const share = (total: number, index: number) => {
    const all = Math.round(total * scale);
    const big = Math.round(all * BIG_SHARE);
    if (index === 0) return big;
    const small = shops.length - 1;
    // The remainder of the split goes to the last small shop, so that the counts add up to `all`.
    const each = Math.floor((all - big) / small);
    return index === small ? all - big - each * (small - 1) : each;
  };
  let invoicesBefore = 0;
  let walletsBefore = 0;
  return shops.map((shop, index) => {
    const deposits = Math.max(10, share(FULL_SIZE.deposits, index));
    const walletDeposits = Math.floor(deposits / 5);
    const expiredInvoices = Math.floor(deposits / 10);
    const payouts = Math.max(2, share(FULL_SIZE.payouts, index));
    const load: CabinetLoad = {
      merchantId: shop.merchantId,
      shopId: shop.shopId,
      payments: Math.max(10, share(FULL_SIZE.payments, index)),
      deposits,
      walletDeposits,
      expiredInvoices,
      payouts,
      batchedPayouts: Math.floor(payouts / 200) * 100,
      events: true,
      place: { serial: index, invoicesBefore, walletsBefore },
    };
    invoicesBefore += deposits - walletDeposits + expiredInvoices;
    walletsBefore += Math.max(1, Math.ceil(walletDeposits / 10));
    return load;
  });
}

interface Statement {
  readonly label: string;
  readonly sql: string;
}

/** Every statement of the load, in an order that runs on one connection: each shop's rows, then what follows from them. */
export function growthLoadStatements(loads: readonly CabinetLoad[], sweeps: GrowthSweeps, nowIso: string): Statement[] {
  return [
    addressFunction.create,
    ...loads.flatMap((load, index) => shopStatements(load, index, nowIso)),
    addressFunction.drop,
    ...derivedStatements(shopIds(loads)),
    sweepStatement(shopIds(loads), sweeps, nowIso),
    addressTotalsStatement(shopIds(loads)),
    outgoingAttemptsStatement,
    ...ledgerHistoryStatements(),
  ];
}

/**
 * The signed transaction of every loaded transfer that got a txID, as the executor leaves it: one
 * attempt, landed, its bytes about a TRC20 transfer's size (≈ 300 bytes), referencing the block
 * before its own (transfers the gateway signed itself keep their own). The executor's reads of the
 * attempts still pending must not grow with these.
 */
const outgoingAttemptsStatement: Statement = {
  label: 'outgoing attempts',
  sql: `insert into crypto_outgoing_attempts (transfer_id, attempt, tx_id, signed_hex, expiration, ref_block_number, fee_limit_sun,
                                             status, broadcasts, last_broadcast, signed_at, last_broadcast_at)
        select t.id, 1, t.tx_id, repeat(md5(t.id), 19), coalesce(t.submitted_at, t.created_at) + interval '1 minute',
               greatest(coalesce(t.block_number, 1) - 1, 0), 100000000, 'landed', 1, 'accepted',
               coalesce(t.submitted_at, t.created_at), coalesce(t.submitted_at, t.created_at)
          from crypto_outgoing_transfers t
         where t.tx_id is not null and not exists (select 1 from crypto_outgoing_attempts a where a.transfer_id = t.id)`,
};

const shopIds = (loads: readonly CabinetLoad[]) => loads.map((load) => load.shopId);

function shopStatements(load: CabinetLoad, index: number, nowIso: string): Statement[] {
  return shopRowStatements(load, nowIso).map((statement) => ({
    ...statement,
    label: `shop ${index}: ${statement.label}`,
  }));
}

/** The tables the load makes big: their indexes and constraints are built after the load rather than row by row. */
const BIG_TABLES = [
  'payments',
  'ledger_transfers',
  'ledger_operations',
  'webhook_events',
  'webhook_deliveries',
  'webhook_attempts',
  'crypto_deposits',
  'crypto_payouts',
  'crypto_outgoing_transfers',
  'crypto_outgoing_attempts',
  'crypto_sweeps',
];

interface TableObject {
  readonly table: string;
  readonly name: string;
  /** The statement that makes it again: `create index …` or `alter table … add constraint …`. */
  readonly definition: string;
}

/**
 * What the load drops from the big tables and makes again afterwards: their indexes (each by its own
 * `pg_get_indexdef`), their primary-key, unique and exclusion constraints (`pg_get_constraintdef`)
 * and every foreign key from or to them. Made after the load, an index is one sort instead of a
 * random b-tree insertion per row (the ids are hashes), and a foreign key is one join that checks
 * every row instead of a trigger per row; the schema afterwards is the migrations' own
 * (test/bench/growth-loader.test.ts compares it).
 */
async function bigTableObjects(
  client: pg.Client,
): Promise<{ indexes: TableObject[]; keys: TableObject[]; foreignKeys: TableObject[] }> {
  const indexes = await client.query<TableObject>(
    `select t.relname as table, c.relname as name, pg_get_indexdef(i.indexrelid) as definition
       from pg_index i
       join pg_class c on c.oid = i.indexrelid
       join pg_class t on t.oid = i.indrelid
       join pg_namespace n on n.oid = c.relnamespace
      where t.relname = any($1) and n.nspname = current_schema()
        and not exists (select 1 from pg_constraint k where k.conindid = i.indexrelid and k.contype in ('p', 'u', 'x'))
      order by t.relname, c.relname`,
    [BIG_TABLES],
  );
  const constraints = await client.query<TableObject & { type: string }>(
    `select t.relname as table, k.conname as name, k.contype as type,
            'alter table ' || quote_ident(t.relname) || ' add constraint ' || quote_ident(k.conname) || ' ' || pg_get_constraintdef(k.oid) as definition
       from pg_constraint k
       join pg_class t on t.oid = k.conrelid
       join pg_namespace n on n.oid = t.relnamespace
       left join pg_class r on r.oid = k.confrelid
      where n.nspname = current_schema()
        and ((k.contype in ('p', 'u', 'x') and t.relname = any($1)) or (k.contype = 'f' and (t.relname = any($1) or r.relname = any($1))))
      order by t.relname, k.conname`,
    [BIG_TABLES],
  );
  return {
    indexes: indexes.rows,
    keys: constraints.rows.filter((row) => row.type !== 'f'),
    foreignKeys: constraints.rows.filter((row) => row.type === 'f'),
  };
}

const secondsSince = (started: bigint) => Number(process.hrtime.bigint() - started) / 1e9;

/** The load's connections, each set up for bulk writes. */
async function openLoaders(databaseUrl: string, count: number): Promise<pg.Client[]> {
  const clients: pg.Client[] = [];
  for (let index = 0; index < count; index += 1) {
    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    clients.push(client);
    await client.query(`set work_mem = '256MB'`);
    await client.query(`set maintenance_work_mem = '1GB'`);
    await client.query(`set synchronous_commit = off`);
    // The foreign keys are dropped for the load and made again after it, checking every row; `replica`
    // also skips the queue's notify triggers, which have no listener to tell about history.
    await client.query(`set session_replication_role = replica`);
  }
  return clients;
}

/** Runs `jobs` on the connections, each job on one connection at a time, as many at once as there are connections. */
async function onConnections<T>(
  clients: readonly pg.Client[],
  jobs: readonly T[],
  run: (client: pg.Client, job: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  await Promise.all(
    clients.map(async (client) => {
      while (next < jobs.length) {
        const job = jobs[next++]!;
        await run(client, job);
      }
    }),
  );
}

/** A statement, timed and reported. */
async function timed(client: pg.Client, statement: Statement, report: (line: string) => void): Promise<void> {
  const started = process.hrtime.bigint();
  const result = await client.query(statement.sql);
  report(`  ${statement.label}: ${result.rowCount ?? 0} rows in ${secondsSince(started).toFixed(1)} s`);
}

/** How many connections the load uses (BENCH_GROWTH_LOAD_CONNECTIONS): a shop, a table or an index at a time on each. */
const LOAD_CONNECTIONS = Number(process.env.BENCH_GROWTH_LOAD_CONNECTIONS ?? 2);

/**
 * Runs the load on `databaseUrl` (a database the gateway has migrated, the shops created): the big
 * tables' indexes and keys dropped, the shops' rows (a shop per connection), what follows from them
 * (independent statements side by side), the indexes, keys and foreign keys made again, then
 * VACUUM ANALYZE and a checkpoint.
 */
export async function loadGrowthData(
  databaseUrl: string,
  loads: readonly CabinetLoad[],
  sweeps: GrowthSweeps,
  report: (line: string) => void,
): Promise<void> {
  if (!(LOAD_CONNECTIONS >= 1 && Number.isInteger(LOAD_CONNECTIONS)))
    throw new Error(`BENCH_GROWTH_LOAD_CONNECTIONS: ${LOAD_CONNECTIONS}`);
  const clients = await openLoaders(databaseUrl, LOAD_CONNECTIONS);
  const [first] = clients as [pg.Client];
  try {
    const objects = await bigTableObjects(first);
    await dropForLoad(first, objects);
    report(
      `  dropped ${objects.indexes.length} indexes, ${objects.keys.length} keys and ${objects.foreignKeys.length} foreign keys of the big tables for the load`,
    );
    const nowIso = new Date().toISOString();
    // The addresses' function lives in each connection's temporary schema: made on each, dropped after the shops' rows.
    for (const client of clients) await client.query(addressFunction.create.sql);
    await onConnections(clients, loads, async (client, load) => {
      for (const statement of shopStatements(load, loads.indexOf(load), nowIso)) await timed(client, statement, report);
    });
    for (const client of clients) await client.query(addressFunction.drop.sql);
    await first.query('analyze payments, crypto_invoices, crypto_deposits, crypto_payouts, shops, ledger_accounts');
    const derived = new Map(
      [
        ...derivedStatements(shopIds(loads)),
        sweepStatement(shopIds(loads), sweeps, nowIso),
        addressTotalsStatement(shopIds(loads)),
        outgoingAttemptsStatement,
      ].map((statement) => [statement.label, statement]),
    );
    const ledger = new Map(ledgerHistoryStatements().map((statement) => [statement.label, statement]));
    const step = (...labels: string[]) =>
      onConnections(clients, labels, (client, label) =>
        timed(client, (derived.get(label) ?? ledger.get(label))!, report),
      );
    // The transfers, the events and the sweeps only read the shops' rows; the deliveries and attempts only the events.
    await step(
      'payment ledger transfers',
      'deposit ledger transfers',
      'payout ledger transfers',
      'webhook events',
      'sweeps',
    );
    // The outgoing attempts read the transfers, the sweeps' among them; the addresses' totals the sweeps.
    await step('webhook deliveries', 'webhook attempts', 'outgoing attempts', 'address USDT totals');
    await first.query('analyze ledger_transfers');
    await step('ledger history', 'ledger account totals');
    await remake(clients, objects, report);
    const started = process.hrtime.bigint();
    const tables = await first.query<{ name: string }>(
      `select relname as name from pg_class where relkind = 'r' and relnamespace = current_schema()::regnamespace order by relpages desc`,
    );
    await onConnections(clients, tables.rows, (client, table) =>
      client.query(`vacuum analyze ${quoted(table.name)}`).then(() => undefined),
    );
    await first.query('checkpoint');
    report(`  vacuum analyze + checkpoint: ${secondsSince(started).toFixed(1)} s`);
  } finally {
    await Promise.all(clients.map((client) => client.end()));
  }
}

/** Drops the big tables' foreign keys, keys and indexes, and stops autovacuum on them until the load is done. */
async function dropForLoad(client: pg.Client, objects: Awaited<ReturnType<typeof bigTableObjects>>): Promise<void> {
  for (const key of objects.foreignKeys)
    await client.query(`alter table ${quoted(key.table)} drop constraint ${quoted(key.name)}`);
  for (const key of objects.keys)
    await client.query(`alter table ${quoted(key.table)} drop constraint ${quoted(key.name)}`);
  for (const index of objects.indexes) await client.query(`drop index ${quoted(index.name)}`);
  for (const table of BIG_TABLES) await client.query(`alter table ${quoted(table)} set (autovacuum_enabled = false)`);
}

/** Makes again what dropForLoad dropped: each table's keys and indexes on one connection, tables side by side; then the foreign keys. */
async function remake(
  clients: readonly pg.Client[],
  objects: Awaited<ReturnType<typeof bigTableObjects>>,
  report: (line: string) => void,
): Promise<void> {
  const started = process.hrtime.bigint();
  const tables = [...BIG_TABLES].sort((a, b) => count(objects, b) - count(objects, a));
  await onConnections(clients, tables, async (client, table) => {
    const tableStarted = process.hrtime.bigint();
    for (const object of [...objects.keys, ...objects.indexes].filter((candidate) => candidate.table === table))
      await client.query(object.definition);
    await client.query(`alter table ${quoted(table)} reset (autovacuum_enabled)`);
    report(`  ${table}: keys and indexes made in ${secondsSince(tableStarted).toFixed(1)} s`);
  });
  report(
    `  made ${objects.keys.length} keys and ${objects.indexes.length} indexes in ${secondsSince(started).toFixed(1)} s`,
  );
  const keysStarted = process.hrtime.bigint();
  // Each foreign key checks every row of its table against the key it references.
  await onConnections(clients, objects.foreignKeys, (client, key) =>
    client.query(key.definition).then(() => undefined),
  );
  report(`  made and checked ${objects.foreignKeys.length} foreign keys in ${secondsSince(keysStarted).toFixed(1)} s`);
}

const count = (objects: Awaited<ReturnType<typeof bigTableObjects>>, table: string) =>
  [...objects.keys, ...objects.indexes].filter((object) => object.table === table).length;

const quoted = (identifier: string) => `"${identifier.replaceAll('"', '""')}"`;

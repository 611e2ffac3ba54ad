// The data of bench:growth: a year of several merchants' history — at scale 1,
// 10,000,000 payments, 1,000,000 USDT deposits, 1,000,000 payouts and with them
// about 12,000,000 webhook events (each with its delivery and attempt) and
// 19,000,000 ledger history entries — written by SQL `generate_series` straight
// into the gateway's tables. Each shop's rows are bench:cabinet's
// (bench/cabinet-loader.ts: rows the gateway itself could have written, a ledger
// that adds up); one shop is big (half of every count), the others share the rest.
// The ledger's history and account totals are computed once, over every shop.
import type pg from 'pg';
import { ledgerHistoryStatements, shopLoadStatements, type CabinetLoad } from './cabinet-loader.ts';

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

/** Every statement of the load, in order: each shop's rows, then the ledger's history and totals. */
export function growthLoadStatements(
  loads: readonly CabinetLoad[],
  nowIso: string,
): Array<{ label: string; sql: string }> {
  return [
    ...loads.flatMap((load, index) =>
      shopLoadStatements(load, nowIso).map((statement) => ({
        ...statement,
        label: `shop ${index}: ${statement.label}`,
      })),
    ),
    ...ledgerHistoryStatements(),
  ];
}

/** The tables the load makes big: their secondary indexes are built after the load rather than row by row. */
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
];

/**
 * The indexes of the big tables that back no constraint, by name and definition. Dropping them
 * and running their own `pg_get_indexdef` afterwards gives back exactly the schema the
 * migrations made (a unique index fails to build if the load broke its rule); constraint
 * indexes (primary keys, unique constraints) stay, and are checked row by row.
 */
async function secondaryIndexes(client: pg.Client): Promise<Array<{ name: string; definition: string }>> {
  const { rows } = await client.query<{ name: string; definition: string }>(
    `select quote_ident(n.nspname) || '.' || quote_ident(c.relname) as name, pg_get_indexdef(i.indexrelid) as definition
       from pg_index i
       join pg_class c on c.oid = i.indexrelid
       join pg_class t on t.oid = i.indrelid
       join pg_namespace n on n.oid = c.relnamespace
      where t.relname = any($1) and n.nspname = current_schema()
        and not exists (select 1 from pg_constraint k where k.conindid = i.indexrelid)
      order by t.relname, c.relname`,
    [BIG_TABLES],
  );
  return rows;
}

const secondsSince = (started: bigint) => Number(process.hrtime.bigint() - started) / 1e9;

/**
 * Runs the load on `client` (a database the gateway has migrated, the shops created), then
 * rebuilds the dropped indexes, VACUUM ANALYZE and a checkpoint.
 */
export async function loadGrowthData(
  client: pg.Client,
  loads: readonly CabinetLoad[],
  report: (line: string) => void,
): Promise<void> {
  await client.query(`set work_mem = '256MB'`);
  await client.query(`set maintenance_work_mem = '1GB'`);
  await client.query(`set synchronous_commit = off`);
  // Foreign keys hold by construction (every row points at one inserted before it; the loader's test
  // checks them with their triggers on); `replica` skips their per-row triggers and the notify triggers.
  await client.query(`set session_replication_role = replica`);
  const indexes = await secondaryIndexes(client);
  for (const index of indexes) await client.query(`drop index ${index.name}`);
  report(`  dropped ${indexes.length} secondary indexes of the big tables for the load`);
  for (const statement of growthLoadStatements(loads, new Date().toISOString())) {
    const started = process.hrtime.bigint();
    const result = await client.query(statement.sql);
    report(`  ${statement.label}: ${result.rowCount ?? 0} rows in ${secondsSince(started).toFixed(1)} s`);
  }
  const built = process.hrtime.bigint();
  for (const index of indexes) await client.query(index.definition);
  report(`  rebuilt the ${indexes.length} indexes in ${secondsSince(built).toFixed(1)} s`);
  const started = process.hrtime.bigint();
  await client.query('vacuum analyze');
  await client.query('checkpoint');
  report(`  vacuum analyze + checkpoint: ${secondsSince(started).toFixed(1)} s`);
}

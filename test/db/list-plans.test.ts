// The cabinet's tables never read a whole table (issue 27, "Performance"): on
// PostgreSQL, with a shop of 50,000 payments and 50,000 deposits written by the
// bench's loader (bench/cabinet-loader.ts) and ANALYZEd, the plan of every query
// behind a table (bench/cabinet-list-queries.ts: each list with each filter and
// its second page) uses indexes on the payments, invoices, deposits, ledger and
// webhook tables: no Seq Scan of them. What is asserted is the plan the planner
// chose, never how long the query took. PGlite has no planner statistics worth
// the name (one process, no ANALYZE-driven choice between plans that matters
// here), so the file runs on PostgreSQL only.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cabinetListQueries, type ListQuery, type ListQuerySample } from '../../bench/cabinet-list-queries.ts';
import { cabinetLoadStatements } from '../../bench/cabinet-loader.ts';
import { sampleOfShop, scansOf } from '../../bench/cabinet-plans.ts';
import { ManualClock } from '../../src/clock.ts';
import { throwawayKeyring } from '../../src/kms/keyring.ts';
import { createMerchant } from '../../src/merchants/merchant-service.ts';
import { backends, openTestDatabase, type TestDatabase } from '../support/databases.ts';

const onPostgres = backends.includes('postgres');
if (!onPostgres) console.warn('list-plans.test.ts: skipped, it needs PostgreSQL (set TEST_DATABASE_URL)');

/** Tables a whole read of which grows with the shop's history. */
const GROWING_TABLES = new Set([
  'payments',
  'crypto_invoices',
  'crypto_deposits',
  'ledger_operations',
  'ledger_transfers',
  'webhook_events',
  'webhook_deliveries',
]);

describe.runIf(onPostgres)('the plans of the cabinet tables on PostgreSQL', () => {
  let database: TestDatabase;
  let client: pg.Client;
  let queries: ListQuery[] = [];

  beforeAll(async () => {
    database = await openTestDatabase('postgres');
    const merchant = await createMerchant(
      { db: database.db, clock: new ManualClock(), keyring: throwawayKeyring() },
      { name: 'Plans shop', email: 'plans@example.test', mode: 'sandbox' },
    );
    client = new pg.Client({ connectionString: database.url });
    await client.connect();
    const load = {
      merchantId: merchant.merchant_id,
      shopId: merchant.shop_id,
      payments: 50_000,
      deposits: 50_000,
      walletDeposits: 10_000,
      expiredInvoices: 5_000,
      payouts: 400,
      batchedPayouts: 200,
      events: true,
    };
    for (const statement of cabinetLoadStatements(load, new Date().toISOString())) await client.query(statement.sql);
    await client.query('analyze');
    const sample: ListQuerySample = await sampleOfShop(client, merchant.shop_id, merchant.merchant_id);
    queries = cabinetListQueries(sample);
  }, 300_000);

  afterAll(async () => {
    await client?.end();
    await database?.close();
  });

  it('reads every table of the cabinet, with each filter and on its second page, through an index', async () => {
    expect(queries.length).toBeGreaterThan(30);
    const wholeReads: string[] = [];
    for (const query of queries) {
      const result = await client.query<{ 'QUERY PLAN': Array<{ Plan: Parameters<typeof scansOf>[0] }> }>(
        `explain (format json) ${query.sql}`,
        [...query.params],
      );
      const scans = scansOf(result.rows[0]!['QUERY PLAN'][0]!.Plan);
      const seq = scans.filter((scan) => scan.startsWith('Seq Scan') && GROWING_TABLES.has(scan.slice(9)));
      if (seq.length > 0) wholeReads.push(`${query.name}: ${scans.join(', ')}`);
    }
    expect(wholeReads).toEqual([]);
  });
});

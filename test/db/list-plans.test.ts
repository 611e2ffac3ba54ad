// Every list the API and the cabinet serve reads through an index: on a shop of tens of
// thousands of payments, deposits, invoices, payouts, ledger entries and webhook events
// (bench/cabinet-loader.ts, then ANALYZE), each list route is called through the real app
// with each of its filters and for its second page, the SQL it runs is captured from the
// real query builder, and the planner's plan of every captured SELECT (EXPLAIN (FORMAT JSON))
// must neither scan a large table whole (Seq Scan) nor sort a large share of one to cut
// out a keyset page; and each page, run under EXPLAIN ANALYZE, must read no more than a few
// pages' worth of rows of the list's table (rows counted, never a duration).
// PGlite is PostgreSQL with the same planner and ANALYZE, so both backends are checked.
import { CompiledQuery } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cabinetLoadStatements } from '../../bench/cabinet-loader.ts';
import { SAMPLE_SQL } from '../../bench/cabinet-list-queries.ts';
import { createMerchantWithOwner } from '../../src/cabinet/users/user-service.ts';
import { API_KEY_SCOPES } from '../../src/http/api-scopes.ts';
import { createApiKey } from '../../src/merchants/merchant-service.ts';
import { buildAppWithModules, createTestContext } from '../support/app.ts';
import { backends, type TestDatabase } from '../support/databases.ts';
import { CabinetClient, TEST_PASSWORD } from '../cabinet/cabinet-client.ts';
import { nextPageLink } from '../cabinet/fiat-tables-support.ts';
import {
  analyzedRunOf,
  largeTablesOf,
  planOf,
  QueryRecorder,
  relationsUnder,
  rolledBack,
  rowsReadFrom,
  wholeReadsOf,
} from '../support/query-plans.ts';
import type { FastifyInstance } from 'fastify';

/** The most rows a page of a list asks for (the API lists here ask limit=50; the cabinet's pages are 50). */
const PAGE_ROWS = 50;
/**
 * The most rows one statement of a page may read from the list's table, counted from EXPLAIN ANALYZE:
 * a page and its look-ahead row from each of a merchant's few ledger accounts, or a page read with
 * some rows filtered out. It does not grow with the table; a plan that sorts a day window or walks
 * an index past the rows it keeps reads thousands on the shop loaded here.
 */
const PAGE_READ_ROWS_MAX = 4 * (PAGE_ROWS + 1);
/**
 * Lists that do not yet meet PAGE_READ_ROWS_MAX (they pass the plan check above): the wallets search
 * by client_id reads 400 wallet rows to return one.
 */
const READ_BOUND_PENDING: ReadonlySet<string> = new Set(['cabinet wallets search client_id']);

interface Sample {
  readonly shopId: string;
  readonly paymentId: string;
  readonly orderId: string;
  readonly invoiceExternalId: string;
  readonly invoiceAddress: string;
  readonly walletClientId: string;
  readonly depositTxHash: string;
  readonly depositAddress: string;
  readonly payoutExternalId: string;
  readonly accountId: string;
  readonly eventId: string;
  /** The first and last day of a 30-day window in the middle of the history. */
  readonly fromDay: string;
  readonly toDay: string;
}

interface ListRequest {
  readonly name: string;
  /** The table the list reads its rows from: its plan must read it, through an index where it is large. */
  readonly table: string;
  readonly via: 'api' | 'cabinet';
  readonly url: (sample: Sample) => string;
}

const api = (name: string, table: string, url: (sample: Sample) => string): ListRequest => ({
  name,
  table,
  via: 'api',
  url,
});
const cabinet = (
  name: string,
  table: string,
  path: string,
  query: (sample: Sample) => string = () => '',
): ListRequest => ({
  name,
  table,
  via: 'cabinet',
  url: (sample) => `/cabinet/shops/${sample.shopId}/${path}${query(sample) ? `?${query(sample)}` : ''}`,
});
const days = (sample: Sample) => `from=${sample.fromDay}&to=${sample.toDay}`;

/** Every list route with each filter it takes; each is also read on its second page where it has one. */
const LIST_REQUESTS: readonly ListRequest[] = [
  api('payments', 'payments', () => '/v1/payments?limit=50'),
  api('payments status', 'payments', () => '/v1/payments?limit=50&status=failed'),
  api(
    'payments status + order_id',
    'payments',
    (s) => `/v1/payments?status=paid&order_id=${encodeURIComponent(s.orderId)}`,
  ),
  api('payments order_id', 'payments', (s) => `/v1/payments?order_id=${encodeURIComponent(s.orderId)}`),
  api('payment refunds', 'payment_refunds', (s) => `/v1/payments/${s.paymentId}/refunds`),
  api('invoices', 'crypto_invoices', () => '/v1/crypto/invoices?limit=50'),
  api('invoices status', 'crypto_invoices', () => '/v1/crypto/invoices?limit=50&status=underpaid'),
  api(
    'invoices external_id',
    'crypto_invoices',
    (s) => `/v1/crypto/invoices?external_id=${encodeURIComponent(s.invoiceExternalId)}`,
  ),
  api('wallets', 'crypto_wallets', () => '/v1/crypto/wallets?limit=50'),
  api('wallets status', 'crypto_wallets', () => '/v1/crypto/wallets?limit=50&status=blocked'),
  api(
    'wallets client_id',
    'crypto_wallets',
    (s) => `/v1/crypto/wallets?client_id=${encodeURIComponent(s.walletClientId)}`,
  ),
  api('payouts', 'crypto_payouts', () => '/v1/crypto/payouts?limit=50'),
  api('payouts status', 'crypto_payouts', () => '/v1/crypto/payouts?limit=50&status=failed'),
  api(
    'payouts external_id',
    'crypto_payouts',
    (s) => `/v1/crypto/payouts?external_id=${encodeURIComponent(s.payoutExternalId)}`,
  ),
  api('operations', 'ledger_operations', () => '/v1/crypto/balance/operations?limit=50'),
  api('operations type', 'ledger_operations', () => '/v1/crypto/balance/operations?limit=50&type=payout'),
  api(
    'operations account',
    'ledger_operations',
    (s) => `/v1/crypto/balance/operations?limit=50&account_id=${s.accountId}`,
  ),
  api(
    'operations days',
    'ledger_operations',
    (s) => `/v1/crypto/balance/operations?limit=50&from=${s.fromDay}T00:00:00Z&to=${s.toDay}T00:00:00Z`,
  ),
  api('webhook events', 'webhook_events', () => '/v1/webhooks/events?limit=50'),
  api('webhook events type', 'webhook_events', () => '/v1/webhooks/events?limit=50&type=crypto.payout.updated'),
  api('webhook events status', 'webhook_events', () => '/v1/webhooks/events?limit=50&status=failed'),
  api('webhook attempts', 'webhook_attempts', (s) => `/v1/webhooks/events/${s.eventId}/attempts`),

  cabinet('cabinet payments', 'payments', 'payments'),
  cabinet('cabinet payments status', 'payments', 'payments', () => 'status=failed'),
  cabinet('cabinet payments days', 'payments', 'payments', days),
  cabinet('cabinet payments status + days', 'payments', 'payments', (s) => `status=failed&${days(s)}`),
  cabinet('cabinet payments amount', 'payments', 'payments', () => 'amount_min=1000&amount_max=1200'),
  cabinet('cabinet payments amount, rare', 'payments', 'payments', () => 'amount_min=1000&amount_max=1000.50'),
  cabinet('cabinet payments search order_id', 'payments', 'payments', (s) => `q=${encodeURIComponent(s.orderId)}`),
  cabinet('cabinet payments search id', 'payments', 'payments', (s) => `q=${s.paymentId}`),
  cabinet('cabinet invoices', 'crypto_invoices', 'invoices'),
  cabinet('cabinet invoices status', 'crypto_invoices', 'invoices', () => 'status=underpaid'),
  cabinet('cabinet invoices days', 'crypto_invoices', 'invoices', days),
  cabinet('cabinet invoices amount, rare', 'crypto_invoices', 'invoices', () => 'amount_min=100&amount_max=100.1'),
  cabinet(
    'cabinet invoices search external_id',
    'crypto_invoices',
    'invoices',
    (s) => `q=${encodeURIComponent(s.invoiceExternalId)}`,
  ),
  cabinet('cabinet invoices search address', 'crypto_invoices', 'invoices', (s) => `q=${s.invoiceAddress}`),
  cabinet('cabinet wallets', 'crypto_wallets', 'wallets'),
  cabinet('cabinet wallets status', 'crypto_wallets', 'wallets', () => 'status=blocked'),
  cabinet(
    'cabinet wallets search client_id',
    'crypto_wallets',
    'wallets',
    (s) => `q=${encodeURIComponent(s.walletClientId)}`,
  ),
  cabinet('cabinet deposits', 'crypto_deposits', 'deposits'),
  cabinet('cabinet deposits status', 'crypto_deposits', 'deposits', () => 'status=held'),
  cabinet('cabinet deposits days', 'crypto_deposits', 'deposits', days),
  cabinet('cabinet deposits amount, rare', 'crypto_deposits', 'deposits', () => 'amount_min=100&amount_max=100.1'),
  cabinet('cabinet deposits search tx hash', 'crypto_deposits', 'deposits', (s) => `q=${s.depositTxHash}`),
  cabinet('cabinet deposits search address', 'crypto_deposits', 'deposits', (s) => `q=${s.depositAddress}`),
  cabinet('cabinet refunds', 'crypto_refunds', 'refunds'),
  cabinet('cabinet payouts', 'crypto_payouts', 'payouts'),
  cabinet('cabinet payouts status', 'crypto_payouts', 'payouts', () => 'status=failed'),
  cabinet('cabinet payouts days', 'crypto_payouts', 'payouts', days),
  cabinet(
    'cabinet payouts search external_id',
    'crypto_payouts',
    'payouts',
    (s) => `q=${encodeURIComponent(s.payoutExternalId)}`,
  ),
  cabinet('cabinet payout batches', 'crypto_payout_batches', 'payouts/batches'),
  cabinet('cabinet payout batches status', 'crypto_payout_batches', 'payouts/batches', () => 'status=completed'),
  cabinet('cabinet payout batches days', 'crypto_payout_batches', 'payouts/batches', days),
  cabinet('cabinet operations', 'ledger_operations', 'operations'),
  cabinet('cabinet operations type', 'ledger_operations', 'operations', () => 'status=payout'),
  cabinet('cabinet operations days', 'ledger_operations', 'operations', days),
  cabinet('cabinet operations type + days', 'ledger_operations', 'operations', (s) => `status=deposit&${days(s)}`),
  cabinet('cabinet webhook events', 'webhook_events', 'webhooks/events'),
  cabinet('cabinet webhook events status', 'webhook_events', 'webhooks/events', () => 'status=failed'),
  cabinet('cabinet webhook events days', 'webhook_events', 'webhooks/events', days),
  cabinet('cabinet webhook events search about', 'webhook_events', 'webhooks/events', (s) => `q=${s.paymentId}`),
];

for (const backend of backends) {
  describe(`the plans of every list on ${backend}`, () => {
    let database: TestDatabase;
    let app: FastifyInstance;
    const recorder = new QueryRecorder();
    let apiKey: string;
    let person: CabinetClient;
    let sample: Sample;
    let large: ReadonlySet<string>;

    beforeAll(async () => {
      const created = await createTestContext(backend);
      database = created.database;
      const context = { ...created.context, db: database.db.withPlugin(recorder) };
      app = (await buildAppWithModules(context)).app;
      await app.ready();
      const email = 'plans@example.test';
      const merchant = await createMerchantWithOwner(context, {
        name: 'Plans shop',
        email,
        password: TEST_PASSWORD,
        mode: 'sandbox',
      });
      apiKey = (await createApiKey(context, merchant.shop_id, API_KEY_SCOPES)).api_key;
      const load = {
        merchantId: merchant.merchant_id,
        shopId: merchant.shop_id,
        payments: 12_000,
        deposits: 12_000,
        walletDeposits: 4_000,
        expiredInvoices: 1_000,
        payouts: 6_000,
        batchedPayouts: 1_000,
        events: true,
      };
      const now = created.clock.now().toISOString();
      for (const statement of cabinetLoadStatements(load, now))
        await database.db.executeQuery(CompiledQuery.raw(statement.sql));
      await database.db.executeQuery(CompiledQuery.raw('analyze'));
      large = await largeTablesOf(database.db);
      sample = await sampleOf(merchant.shop_id, merchant.merchant_id);
      person = new CabinetClient(app);
      expect((await person.signIn(email)).statusCode).toBe(303);
    }, 600_000);

    afterAll(async () => {
      await app?.close();
      await database?.close();
    });

    async function sampleOf(shopId: string, merchantId: string): Promise<Sample> {
      const row = (await database.db.executeQuery<Record<string, unknown>>(CompiledQuery.raw(SAMPLE_SQL, [shopId])))
        .rows[0]!;
      const payout = (
        await database.db.executeQuery<{ external_id: string }>(
          CompiledQuery.raw(
            `select external_id from crypto_payouts where shop_id = $1 order by created_at offset 100 limit 1`,
            [shopId],
          ),
        )
      ).rows[0]!;
      const account = (
        await database.db.executeQuery<{ id: string }>(
          CompiledQuery.raw(
            `select id from ledger_accounts where merchant_id = $1 and currency = 'USDT' and kind = 'main' and book = 'sandbox'`,
            [merchantId],
          ),
        )
      ).rows[0]!;
      const event = (
        await database.db.executeQuery<{ id: string }>(
          CompiledQuery.raw(
            `select a.event_id as id from webhook_attempts a join webhook_events e on e.id = a.event_id where e.shop_id = $1 limit 1`,
            [shopId],
          ),
        )
      ).rows[0]!;
      const middle = (row.payment_created_at as Date).getTime();
      const day = (at: number) => new Date(at).toISOString().slice(0, 10);
      return {
        shopId,
        paymentId: row.payment_id as string,
        orderId: row.order_id as string,
        invoiceExternalId: row.invoice_external_id as string,
        invoiceAddress: row.invoice_address as string,
        walletClientId: row.wallet_client_id as string,
        depositTxHash: row.deposit_tx_hash as string,
        depositAddress: row.deposit_address as string,
        payoutExternalId: payout.external_id,
        accountId: account.id,
        eventId: event.id,
        fromDay: day(middle - 15 * 86_400_000),
        toDay: day(middle + 15 * 86_400_000),
      };
    }

    /** The route's answer, and the URL of its next page when it has one. */
    async function open(request: ListRequest, url: string): Promise<string | undefined> {
      if (request.via === 'api') {
        const response = await app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${apiKey}` } });
        expect(response.statusCode, `${url}: ${response.body.slice(0, 300)}`).toBe(200);
        const next = (response.json() as { next_cursor?: string | null }).next_cursor;
        if (!next) return undefined;
        const nextUrl = new URL(url, 'http://paygate.test');
        nextUrl.searchParams.set('cursor', next);
        return `${nextUrl.pathname}${nextUrl.search}`;
      }
      const response = await person.get(url);
      expect(response.statusCode, `${url}: ${response.body.slice(0, 300)}`).toBe(200);
      return nextPageLink(response.body);
    }

    /** The whole-table reads in the plans of the SELECTs a page of the list ran. */
    async function wholeReadsOfPage(
      request: ListRequest,
      url: string,
    ): Promise<{ reads: string[]; read: Set<string>; next?: string }> {
      let next: string | undefined;
      const queries = await recorder.during(async () => {
        next = await open(request, url);
      });
      const reads: string[] = [];
      const read = new Set<string>();
      for (const query of queries) {
        if (!/^\s*(select|with)\b/i.test(query.sql)) continue;
        const plan = await planOf(database.db, query);
        for (const whole of wholeReadsOf(plan, large)) reads.push(`${whole} in: ${query.sql}`);
        for (const relation of relationsUnder(plan)) read.add(relation);
      }
      return { reads, read, next };
    }

    it('loads large tables of every kind the lists read', () => {
      for (const table of [
        'payments',
        'crypto_invoices',
        'crypto_deposits',
        'crypto_payouts',
        'ledger_operations',
        'webhook_events',
        'webhook_deliveries',
      ])
        expect(large, table).toContain(table);
    });

    it('catches a list whose index is missing: without their shop indexes the deposits page sorts or scans them', async () => {
      const request = LIST_REQUESTS.find((candidate) => candidate.name === 'cabinet deposits')!;
      const queries = await recorder.during(async () => {
        await open(request, request.url(sample));
      });
      const listQuery = queries.find((query) => /from "crypto_deposits"/.test(query.sql))!;
      const reads = await rolledBack(database.db, async (trx) => {
        for (const index of [
          'crypto_deposits_shop_seen_idx',
          'crypto_deposits_shop_status_idx',
          'crypto_deposits_shop_amount_idx',
        ])
          await trx.executeQuery(CompiledQuery.raw(`drop index ${index}`));
        return wholeReadsOf(await planOf(trx, listQuery), large);
      });
      expect(reads.join('; ')).toMatch(/(Seq Scan|Sort of \d+ rows of) crypto_deposits/);
    });

    /** The rows each SELECT of a page read from the list's table, beside the rows it returned. */
    async function rowsReadOnPage(
      request: ListRequest,
      url: string,
    ): Promise<{ runs: Array<{ read: number; returned: number; sql: string }>; next?: string }> {
      let next: string | undefined;
      const queries = await recorder.during(async () => {
        next = await open(request, url);
      });
      const runs: Array<{ read: number; returned: number; sql: string }> = [];
      for (const query of queries) {
        if (!/^\s*(select|with)\b/i.test(query.sql)) continue;
        const run = await analyzedRunOf(database.db, query);
        runs.push({ read: rowsReadFrom(run, request.table), returned: run['Actual Rows'], sql: query.sql });
      }
      return { runs, next };
    }

    it.each(LIST_REQUESTS.filter((request) => !READ_BOUND_PENDING.has(request.name)))(
      '$name: each page reads a few pages of rows of its table, not a share of it',
      async (request) => {
        let url: string | undefined = request.url(sample);
        for (let page = 1; page <= 2 && url; page++) {
          const { runs, next } = await rowsReadOnPage(request, url);
          // A page that finds nothing reads nothing; what is checked is that no page reads more than the bound.
          expect(runs.length).toBeGreaterThan(0);
          for (const run of runs)
            expect(
              run.read,
              `page ${page} read ${run.read} rows of ${request.table} in: ${run.sql}`,
            ).toBeLessThanOrEqual(PAGE_READ_ROWS_MAX);
          url = next;
        }
      },
    );

    it.each(LIST_REQUESTS)('$name: the first and second page read through indexes', async (request) => {
      const first = await wholeReadsOfPage(request, request.url(sample));
      expect(first.read).toContain(request.table);
      expect(first.reads).toEqual([]);
      if (first.next) {
        const second = await wholeReadsOfPage(request, first.next);
        expect(second.read).toContain(request.table);
        expect(second.reads).toEqual([]);
      }
    });
  });
}

// `npm run bench:cabinet`: the cabinet of a shop with a year of history on PostgreSQL
// (issue 27, "Performance"). Absolute targets, no anchor:
//  - each list page and each object's page answers in <= 100 ms server time at p95,
//    the overview in <= 200 ms;
//  - the CSV export of the payments (1,000,000 rows) streams at >= 50,000 rows/s with
//    the gateway's RSS growing by < 50 MB.
// How: a fresh database; `paygate merchant create --password` (migrations, the merchant,
// its sandbox shop, its owner in the cabinet); the gateway started once on it (the first
// invoice through the API makes the sandbox key's first address a real one); stopped;
// the history written by SQL (bench/cabinet-loader.ts), VACUUM ANALYZE, `paygate ledger
// check`; then `paygate serve --role api` (the cabinet's pages, no workers) on it, the owner
// signed in over HTTP, and for each URL of PAGES: BENCH_CABINET_WARMUP requests discarded,
// then BENCH_CABINET_REQUESTS sequential ones. Server time is the gateway's own
// `Server-Timing: app;dur=…` (cabinet-http.ts: from the request's arrival until the answer
// is sent); the loopback time the client saw is shown beside it. A URL the gateway does
// not serve yet (404) is reported "not built" and skipped, never a failure.
//   BENCH_CABINET_PAYMENTS (1,000,000), BENCH_CABINET_DEPOSITS (1,000,000),
//   BENCH_CABINET_WALLET_DEPOSITS (200,000), BENCH_CABINET_EXPIRED_INVOICES (100,000),
//   BENCH_CABINET_PAYOUTS (4,000), BENCH_CABINET_EVENTS (1: a delivered webhook event per
//   final object; 0: none), BENCH_CABINET_REQUESTS (30), BENCH_CABINET_WARMUP (3),
//   BENCH_CABINET_KEEP=1 (keep the loaded database and print how to reuse it),
//   BENCH_CABINET_DATABASE_URL + BENCH_CABINET_ROOT_KEY (measure a database a kept run
//   loaded, without loading again), BENCH_CABINET_ONLY (a substring of the URLs to measure).
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { availableParallelism, cpus, loadavg, totalmem } from 'node:os';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import pg from 'pg';
import { createBenchDatabase } from './bench-database.ts';
import { loadCabinetData, type CabinetLoad } from './cabinet-loader.ts';
import { gatewaySetup, startGateway, type GatewaySetup } from './gateway-process.ts';
import { rssBytesOf } from './proc-stat.ts';
import { envNumber, verdict } from './verdict.ts';

const PAYGATE = fileURLToPath(new URL('../bin/paygate.js', import.meta.url));
const REQUESTS = envNumber('BENCH_CABINET_REQUESTS', 30);
const WARMUP = process.env.BENCH_CABINET_WARMUP === '0' ? 0 : envNumber('BENCH_CABINET_WARMUP', 3);
const LIST_TARGET_MS = 100;
const OVERVIEW_TARGET_MS = 200;
const EXPORT_ROWS_PER_S_TARGET = 50_000;
const EXPORT_RSS_GROWTH_TARGET_BYTES = 50 * 1024 * 1024;
const PASSWORD = 'bench cabinet password';
const ONLY = process.env.BENCH_CABINET_ONLY;

const out = (text: string) => process.stdout.write(text);
const run = promisify(execFile);

function loadOfEnvironment(): CabinetLoad {
  const deposits = envNumber('BENCH_CABINET_DEPOSITS', 1_000_000);
  const payouts = envNumber('BENCH_CABINET_PAYOUTS', 4_000);
  return {
    merchantId: '',
    shopId: '',
    payments: envNumber('BENCH_CABINET_PAYMENTS', 1_000_000),
    deposits,
    walletDeposits: Math.min(deposits, envNumber('BENCH_CABINET_WALLET_DEPOSITS', 200_000)),
    expiredInvoices: envNumber('BENCH_CABINET_EXPIRED_INVOICES', 100_000),
    payouts,
    batchedPayouts: Math.floor(payouts / 2 / 100) * 100,
    events: process.env.BENCH_CABINET_EVENTS !== '0',
  };
}

// ---- the URLs measured ----

/** What the bench knows of the loaded shop: ids to open and to search for. */
interface Sample {
  readonly shopId: string;
  readonly paymentId: string;
  readonly orderId: string;
  readonly invoiceId: string;
  readonly invoiceExternalId: string;
  readonly walletId: string;
  readonly walletAddress: string;
  readonly depositId: string;
  readonly depositTxHash: string;
  readonly payoutId: string;
  readonly payoutExternalId: string;
  readonly batchId: string;
  readonly eventId: string;
  /** A 30-day window in the middle of the year, as the filter form's days. */
  readonly from: string;
  readonly to: string;
}

type Kind = 'overview' | 'list' | 'detail';
interface PageUrl {
  readonly name: string;
  readonly kind: Kind;
  readonly path: string;
  /** The list's second page: the first page's "next" link is followed. */
  readonly secondPage?: boolean;
}

/**
 * Every URL the bench opens. To add one: a line here (a list also gets its filtered
 * variants from `list`). The list of issue 27; those not built yet are reported so.
 */
function pagesOf(sample: Sample): PageUrl[] {
  const shop = `/cabinet/shops/${sample.shopId}`;
  const days = `from=${sample.from}&to=${sample.to}`;
  const list = (path: string, filters: { status?: string; amount?: string; search?: string }): PageUrl[] => [
    { name: path, kind: 'list', path: `${shop}/${path}` },
    { name: `${path} page 2`, kind: 'list', path: `${shop}/${path}`, secondPage: true },
    ...(filters.status
      ? [{ name: `${path} status`, kind: 'list' as const, path: `${shop}/${path}?status=${filters.status}` }]
      : []),
    { name: `${path} days`, kind: 'list', path: `${shop}/${path}?${days}` },
    ...(filters.amount
      ? [{ name: `${path} amount`, kind: 'list' as const, path: `${shop}/${path}?${filters.amount}` }]
      : []),
    ...(filters.search
      ? [
          {
            name: `${path} search`,
            kind: 'list' as const,
            path: `${shop}/${path}?q=${encodeURIComponent(filters.search)}`,
          },
        ]
      : []),
  ];
  return [
    { name: 'overview', kind: 'overview', path: `${shop}/overview` },
    ...list('payments', { status: 'failed', amount: 'amount_min=1000.00&amount_max=1200.00', search: sample.orderId }),
    ...list('invoices', {
      status: 'underpaid',
      amount: 'amount_min=100&amount_max=150',
      search: sample.invoiceExternalId,
    }),
    ...list('wallets', { status: 'blocked', search: sample.walletAddress }),
    ...list('deposits', { status: 'held', amount: 'amount_min=10&amount_max=12', search: sample.depositTxHash }),
    ...list('payouts', { status: 'failed', amount: 'amount_min=10&amount_max=20', search: sample.payoutExternalId }),
    ...list('payouts/batches', { status: 'completed', search: sample.batchId }),
    ...list('refunds', { status: 'completed' }),
    // The operations table filters by operation type (its "status") and days; it has no amount or search.
    ...list('operations', { status: 'payout' }),
    ...list('webhooks/events', { status: 'failed', search: sample.paymentId }),
    { name: 'payments/:id', kind: 'detail', path: `${shop}/payments/${sample.paymentId}` },
    { name: 'deposits/:id', kind: 'detail', path: `${shop}/deposits/${sample.depositId}` },
    { name: 'payouts/:id', kind: 'detail', path: `${shop}/payouts/${sample.payoutId}` },
    { name: 'invoices/:id', kind: 'detail', path: `${shop}/invoices/${sample.invoiceId}` },
    { name: 'wallets/:id', kind: 'detail', path: `${shop}/wallets/${sample.walletId}` },
    { name: 'payouts/batches/:id', kind: 'detail', path: `${shop}/payouts/batches/${sample.batchId}` },
    { name: 'webhooks/events/:eventId', kind: 'detail', path: `${shop}/webhooks/events/${sample.eventId}` },
    // Built in part 1, measured on the same data.
    { name: 'crypto (part 1)', kind: 'list', path: `${shop}/crypto` },
    { name: 'audit (part 1)', kind: 'list', path: '/cabinet/audit' },
  ];
}

async function sampleOf(client: pg.Client, shopId: string): Promise<Sample> {
  const one = async (query: string): Promise<string> => {
    const { rows } = await client.query<{ value: string }>(query, [shopId]);
    if (!rows[0]) throw new Error(`no sample for: ${query}`);
    return rows[0].value;
  };
  // Rows from the middle of the year: neither the newest (first page) nor the oldest.
  const middle = (table: string, column: string, order = 'created_at') =>
    `select ${column}::text as value from ${table} where shop_id = $1 order by ${order} offset (select count(*) / 2 from ${table} where shop_id = $1) limit 1`;
  const mid = new Date(Date.now() - 180 * 86_400_000);
  return {
    shopId,
    paymentId: await one(middle('payments', 'id')),
    orderId: await one(middle('payments', 'order_id')),
    invoiceId: await one(middle('crypto_invoices', 'id')),
    invoiceExternalId: await one(middle('crypto_invoices', 'external_id')),
    walletId: await one(middle('crypto_wallets', 'id')),
    walletAddress: await one(middle('crypto_wallets', 'address')),
    depositId: await one(middle('crypto_deposits', 'id', 'seen_at')),
    depositTxHash: await one(middle('crypto_deposits', 'tx_id', 'seen_at')),
    payoutId: await one(middle('crypto_payouts', 'id')),
    payoutExternalId: await one(middle('crypto_payouts', 'external_id')),
    batchId: await one(middle('crypto_payout_batches', 'id')),
    eventId: await one(middle('webhook_events', 'id')),
    from: mid.toISOString().slice(0, 10),
    to: new Date(mid.getTime() + 29 * 86_400_000).toISOString().slice(0, 10),
  };
}

// ---- signing in and requests ----

class Browser {
  readonly cookies = new Map<string, string>();
  readonly base: string;
  constructor(base: string) {
    this.base = base;
  }

  async get(path: string): Promise<{ status: number; body: string; serverMs: number | undefined; clientMs: number }> {
    const started = performance.now();
    const response = await fetch(`${this.base}${path}`, { headers: this.headers(), redirect: 'manual' });
    const body = await response.text();
    const clientMs = performance.now() - started;
    this.keep(response);
    return { status: response.status, body, serverMs: serverTimeOf(response), clientMs };
  }

  async post(path: string, fields: Record<string, string>): Promise<Response> {
    const response = await fetch(`${this.base}${path}`, {
      method: 'POST',
      headers: { ...this.headers(), 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(fields).toString(),
      redirect: 'manual',
    });
    await response.arrayBuffer();
    this.keep(response);
    return response;
  }

  headers(): Record<string, string> {
    return { cookie: [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ') };
  }

  private keep(response: Response): void {
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const at = pair!.indexOf('=');
      const name = pair!.slice(0, at);
      const value = pair!.slice(at + 1);
      if (value === '' || /max-age=0/i.test(line)) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }
}

function serverTimeOf(response: Response): number | undefined {
  const match = /app;dur=([\d.]+)/.exec(response.headers.get('server-timing') ?? '');
  return match ? Number(match[1]) : undefined;
}

async function signIn(browser: Browser, email: string): Promise<void> {
  const page = await browser.get('/cabinet/sign-in');
  const csrf = /name="csrf" value="([^"]+)"/.exec(page.body)?.[1];
  if (!csrf) throw new Error(`no CSRF field on the sign-in page (HTTP ${page.status})`);
  const answer = await browser.post('/cabinet/sign-in', { csrf, email, password: PASSWORD });
  if (answer.status !== 303) throw new Error(`sign-in answered HTTP ${answer.status}`);
  const home = await browser.get('/cabinet/account');
  if (home.status !== 200) throw new Error(`signed in, but /cabinet/account answered HTTP ${home.status}`);
}

// ---- measuring ----

const percentile = (sorted: readonly number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;

interface Measured {
  readonly name: string;
  readonly kind: Kind;
  readonly status: 'measured' | 'not built' | 'one page' | 'error';
  readonly note?: string;
  readonly p50?: number;
  readonly p95?: number;
  readonly max?: number;
  readonly clientP95?: number;
}

/** The path of the first page's "next" link (a cursor), if the page has one. */
function nextLinkOf(body: string): string | undefined {
  const href = /href="([^"]*[?&](?:amp;)?cursor=[^"]+)"/.exec(body)?.[1];
  return href?.replaceAll('&amp;', '&');
}

async function measure(browser: Browser, page: PageUrl): Promise<Measured> {
  let path = page.path;
  const first = await browser.get(path);
  if (first.status === 404) return { name: page.name, kind: page.kind, status: 'not built' };
  if (first.status !== 200) return { name: page.name, kind: page.kind, status: 'error', note: `HTTP ${first.status}` };
  if (page.secondPage) {
    const next = nextLinkOf(first.body);
    // The loaded shop has too few of these (20 batches, a few refunds) for a second page.
    if (!next) return { name: page.name, kind: page.kind, status: 'one page' };
    path = next.startsWith('/') ? next : `${page.path.split('?')[0]}${next}`;
  }
  const server: number[] = [];
  const client: number[] = [];
  for (let index = 0; index < WARMUP + REQUESTS; index += 1) {
    const answer = await browser.get(path);
    if (answer.status !== 200)
      return { name: page.name, kind: page.kind, status: 'error', note: `HTTP ${answer.status} on ${path}` };
    if (answer.serverMs === undefined)
      return { name: page.name, kind: page.kind, status: 'error', note: 'no Server-Timing header' };
    if (index < WARMUP) continue;
    server.push(answer.serverMs);
    client.push(answer.clientMs);
  }
  server.sort((a, b) => a - b);
  client.sort((a, b) => a - b);
  return {
    name: page.name,
    kind: page.kind,
    status: 'measured',
    p50: percentile(server, 50),
    p95: percentile(server, 95),
    max: server.at(-1)!,
    clientP95: percentile(client, 95),
  };
}

interface ExportFigures {
  readonly rows: number;
  readonly seconds: number;
  readonly rssBeforeBytes: number;
  readonly rssPeakBytes: number;
  readonly rssAfterBytes: number;
}

/** Streams `path` to the end, counting lines, while the gateway's RSS is sampled every 100 ms. */
async function measureExport(browser: Browser, path: string, pid: number): Promise<ExportFigures | 'not built'> {
  const rssBeforeBytes = rssBytesOf(pid);
  let rssPeakBytes = rssBeforeBytes;
  const sampler = setInterval(() => {
    rssPeakBytes = Math.max(rssPeakBytes, rssBytesOf(pid));
  }, 100);
  try {
    const started = performance.now();
    const response = await fetch(`${browser.base}${path}`, { headers: browser.headers(), redirect: 'manual' });
    if (response.status === 404) {
      await response.arrayBuffer();
      return 'not built';
    }
    if (response.status !== 200 || !response.body) throw new Error(`${path}: HTTP ${response.status}`);
    let lines = 0;
    for await (const chunk of response.body) for (const byte of chunk as Uint8Array) if (byte === 10) lines += 1;
    const seconds = (performance.now() - started) / 1000;
    rssPeakBytes = Math.max(rssPeakBytes, rssBytesOf(pid));
    return { rows: lines - 1, seconds, rssBeforeBytes, rssPeakBytes, rssAfterBytes: rssBytesOf(pid) };
  } finally {
    clearInterval(sampler);
  }
}

// ---- the run ----

async function prepare(): Promise<{
  setup: GatewaySetup;
  shopId: string;
  merchantId: string;
  drop?: () => Promise<void>;
}> {
  const reuseUrl = process.env.BENCH_CABINET_DATABASE_URL;
  if (reuseUrl) {
    const rootKey = process.env.BENCH_CABINET_ROOT_KEY;
    if (!rootKey)
      throw new Error('BENCH_CABINET_DATABASE_URL needs the BENCH_CABINET_ROOT_KEY the loading run printed');
    const setup = await gatewaySetup('postgres', reuseUrl, { PAYGATE_ROOT_KEY: rootKey });
    // A newer checkout's migrations (indexes on a million rows take a while) before the gateway starts.
    const migrated = await run(process.execPath, [PAYGATE, 'migrate'], { env: setup.env });
    out(`paygate migrate: ${migrated.stdout.trim().split('\n').at(-1)}\n`);
    const client = new pg.Client({ connectionString: reuseUrl });
    await client.connect();
    try {
      const { rows } = await client.query<{ shop_id: string; merchant_id: string }>(
        `select s.id as shop_id, s.merchant_id from shops s join payments p on p.shop_id = s.id group by s.id order by count(*) desc limit 1`,
      );
      if (!rows[0]) throw new Error('BENCH_CABINET_DATABASE_URL holds no loaded shop');
      out(`reusing the loaded database ${reuseUrl}\n`);
      return { setup, shopId: rows[0].shop_id, merchantId: rows[0].merchant_id };
    } finally {
      await client.end();
    }
  }
  const database = await createBenchDatabase('cabinet');
  const setup = await gatewaySetup('postgres', database.url, { PAYGATE_ADDRESS_POOL_SIZE: '0' });
  const email = `bench-${randomBytes(4).toString('hex')}@example.test`;
  const created = await run(
    process.execPath,
    [PAYGATE, 'merchant', 'create', '--name', 'Cabinet bench', '--email', email, '--password', PASSWORD, '--json'],
    { env: setup.env },
  );
  const merchant = JSON.parse(created.stdout.trim().split('\n').at(-1)!) as {
    merchant_id: string;
    shop_id: string;
    api_key: string;
  };
  // Started once on the migrated, empty database; the first invoice derives the sandbox key's first address.
  const gateway = await startGateway(setup);
  try {
    const response = await fetch(`${gateway.url}/v1/crypto/invoices`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${merchant.api_key}` },
      body: JSON.stringify({ external_id: 'bench-first', amount: '1', network: 'TRC20' }),
    });
    if (response.status !== 201) throw new Error(`the first invoice: HTTP ${response.status} ${await response.text()}`);
  } finally {
    await gateway.stop();
  }
  const load = { ...loadOfEnvironment(), merchantId: merchant.merchant_id, shopId: merchant.shop_id };
  out(
    `loading: ${load.payments} payments, ${load.deposits} deposits (${load.walletDeposits} to ${Math.ceil(load.walletDeposits / 10)} wallets), ` +
      `${load.expiredInvoices} unpaid invoices, ${load.payouts} payouts, events ${load.events ? 'on' : 'off'}\n`,
  );
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  const started = performance.now();
  try {
    await loadCabinetData(client, load, (line) => out(`${line}\n`));
  } finally {
    await client.end();
  }
  out(`loaded in ${((performance.now() - started) / 60_000).toFixed(1)} min\n`);
  const check = await run(process.execPath, [PAYGATE, 'ledger', 'check'], { env: setup.env }).catch(
    (error: { stdout?: string; stderr?: string }) => {
      throw new Error(`paygate ledger check failed on the loaded data:\n${error.stdout ?? ''}${error.stderr ?? ''}`);
    },
  );
  out(`paygate ledger check: ${check.stdout.trim().split('\n').at(-1)}\n`);
  if (process.env.BENCH_CABINET_KEEP === '1') {
    out(
      `kept: BENCH_CABINET_DATABASE_URL=${database.url} BENCH_CABINET_ROOT_KEY=${setup.env.PAYGATE_ROOT_KEY} npm run bench:cabinet\n`,
    );
    return { setup, shopId: merchant.shop_id, merchantId: merchant.merchant_id };
  }
  return { setup, shopId: merchant.shop_id, merchantId: merchant.merchant_id, drop: database.drop };
}

function targetOf(kind: Kind): number {
  return kind === 'overview' ? OVERVIEW_TARGET_MS : LIST_TARGET_MS;
}

function lineOf(result: Measured): string {
  const name = result.name.padEnd(26);
  if (result.status === 'not built') return `${name} NOT BUILT (404): skipped`;
  if (result.status === 'one page') return `${name} one page only in the loaded data: skipped`;
  if (result.status === 'error') return `${name} ERROR: ${result.note}`;
  const target = targetOf(result.kind);
  return (
    `${name} p50 ${result.p50!.toFixed(1)} ms, p95 ${result.p95!.toFixed(1)} ms, max ${result.max!.toFixed(1)} ms ` +
    `(client p95 ${result.clientP95!.toFixed(1)} ms); target p95 <= ${target} ms ${verdict(result.p95! <= target)}`
  );
}

const { setup, shopId, merchantId, drop } = await prepare();
const failures: string[] = [];
try {
  const email = `bench-owner-${randomBytes(4).toString('hex')}@example.test`;
  await run(
    process.execPath,
    [PAYGATE, 'user', 'create', '--email', email, '--password', PASSWORD, '--merchant', merchantId, '--role', 'owner'],
    { env: setup.env },
  );
  const gateway = await startGateway(setup, 'api');
  try {
    const browser = new Browser(gateway.url);
    await signIn(browser, email);
    const client = new pg.Client({ connectionString: setup.env.DATABASE_URL });
    await client.connect();
    const sample = await sampleOf(client, shopId).finally(() => client.end());
    const cpu = cpus()[0]?.model ?? 'unknown CPU';
    out(
      `machine: ${availableParallelism()} cores (${cpu}), ${(totalmem() / 2 ** 30).toFixed(0)} GB, load ${loadavg()
        .map((value) => value.toFixed(2))
        .join(
          ' ',
        )}; ${REQUESTS} requests per URL after ${WARMUP} warm-up, one at a time; server time from Server-Timing\n`,
    );
    const results: Measured[] = [];
    for (const page of pagesOf(sample)) {
      if (ONLY && !page.name.includes(ONLY)) continue;
      const result = await measure(browser, page);
      results.push(result);
      out(`${lineOf(result)}\n`);
      if (result.status === 'error') failures.push(`${result.name}: ${result.note}`);
    }
    let exportLine: string;
    const exported =
      ONLY && !'payments.csv'.includes(ONLY)
        ? undefined
        : await measureExport(browser, `/cabinet/shops/${shopId}/payments.csv`, gateway.pid);
    if (exported === undefined) exportLine = 'payments.csv: not measured (BENCH_CABINET_ONLY)';
    else if (exported === 'not built') exportLine = 'payments.csv               NOT BUILT (404): skipped';
    else {
      const rowsPerSecond = exported.rows / exported.seconds;
      const growth = exported.rssPeakBytes - exported.rssBeforeBytes;
      const mb = (bytes: number) => `${(bytes / 2 ** 20).toFixed(0)} MB`;
      exportLine =
        `payments.csv: ${exported.rows} rows in ${exported.seconds.toFixed(1)} s = ${Math.round(rowsPerSecond)} rows/s ` +
        `(target >= ${EXPORT_ROWS_PER_S_TARGET} ${verdict(rowsPerSecond >= EXPORT_ROWS_PER_S_TARGET)}); ` +
        `gateway RSS ${mb(exported.rssBeforeBytes)} before, ${mb(exported.rssPeakBytes)} at most, ${mb(exported.rssAfterBytes)} after: ` +
        `+${mb(growth)} (target < 50 MB ${verdict(growth < EXPORT_RSS_GROWTH_TARGET_BYTES)})`;
    }
    out(`${exportLine}\n`);
    const built = results.filter((result) => result.status !== 'not built');
    const missing = results.filter((result) => result.status === 'not built').map((result) => result.name);
    out(`\nsummary (cabinet, ${built.length} URLs measured)\n`);
    for (const result of built) out(`  ${lineOf(result)}\n`);
    out(`  ${exportLine}\n`);
    if (missing.length) out(`  not built yet (${missing.length}): ${missing.join(', ')}\n`);
  } finally {
    await gateway.stop();
  }
} finally {
  await setup.cleanUp();
  await drop?.();
}
if (failures.length) {
  out(`\nfailed: ${failures.join('; ')}\n`);
  process.exitCode = 1;
}

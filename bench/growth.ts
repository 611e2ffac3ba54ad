// `npm run bench:growth [-- --scale 0.01]`: the API's hot paths on an empty
// database against the same on a database holding a year of history (issue 30,
// Part B items 4 and 6), on the PostgreSQL server of the other benchmarks.
//  1. Two databases: "loaded" gets SHOPS merchants and, by SQL generate_series
//     (bench/growth-loader.ts), at scale 1 10,000,000 payments, 1,000,000 deposits,
//     1,000,000 payouts, ~12,000,000 webhook events (each with a delivery and an
//     attempt) and ~19,000,000 ledger history entries over 12 months, one shop big
//     and the rest small, every deposit but the last day's swept to the hot wallet; the
//     simulated chain then holds what that year leaves on it (the unswept addresses' USDT,
//     the hot wallet's), and the loaded side's custody check must balance on it;
//     "empty" gets the same merchants and nothing else.
//  2. The mix: each operation in alternating phases, empty then loaded, each side a
//     `paygate serve --role api` of its own (bench/alternating-phases.ts's way: a
//     busy machine falls on both sides alike), the big shop's key on both. Targets:
//     loaded/empty req/s >= 0.8, p99 loaded/empty <= 2, list pages p95 <= 50 ms.
//  3. The workers' half, per side: `paygate serve --role worker` processes drain what
//     the API phases left (webhook deliveries to a loopback receiver, payouts to the
//     simulated chain) and credit deposits sent through the sandbox chain (each side
//     has a chain of its own); then, loaded first, the same deliveries made due again
//     and drained alone by fresh workers. The drain's ratio is over both rounds. By
//     default webhook delivery has a process of its own beside one of every other
//     worker (PAYGATE_WORKERS; BENCH_GROWTH_WORKERS=one: a single worker process).
//  4. Item 6, on the loaded database: two API processes and one worker (and a Redis
//     for the shared rate-limit counters), the mix driven through both at once; then
//     every webhook delivered once (the receiver counts by event id), every deposit
//     credited once, every payout sent once (the recipient's USDT on the chain).
// Index sizes and buffer hit ratios of the loaded database are printed after the mix.
//   --scale N (BENCH_GROWTH_SCALE, default 1), BENCH_GROWTH_SHOPS (20), BENCH_DURATION_S (10),
//   BENCH_WARMUP_S (3), BENCH_PAIRS (2), BENCH_CONNECTIONS (20), BENCH_GROWTH_BATCH (2,000:
//   requests of a phase that consumes prepared ids or addresses), BENCH_GROWTH_DEPOSITS (500),
//   BENCH_GROWTH_SKIP_CLUSTER=1, BENCH_DATABASE_URL, BENCH_GROWTH_KEEP=1 (keep the loaded database),
//   BENCH_GROWTH_WORKERS (split or one).
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { createServer as createNetServer } from 'node:net';
import { availableParallelism, loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { parseArgs, promisify } from 'node:util';
import pg from 'pg';
import { measuredPhase, type MeasuredPhase, type Side } from './alternating-phases.ts';
import { systemClock } from '../src/clock.ts';
import { openDatabase } from '../src/db/database.ts';
import { inTransaction } from '../src/db/transaction.ts';
import { ensureAccounts, merchantAccountKey, systemAccountKey } from '../src/ledger/ledger-accounts.ts';
import { transfer } from '../src/ledger/ledger-service.ts';
import { BENCH_SERVER_URL, createBenchDatabase } from './bench-database.ts';
import { createBenchMerchant, gatewaySetup, type BenchMerchant, type GatewaySetup } from './gateway-process.ts';
import { HISTORY_BLOCKS } from './cabinet-loader.ts';
import { growthShopLoads, loadGrowthData } from './growth-loader.ts';
import { loadedCustody } from './growth-sweeps.ts';
import type { ReconciliationView } from '../src/crypto/custody/reconciliation-service.ts';
import { runLoad, type LoadResult, type LoadSpec } from './load-generator.ts';
import { cpuSecondsOf } from './proc-stat.ts';
import { startServerProcess, type ServerProcess } from './server-process.ts';
import { measurePostgresCpu } from './server-cpu.ts';
import { envNumber, verdict } from './verdict.ts';
import { USDT_CONTRACT_MAINNET } from '../src/crypto/tron/trc20-usdt.ts';
import { parseTronHexAddress, tronAddress, type TronAddress } from '../src/crypto/tron/address.ts';
import { createSimulatorControl } from '../src/crypto/simchain/control-client.ts';
import { createTronNodeClient } from '../src/crypto/tron/node-client.ts';
import { encodeListCursor } from '../src/db/list-cursor.ts';

const { values: cli } = parseArgs({ options: { scale: { type: 'string' } }, allowPositionals: false });
const SCALE = Number(cli.scale ?? process.env.BENCH_GROWTH_SCALE ?? 1);
if (!(SCALE > 0)) throw new Error(`--scale must be a positive number, got ${cli.scale}`);
const SHOPS = envNumber('BENCH_GROWTH_SHOPS', 20);
const DURATION_S = envNumber('BENCH_DURATION_S', 10);
const WARMUP_S = envNumber('BENCH_WARMUP_S', 3);
const PAIRS = envNumber('BENCH_PAIRS', 2);
const CONNECTIONS = envNumber('BENCH_CONNECTIONS', 20);
const BATCH = envNumber('BENCH_GROWTH_BATCH', 2_000);
const DEPOSITS = envNumber('BENCH_GROWTH_DEPOSITS', 500);
const PAYGATE = fileURLToPath(new URL('../bin/paygate.js', import.meta.url));
const TARGETS = { ratio: 0.8, p99Ratio: 2, listP95Ms: 50 } as const;
/** The big shop's USDT: far more than a run pays out (2,000-payout phases of 1.50 USDT), and the faucet helper's most. */
const FUNDING_USDT = '1000000';
const UNIQUE = '@@unique@@';
const JSON_HEADERS = { 'content-type': 'application/json' };
/** A sweep threshold above any address's USDT. */
const SWEEP_NEVER_USDT = '1000000000000';
/** The loaded deposits of the last day stay unswept: the sweeper's backlog (a few thousand at scale 1). */
const UNSWEPT_SECONDS = 86_400;
/** How long the workers may take to drain what a run left, before the run says so and goes on. */
const DRAIN_LIMIT_MS = 600_000;

const out = (text: string) => process.stdout.write(text);
const mean = (values: readonly number[]) => values.reduce((sum, value) => sum + value, 0) / Math.max(1, values.length);
const secondsSince = (started: number) => (performance.now() - started) / 1000;
const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

// ---------------------------------------------------------------- processes

function startChain(setup: GatewaySetup): Promise<ServerProcess> {
  return startServerProcess({
    label: 'simulated chain',
    script: PAYGATE,
    args: ['chain', 'simulate', '--port', '0', '--seed', `bench-growth-${randomBytes(4).toString('hex')}`],
    env: setup.env,
    ready: /simulated TRON chain .*listening on (\S+)/,
  });
}

function startApi(setup: GatewaySetup, label: string): Promise<ServerProcess> {
  return startServerProcess({
    label,
    script: PAYGATE,
    args: ['serve', '--role', 'api', '--port', '0'],
    env: setup.env,
    ready: /paygate listening on (\S+)/,
  });
}

function startWorker(setup: GatewaySetup, label: string): Promise<ServerProcess> {
  return startServerProcess({
    label,
    script: PAYGATE,
    args: ['serve', '--role', 'worker'],
    env: setup.env,
    ready: /paygate workers (running)/,
  });
}

async function freePort(): Promise<number> {
  const server = createNetServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** A Redis of its own for item 6 (the API processes share their rate-limit counters through it). */
async function startRedis(): Promise<{ url: string; pid: number; stop(): Promise<void> }> {
  const port = await freePort();
  const child: ChildProcess = spawn(
    process.env.BENCH_REDIS_SERVER ?? 'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  await new Promise<void>((resolve, reject) => {
    let output = '';
    child.on('error', reject);
    child.on('exit', (code) => reject(new Error(`redis-server exited ${code}: ${output}`)));
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      if (/Ready to accept connections/.test(output)) resolve();
    });
  });
  child.stdout!.resume();
  return {
    url: `redis://127.0.0.1:${port}`,
    pid: child.pid!,
    stop: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

/** A loopback webhook receiver counting deliveries per event id (the signed body's `id`). */
async function startReceiver(): Promise<{ url: string; counts: Map<string, number>; stop(): Promise<void> }> {
  const counts = new Map<string, number>();
  const server: Server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString()));
    request.on('end', () => {
      try {
        const id = (JSON.parse(body) as { id?: string }).id ?? 'no id';
        counts.set(id, (counts.get(id) ?? 0) + 1);
      } catch {
        counts.set('unparsable', (counts.get('unparsable') ?? 0) + 1);
      }
      response.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    counts,
    stop: () => new Promise((resolve) => server.close(() => resolve(undefined))),
  };
}

// ---------------------------------------------------------------- a side (a database and its gateway)

interface GrowthSide {
  readonly name: 'empty' | 'loaded';
  readonly databaseUrl: string;
  readonly setup: GatewaySetup;
  readonly merchants: readonly BenchMerchant[];
  readonly client: pg.Client;
  /** The side's simulated chain (its CPU is read beside the worker's). */
  readonly chainPid: number;
  api?: ServerProcess;
  /** The sandbox hot wallet of the side's key. */
  hotWallet?: string;
  /** Payments created by the API phases and still pending: the pay phases take them in turn. */
  pending: string[];
  /** Invoices created by the API phases: the deposits go to their addresses. */
  invoices: Array<{ address: string; amount: string }>;
}

async function createMerchants(setup: GatewaySetup, count: number): Promise<BenchMerchant[]> {
  const merchants: BenchMerchant[] = [];
  while (merchants.length < count) {
    const wave = Math.min(5, count - merchants.length);
    merchants.push(...(await Promise.all(Array.from({ length: wave }, () => createBenchMerchant(setup)))));
  }
  return merchants;
}

/**
 * Gives the big shop FUNDING_USDT on both sides of custody: on chain, minted to the sandbox hot wallet
 * by the faucet helper, and on the ledger, a transfer from the hot wallet to the shop's USDT main
 * account as a final deposit makes. With the ledger's side alone, the worker's custody check finds
 * that USDT missing on chain, pauses signing, and every payout is 503 until an operator looks.
 */
async function fundBigShop(side: GrowthSide): Promise<void> {
  await post(side, '/v1/test_helpers/crypto/faucet', { usdt: FUNDING_USDT });
  const handle = await openDatabase({ url: side.databaseUrl, poolSize: 2 });
  try {
    await inTransaction(handle.db, async (tx) => {
      const [main, hotWallet] = await ensureAccounts(tx, systemClock, [
        merchantAccountKey('sandbox', side.merchants[0]!.merchant_id, 'USDT', 'main'),
        systemAccountKey('sandbox', 'hot_wallet', 'USDT', 0),
      ]);
      await transfer(tx, systemClock, {
        id: `bench-growth-funding:${side.merchants[0]!.shop_id}`,
        debitAccountId: hotWallet!.id,
        creditAccountId: main!.id,
        amount: BigInt(FUNDING_USDT) * 1_000_000n,
        type: 'deposit',
        reference: { type: 'deposit', id: 'bench-growth-funding' },
      });
    });
  } finally {
    await handle.close();
  }
}

/**
 * Puts on the simulated chain what the loaded year leaves there (bench/growth-sweeps.ts): each unswept
 * address's USDT, and on the hot wallet what was swept less what was paid out; then mines past the
 * history's blocks, so every loaded transfer is at or below the solidified block. The loaded side's
 * custody check then balances because the chain holds what the ledger says.
 */
async function fundLoadedChain(side: GrowthSide, chainUrl: string, hotWallet: string): Promise<void> {
  const started = performance.now();
  const control = createSimulatorControl(chainUrl);
  const custody = await loadedCustody((text) => side.client.query(text));
  await control.faucet(tronAddress(hotWallet), { usdt: custody.hotWalletMicro });
  for (const { address, micro } of custody.unswept) await control.faucet(tronAddress(address), { usdt: micro });
  let { solidifiedBlock } = await control.mine(1, Date.now());
  while (solidifiedBlock < HISTORY_BLOCKS)
    ({ solidifiedBlock } = await control.mine(Math.min(1_000, HISTORY_BLOCKS - solidifiedBlock), Date.now()));
  out(
    `  the loaded history on the chain: ${custody.unswept.length} unswept addresses, the hot wallet ${custody.hotWalletMicro / 1_000_000n} USDT, solidified block ${solidifiedBlock} (${secondsSince(started).toFixed(1)} s)\n`,
  );
}

/** The loaded side's custody check, run once before any worker (`paygate crypto reconcile`): balanced, and how long it took. */
async function checkLoadedCustody(side: GrowthSide): Promise<boolean> {
  const started = performance.now();
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [PAYGATE, 'crypto', 'reconcile', '--book', 'sandbox', '--json'],
    { env: side.setup.env, maxBuffer: 1 << 24 },
  ).catch((error: { stdout?: string }) => ({ stdout: error.stdout ?? '' }));
  const [view] = JSON.parse(stdout.trim().split('\n').at(-1) || '[]') as ReconciliationView[];
  const balanced = view?.outcome === 'balanced';
  out(
    `  custody check on the loaded database: ${view?.outcome ?? 'no answer'} (${view?.error ?? `${view?.on_chain?.addresses_read} addresses read, expected ${view?.expected} USDT, difference ${view?.difference}`}) in ${secondsSince(started).toFixed(1)} s  ${verdict(balanced)}\n`,
  );
  return balanced;
}

async function waitUntil(what: string, done: () => Promise<boolean>, limitMs = DRAIN_LIMIT_MS): Promise<number> {
  const started = performance.now();
  while (!(await done())) {
    if (performance.now() - started > limitMs) throw new Error(`${what}: not done after ${limitMs / 1000} s`);
    await delay(250);
  }
  return secondsSince(started);
}

const count = async (client: pg.Client, query: string, params: unknown[] = []) =>
  Number((await client.query<{ n: string }>(query, params)).rows[0]!.n);

/** Funds the big shop, and fills its address pool with a worker (the API phases create invoices from it). */
async function prepareSide(side: GrowthSide, size: number): Promise<void> {
  await fundBigShop(side);
  const worker = await startWorker(side.setup, `${side.name} pool worker`);
  try {
    const seconds = await waitUntil(
      `${side.name}: the address pool`,
      async () => (await count(side.client, 'select count(*) as n from crypto_address_pool')) >= size,
    );
    out(`  ${side.name}: address pool of ${size} filled in ${seconds.toFixed(1)} s\n`);
  } finally {
    await worker.stop();
  }
}

async function post(side: GrowthSide, path: string, body: unknown, origin = side.api!.url): Promise<unknown> {
  const response = await fetch(`${origin}${path}`, {
    method: 'POST',
    headers: { ...JSON_HEADERS, authorization: `Bearer ${side.merchants[0]!.api_key}` },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  if (response.status >= 300) throw new Error(`POST ${path}: HTTP ${response.status} ${text}`);
  return text ? JSON.parse(text) : undefined;
}

// ---------------------------------------------------------------- the mix

interface Operation {
  readonly name: string;
  readonly list: boolean;
  /** The load of one phase on `side`, or undefined when the side has nothing left for it. */
  spec(side: GrowthSide, phase: number): Promise<Omit<LoadSpec, 'durationS' | 'connections' | 'origin'>>;
  /** A phase of a fixed number of requests (ids or addresses it consumes) rather than of DURATION_S; a spec may set its own. */
  readonly amount?: number;
}

interface OperationOutcome {
  readonly name: string;
  readonly list: boolean;
  readonly empty: MeasuredPhase[];
  readonly loaded: MeasuredPhase[];
}

const auth = (side: GrowthSide) => ({ authorization: `Bearer ${side.merchants[0]!.api_key}` });
const randomRecipient = (): TronAddress => {
  const parsed = parseTronHexAddress(`41${randomBytes(20).toString('hex')}`);
  if (!parsed.ok) throw new Error(parsed.problem);
  return parsed.address;
};

/** Up to `n` of the big shop's payments spread over its history (a fresh random sample each call). */
async function samplePayments(side: GrowthSide, n: number) {
  const { rows } = await side.client.query<{ id: string; order_id: string; created_at: Date }>(
    `select id, order_id, created_at from payments where shop_id = $1 order by random() limit $2`,
    [side.merchants[0]!.shop_id, n],
  );
  return rows;
}

function mix(receiverUrl: string): Operation[] {
  const payRounds = 1 + PAIRS;
  return [
    {
      name: 'POST /v1/payments',
      list: false,
      spec: async (side) => ({
        method: 'POST',
        paths: ['/v1/payments'],
        headers: { ...JSON_HEADERS, ...auth(side) },
        body: JSON.stringify({
          amount: 1500.5,
          currency: 'RUB',
          order_id: `growth-${UNIQUE}`,
          callback_url: receiverUrl,
        }),
        uniqueBodyToken: UNIQUE,
        distinctIdempotencyKey: true,
      }),
    },
    {
      // Paying writes the payment, its ledger transfer with two history entries, the webhook event and delivery.
      name: 'POST /v1/test_helpers/payments/{id}/pay',
      list: false,
      amount: BATCH,
      spec: async (side, phase) => {
        if (phase === 0) {
          const { rows } = await side.client.query<{ id: string }>(
            `select id from payments where shop_id = $1 and status = 'pending' and order_id like 'growth-%' order by created_at limit $2`,
            [side.merchants[0]!.shop_id, BATCH * payRounds],
          );
          side.pending = rows.map((row) => row.id);
        }
        // As many a phase as the creating phases left for every phase, up to BENCH_GROWTH_BATCH.
        const perPhase = Math.min(BATCH, Math.floor(side.pending.length / payRounds));
        if (perPhase < 10)
          throw new Error(`${side.name}: ${side.pending.length} pending payments for ${payRounds} pay phases`);
        const ids = side.pending.slice(phase * perPhase, (phase + 1) * perPhase);
        return {
          amount: perPhase,
          method: 'POST',
          paths: ids.map((id) => `/v1/test_helpers/payments/${id}/pay`),
          headers: auth(side),
          distinctIdempotencyKey: false,
        };
      },
    },
    {
      name: 'GET /v1/payments/{id}',
      list: false,
      spec: async (side) => ({
        method: 'GET',
        paths: (await samplePayments(side, 500)).map((row) => `/v1/payments/${row.id}`),
        headers: auth(side),
        distinctIdempotencyKey: false,
      }),
    },
    {
      name: 'list: newest first',
      list: true,
      spec: async (side) => ({
        method: 'GET',
        paths: ['/v1/payments?limit=20'],
        headers: auth(side),
        distinctIdempotencyKey: false,
      }),
    },
    {
      name: 'list: status=paid',
      list: true,
      spec: async (side) => ({
        method: 'GET',
        paths: ['/v1/payments?limit=20&status=paid'],
        headers: auth(side),
        distinctIdempotencyKey: false,
      }),
    },
    {
      name: 'list: order_id',
      list: true,
      spec: async (side) => ({
        method: 'GET',
        paths: (await samplePayments(side, 500)).map(
          (row) => `/v1/payments?limit=20&order_id=${encodeURIComponent(row.order_id)}`,
        ),
        headers: auth(side),
        distinctIdempotencyKey: false,
      }),
    },
    {
      // The API has no date filter: a page from a cursor anywhere in the year is what a date range's first page reads.
      name: 'list: cursor pages across the year',
      list: true,
      spec: async (side) => ({
        method: 'GET',
        paths: (await samplePayments(side, 500)).map(
          (row) => `/v1/payments?limit=20&cursor=${encodeListCursor({ createdAt: row.created_at, id: row.id })}`,
        ),
        headers: auth(side),
        distinctIdempotencyKey: false,
      }),
    },
    {
      name: 'POST /v1/crypto/invoices',
      list: false,
      amount: BATCH,
      spec: async (side) => ({
        method: 'POST',
        paths: ['/v1/crypto/invoices'],
        headers: { ...JSON_HEADERS, ...auth(side) },
        body: JSON.stringify({
          external_id: `growth-${UNIQUE}`,
          amount: '25.5',
          network: 'TRC20',
          callback_url: receiverUrl,
        }),
        uniqueBodyToken: UNIQUE,
        distinctIdempotencyKey: false,
      }),
    },
    {
      name: 'POST /v1/crypto/payouts',
      list: false,
      amount: BATCH,
      spec: async (side) => ({
        method: 'POST',
        paths: ['/v1/crypto/payouts'],
        headers: { ...JSON_HEADERS, ...auth(side) },
        // A recipient of its own per payout: item 6 counts each one's USDT on the chain.
        rotatingBodies: Array.from({ length: BATCH }, () =>
          JSON.stringify({
            external_id: `growth-${UNIQUE}`,
            network: 'TRC20',
            amount: '1.50',
            address: randomRecipient(),
          }),
        ),
        uniqueBodyToken: UNIQUE,
        distinctIdempotencyKey: false,
      }),
    },
  ];
}

const failedStatusesText = (statuses: Readonly<Record<string, number>> | undefined) => {
  const entries = Object.entries(statuses ?? {});
  return entries.length === 0 ? '' : ` (${entries.map(([status, n]) => `${n} × ${status}`).join(', ')})`;
};

function phaseLine(label: string, side: string, { result, serverCpuMs, databaseCpuMs }: MeasuredPhase): string {
  return (
    `  ${label.padEnd(7)} ${side.padEnd(7)} ${result.requestsPerSecond.toFixed(0).padStart(6)} req/s  p50 ${result.p50Ms.toFixed(1).padStart(6)}` +
    `  p95 ${result.p95Ms.toFixed(1).padStart(6)}  p99 ${result.p99Ms.toFixed(1).padStart(6)} ms  errors ${result.errors}${failedStatusesText(result.failedStatuses)}` +
    `  CPU ms/req: api ${serverCpuMs.toFixed(2)}, PostgreSQL ${databaseCpuMs?.toFixed(2) ?? '?'}\n`
  );
}

async function runOperation(operation: Operation, sides: readonly GrowthSide[]): Promise<OperationOutcome> {
  out(
    `\n${operation.name}: ${CONNECTIONS} connections, ${operation.amount ? `${operation.amount} requests` : `${DURATION_S} s`} a phase, ${PAIRS} pairs after a warm-up each\n`,
  );
  const phases: Record<'empty' | 'loaded', MeasuredPhase[]> = { empty: [], loaded: [] };
  for (let phase = 0; phase <= PAIRS; phase++) {
    for (const side of sides) {
      const spec = await operation.spec(side, phase);
      const measuredSide: Side = {
        pid: side.api!.pid,
        spec: {
          ...spec,
          origin: side.api!.url,
          // autocannon refuses more connections than requests.
          connections: Math.min(CONNECTIONS, spec.amount ?? operation.amount ?? CONNECTIONS),
          amount: spec.amount ?? operation.amount,
        },
      };
      const measured = await measuredPhase(measuredSide, phase === 0 ? WARMUP_S : DURATION_S, true);
      out(phaseLine(phase === 0 ? 'warm-up' : String(phase), side.name, measured));
      if (phase > 0) phases[side.name].push(measured);
    }
  }
  return { name: operation.name, list: operation.list, empty: phases.empty, loaded: phases.loaded };
}

interface Judged {
  readonly line: string;
  readonly ratio: number;
  readonly p99Ratio: number;
  readonly listP95: number | undefined;
}

function judge(outcome: OperationOutcome): Judged {
  const rps = (phases: MeasuredPhase[]) => mean(phases.map((phase) => phase.result.requestsPerSecond));
  const p99 = (phases: MeasuredPhase[]) => mean(phases.map((phase) => phase.result.p99Ms));
  const ratio = rps(outcome.loaded) / rps(outcome.empty);
  const p99Ratio = p99(outcome.loaded) / Math.max(0.1, p99(outcome.empty));
  const errors = [...outcome.empty, ...outcome.loaded].reduce((sum, phase) => sum + phase.result.errors, 0);
  const listP95 = outcome.list ? Math.max(...outcome.loaded.map((phase) => phase.result.p95Ms)) : undefined;
  const line =
    `  ${outcome.name.padEnd(40)} ${rps(outcome.empty).toFixed(0).padStart(6)} → ${rps(outcome.loaded).toFixed(0).padStart(6)} req/s` +
    `  ratio ${ratio.toFixed(2)} (>= ${TARGETS.ratio}) ${verdict(ratio >= TARGETS.ratio)}` +
    `  p99 ${p99(outcome.empty).toFixed(1)} → ${p99(outcome.loaded).toFixed(1)} ms, ×${p99Ratio.toFixed(2)} (<= ${TARGETS.p99Ratio}) ${verdict(p99Ratio <= TARGETS.p99Ratio)}` +
    (listP95 === undefined
      ? ''
      : `  p95 loaded ${listP95.toFixed(1)} ms (<= ${TARGETS.listP95Ms}) ${verdict(listP95 <= TARGETS.listP95Ms)}`) +
    (errors > 0 ? `  errors ${errors}` : '');
  return { line, ratio, p99Ratio, listP95 };
}

// ---------------------------------------------------------------- the workers' half

/** Sends `n` deposits through the sandbox chain to invoices the API phases created, and mines them final. */
async function sendDeposits(side: GrowthSide, n: number, origins: readonly string[]): Promise<number> {
  const { rows } = await side.client.query<{ address: string; amount_micro: string }>(
    `select address, amount_micro::text from crypto_invoices where shop_id = $1 and status = 'pending' and external_id like 'growth-%'
      order by created_at limit $2`,
    [side.merchants[0]!.shop_id, n],
  );
  const amount = (micro: string) =>
    (BigInt(micro) / 1_000_000n).toString() + '.' + (BigInt(micro) % 1_000_000n).toString().padStart(6, '0');
  for (const [index, row] of rows.entries())
    await post(
      side,
      '/v1/test_helpers/crypto/deposits',
      { address: row.address, amount: amount(row.amount_micro) },
      origins[index % origins.length],
    );
  await post(side, '/v1/test_helpers/crypto/blocks', { count: 20 }, origins[0]);
  return rows.length;
}

interface Drained {
  readonly deliveries: number;
  readonly deliverySeconds: number;
  readonly payouts: number;
  readonly payoutSeconds: number;
  readonly deposits: number;
  readonly depositSeconds: number;
  readonly workerCpuSeconds: number;
  /** The side's simulated chain's CPU meanwhile (a node's work, on this machine only because it is simulated). */
  readonly chainCpuSeconds: number;
  /** Where the database's time went meanwhile: sessions by wait, statements by total time. */
  readonly databaseTime: string;
  /** When the deliveries' attempts started (attemptTimeline). */
  readonly timeline: string;
  /** Created in this window: the deliveries counted. */
  readonly deliveryWindow: readonly [Date, Date];
}

/**
 * What a worker does with what the API left: the deliveries due when it starts, the run's payouts
 * (to a final status) and `depositsSent` deposits (credited), each timed from the worker's start.
 */
async function drain(side: GrowthSide, worker: DrainWorkers, since: Date, depositsSent: number): Promise<Drained> {
  const shop = side.merchants[0]!.shop_id;
  const drainFrom = new Date();
  const started = performance.now();
  const cpuBefore = worker.cpuSeconds();
  const chainCpuBefore = cpuSecondsOf(side.chainPid);
  const deliveriesQuery = `select count(*) as n from webhook_deliveries where created_at >= $1 and created_at < $2`;
  const deliveries = await count(side.client, deliveriesQuery, [since, drainFrom]);
  const payouts = await count(
    side.client,
    `select count(*) as n from crypto_payouts where shop_id = $1 and created_at >= $2`,
    [shop, since],
  );
  // One client, so the three are polled in turn; each time is from the worker's start to the poll that found it done.
  const checks = {
    deliveries: async () =>
      (await count(side.client, `${deliveriesQuery} and status = 'pending'`, [since, drainFrom])) === 0,
    // The unfinished statuses named: a range of the (shop, status, created_at) index each, where
    // "not final" would walk the shop's finished payouts of the whole loaded year.
    payouts: async () =>
      (await count(
        side.client,
        `select count(*) as n from crypto_payouts where shop_id = $1 and status in ('pending', 'processing') and created_at >= $2`,
        [shop, since],
      )) === 0,
    deposits: async () =>
      (await count(
        side.client,
        `select count(*) as n from crypto_deposits where shop_id = $1 and seen_at >= $2 and status = 'credited'`,
        [shop, since],
      )) >= depositsSent,
  };
  const doneAt = new Map<keyof typeof checks, number>();
  const { databaseTime } = await withDatabaseTime(side, () =>
    waitWhileRunning(worker, `${side.name}: deliveries, payouts and deposits`, async () => {
      for (const [name, check] of Object.entries(checks) as Array<[keyof typeof checks, () => Promise<boolean>]>)
        if (!doneAt.has(name) && (await check())) doneAt.set(name, secondsSince(started));
      return doneAt.size === 3;
    }),
  );
  const [deliverySeconds, payoutSeconds, depositSeconds] = [
    doneAt.get('deliveries')!,
    doneAt.get('payouts')!,
    doneAt.get('deposits')!,
  ];
  // What the worker's own work produced meanwhile (payout and invoice events) is delivered too before the figures are read.
  await waitWhileRunning(
    worker,
    `${side.name}: every delivery`,
    async () =>
      (await count(
        side.client,
        `select count(*) as n from webhook_deliveries where created_at >= $1 and status = 'pending'`,
        [since],
      )) === 0,
  );
  const workerCpuSeconds = worker.cpuSeconds() - cpuBefore;
  const chainCpuSeconds = cpuSecondsOf(side.chainPid) - chainCpuBefore;
  return {
    deliveries,
    deliverySeconds,
    payouts,
    payoutSeconds,
    deposits: depositsSent,
    depositSeconds,
    workerCpuSeconds,
    chainCpuSeconds,
    databaseTime,
    timeline: await attemptTimeline(side, [since, drainFrom], drainFrom),
    deliveryWindow: [since, drainFrom],
  };
}

/**
 * When the attempts of the deliveries created in `window` started, in seconds from `from` (the drain's
 * start), at a few percentiles: a drain slow throughout and one held up by a tail (a backlog put off at
 * a slow pace) read alike in the rate alone. Read through the deliveries' (status, shop, created_at)
 * index and the attempts' event index, after the drain, so that it costs the drain nothing.
 */
async function attemptTimeline(side: GrowthSide, window: readonly [Date, Date], from: Date): Promise<string> {
  const quantiles = [0.1, 0.25, 0.5, 0.75, 0.9, 0.99, 1];
  const { rows } = await side.client.query<{ attempts: number; deliveries: number; at: string | string[] | null }>(
    `select count(*)::int as attempts, count(distinct a.delivery_id)::int as deliveries,
            percentile_disc($5::float8[]) within group (order by extract(epoch from a.started_at - $4::timestamptz)) as at
       from webhook_deliveries d join webhook_attempts a on a.event_id = d.event_id and a.delivery_id = d.id
      where d.status in ('delivered', 'failed') and d.shop_id = any($1::text[])
        and d.created_at >= $2 and d.created_at < $3 and a.started_at >= $4`,
    [side.merchants.map((merchant) => merchant.shop_id), ...window, from, quantiles],
  );
  const row = rows[0]!;
  const at = typeof row.at === 'string' ? row.at.replace(/[{}]/g, '').split(',') : (row.at ?? []);
  const points = quantiles.map((quantile, index) => `${quantile * 100}% ${Number(at[index] ?? NaN).toFixed(1)}`);
  return `  attempts started, s from the drain's start: ${points.join(', ')} (${row.attempts} attempts, ${row.deliveries} deliveries)`;
}

/** The deliveries of a first drain made due again and drained alone by a fresh worker: the drain's second round. */
interface Redrained {
  readonly deliveries: number;
  readonly seconds: number;
  readonly workerCpuSeconds: number;
  readonly databaseTime: string;
  readonly timeline: string;
}

/**
 * The second round of the drain: the deliveries the first counted are made due again (as a resend
 * makes them) and a fresh worker, with no payouts or deposits left to handle, delivers them.
 */
async function redrainDeliveries(side: GrowthSide, window: readonly [Date, Date]): Promise<Redrained> {
  const pendingQuery = `select count(*) as n from webhook_deliveries where created_at >= $1 and created_at < $2 and status = 'pending'`;
  const replayed = await side.client.query(
    `update webhook_deliveries set status = 'pending', next_attempt_at = now(), locked_until = null, lease_token = null, updated_at = now()
      where created_at >= $1 and created_at < $2`,
    [...window],
  );
  const worker = await startDrainWorkers(side);
  try {
    const cpuBefore = worker.cpuSeconds();
    const from = new Date();
    const { value: seconds, databaseTime } = await withDatabaseTime(side, () =>
      waitWhileRunning(
        worker,
        `${side.name}: the deliveries made due again`,
        async () => (await count(side.client, pendingQuery, [...window])) === 0,
      ),
    );
    return {
      deliveries: replayed.rowCount ?? 0,
      seconds,
      workerCpuSeconds: worker.cpuSeconds() - cpuBefore,
      databaseTime,
      timeline: await attemptTimeline(side, window, from),
    };
  } finally {
    await worker.stop();
  }
}

/**
 * How a side's drain runs its workers (BENCH_GROWTH_WORKERS): `split` (the default), webhook delivery
 * in a process of its own beside one of every other worker (PAYGATE_WORKERS, docs/scaling.md), so the
 * executor's and the watcher's passes do not hold up deliveries; `one`, a single process of every worker.
 */
const DRAIN_WORKERS = process.env.BENCH_GROWTH_WORKERS ?? 'split';
if (DRAIN_WORKERS !== 'split' && DRAIN_WORKERS !== 'one')
  throw new Error(`BENCH_GROWTH_WORKERS must be split or one, got "${DRAIN_WORKERS}"`);

/** A drain's worker processes, their CPU time summed. */
interface DrainWorkers {
  cpuSeconds(): number;
  stop(): Promise<void>;
  /** Throws if a worker process has ended: the drain would otherwise wait out its limit for work nobody does. */
  assertRunning(): void;
}

/**
 * A drain's workers: the side's, keeping no address pool. The pool was filled before the mix for its
 * invoices; a refill now (thousands of derivations) would be the pool's work, not the drain's. Split
 * processes start together, so neither has a head start the drain's clock does not see.
 */
async function startDrainWorkers(side: GrowthSide): Promise<DrainWorkers> {
  const env = { ...side.setup.env, PAYGATE_ADDRESS_POOL_SIZE: '0' };
  const selections = DRAIN_WORKERS === 'split' ? ['-webhook-delivery', 'webhook-delivery'] : [undefined];
  const starts = await Promise.allSettled(
    selections.map((selection) =>
      startWorker(
        { ...side.setup, env: selection === undefined ? env : { ...env, PAYGATE_WORKERS: selection } },
        `${side.name} worker${selection === undefined ? '' : ` ${selection}`}`,
      ),
    ),
  );
  const started = starts.flatMap((start) => (start.status === 'fulfilled' ? [start.value] : []));
  const failed = starts.find((start) => start.status === 'rejected');
  const workers = drainWorkersOf(started);
  if (failed !== undefined) {
    await workers.stop();
    throw failed.reason;
  }
  return workers;
}

/** waitUntil, failing at once if one of the drain's worker processes has exited. */
function waitWhileRunning(workers: DrainWorkers, what: string, done: () => Promise<boolean>): Promise<number> {
  return waitUntil(what, async () => {
    workers.assertRunning();
    return done();
  });
}

function drainWorkersOf(processes: readonly ServerProcess[]): DrainWorkers {
  return {
    cpuSeconds: () => processes.reduce((sum, worker) => sum + cpuSecondsOf(worker.pid), 0),
    stop: async () => void (await Promise.all(processes.map((worker) => worker.stop()))),
    assertRunning: () => {
      for (const worker of processes) {
        const reason = worker.exitReason();
        if (reason !== undefined) throw new Error(`${worker.label} ${reason} during the drain`);
      }
    },
  };
}

/** A delivery to the bench's receiver as the check reads it. */
interface ReceiverDelivery {
  readonly id: string;
  readonly event_id: string;
  readonly status: 'pending' | 'delivered' | 'failed';
  readonly attempt_count: number;
  readonly created_at: Date;
  readonly last_error: string | null;
}

/**
 * The deliveries to `url` created since `since`, each with its last error (attempts are indexed by event,
 * not by delivery), read when none of them is pending any more: the same query decides the wait and gives
 * the rows judged, so a delivery created after an earlier check (an invoice's event written by the worker
 * after its deposit is credited) is waited for, not miscounted.
 */
async function receiverDeliveries(client: pg.Client, url: string, since: Date): Promise<ReceiverDelivery[]> {
  let rows: ReceiverDelivery[] = [];
  await waitUntil('the deliveries to the receiver', async () => {
    ({ rows } = await client.query<ReceiverDelivery>(
      `select d.id, d.event_id, d.status, d.attempt_count, d.created_at,
              (select a.error from webhook_attempts a where a.event_id = d.event_id and a.delivery_id = d.id
                order by a.started_at desc limit 1) as last_error
         from webhook_deliveries d where d.url = $1 and d.created_at >= $2`,
      [url, since],
    ));
    return rows.every((row) => row.status !== 'pending');
  });
  return rows;
}

const drainedLine = (name: string, drained: Drained) =>
  `  ${name.padEnd(7)} ${drained.deliveries} deliveries in ${drained.deliverySeconds.toFixed(1)} s (${(drained.deliveries / drained.deliverySeconds).toFixed(0)}/s), ` +
  `${drained.payouts} payouts final in ${drained.payoutSeconds.toFixed(1)} s (${(drained.payouts / drained.payoutSeconds).toFixed(0)}/s), ` +
  `${drained.deposits} deposits credited in ${drained.depositSeconds.toFixed(1)} s; worker CPU ${drained.workerCpuSeconds.toFixed(1)} s, ` +
  `chain CPU ${drained.chainCpuSeconds.toFixed(1)} s\n` +
  `${drained.timeline}\n${drained.databaseTime}`;

// ---------------------------------------------------------------- the loaded database's figures

async function databaseFigures(client: pg.Client): Promise<string> {
  const tables = await client.query<{
    relname: string;
    rows: string;
    heap: string;
    indexes: string;
    heap_hit: string;
    idx_hit: string;
  }>(
    `select s.relname, c.reltuples::int8::text as rows,
            pg_size_pretty(pg_relation_size(s.relid)) as heap, pg_size_pretty(pg_indexes_size(s.relid)) as indexes,
            coalesce(round(100.0 * s.heap_blks_hit / nullif(s.heap_blks_hit + s.heap_blks_read, 0), 1)::text, '-') as heap_hit,
            coalesce(round(100.0 * s.idx_blks_hit / nullif(s.idx_blks_hit + s.idx_blks_read, 0), 1)::text, '-') as idx_hit
       from pg_statio_user_tables s join pg_class c on c.oid = s.relid
      order by pg_total_relation_size(s.relid) desc limit 14`,
  );
  const database = await client.query<{ hit: string; size: string }>(
    `select round(100.0 * blks_hit / nullif(blks_hit + blks_read, 0), 2)::text as hit, pg_size_pretty(pg_database_size(datname)) as size
       from pg_stat_database where datname = current_database()`,
  );
  const settings = await client.query<{ name: string; setting: string; unit: string | null }>(
    `select name, setting, unit from pg_settings where name in ('shared_buffers', 'effective_cache_size', 'work_mem', 'max_connections', 'random_page_cost', 'server_version')`,
  );
  return (
    `  database ${database.rows[0]!.size}, buffer hit ratio during the mix ${database.rows[0]!.hit ?? '-'} %\n` +
    `  settings: ${settings.rows.map((row) => `${row.name} ${row.setting}${row.unit ?? ''}`).join(', ')}\n` +
    `  ${'table'.padEnd(28)} ${'rows'.padStart(11)} ${'heap'.padStart(9)} ${'indexes'.padStart(9)}  heap hit %  index hit %\n` +
    tables.rows
      .map(
        (row) =>
          `  ${row.relname.padEnd(28)} ${Number(row.rows).toLocaleString('en').padStart(11)} ${row.heap.padStart(9)} ${row.indexes.padStart(9)}  ${row.heap_hit.padStart(10)}  ${row.idx_hit.padStart(11)}\n`,
      )
      .join('')
  );
}

// ---------------------------------------------------------------- item 6: 2 API processes + 1 worker

const waitsLine = (waits: ReadonlyMap<string, number>, samples: number) =>
  `  active sessions by wait (${samples} samples every 100 ms): ${[...waits.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, 8)
    .map(([wait, n]) => `${wait} ${(n / samples).toFixed(2)}`)
    .join(', ')}`;

/**
 * Starts counting the side's statements (pg_stat_statements, reset now) and gives what reads the
 * top ones by total time since; undefined when the server does not load the extension.
 */
async function statementWindow(client: pg.Client): Promise<(() => Promise<string>) | undefined> {
  try {
    await client.query('create extension if not exists pg_stat_statements');
    await client.query('select pg_stat_statements_reset()');
  } catch {
    return undefined;
  }
  return async () => {
    const { rows } = await client
      .query<{
        calls: string;
        total_ms: number;
        mean_ms: number;
        rows: string;
        query: string;
      }>(
        `select calls::text, total_exec_time as total_ms, mean_exec_time as mean_ms, rows::text, query
           from pg_stat_statements where dbid = (select oid from pg_database where datname = current_database())
          order by total_exec_time desc limit 8`,
      )
      // A diagnostic: a server whose pg_stat_statements reads otherwise (before PostgreSQL 13) costs the lines, not the run.
      .catch(() => ({ rows: [] }));
    return (
      `  statements by database time (pg_stat_statements):\n` +
      rows
        .map(
          (row) =>
            `    ${row.total_ms.toFixed(0).padStart(7)} ms ${Number(row.calls).toLocaleString('en').padStart(8)} calls ${row.mean_ms.toFixed(2).padStart(7)} ms/call ${Number(row.rows).toLocaleString('en').padStart(8)} rows  ${row.query.replace(/\s+/g, ' ').slice(0, 120)}\n`,
        )
        .join('')
    );
  };
}

/** Runs `during` and says where the side's database time went meanwhile: sessions by wait, statements by total time. */
async function withDatabaseTime<T>(
  side: GrowthSide,
  during: () => Promise<T>,
): Promise<{ value: T; databaseTime: string }> {
  const statements = await statementWindow(side.client);
  const { value, waits, samples } = await sampleWaits(side.databaseUrl, during);
  const statementLines = statements
    ? await statements()
    : '  (pg_stat_statements is not loaded on this server: statements not shown)\n';
  return { value, databaseTime: `${waitsLine(waits, samples)}\n${statementLines}` };
}

/** Samples what the database's sessions wait for while `during` runs. */
async function sampleWaits<T>(
  url: string,
  during: () => Promise<T>,
): Promise<{ value: T; waits: Map<string, number>; samples: number }> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const waits = new Map<string, number>();
  let samples = 0;
  let running = true;
  const sampling = (async () => {
    while (running) {
      const { rows } = await client.query<{ wait: string }>(
        `select coalesce(wait_event_type || ':' || wait_event, 'CPU (no wait)') as wait from pg_stat_activity
          where datname = current_database() and pid <> pg_backend_pid() and state = 'active'`,
      );
      samples += 1;
      for (const row of rows) waits.set(row.wait, (waits.get(row.wait) ?? 0) + 1);
      await delay(100);
    }
  })();
  try {
    return { value: await during(), waits, samples };
  } finally {
    running = false;
    await sampling;
    await client.end();
  }
}

async function cluster(
  side: GrowthSide,
  chainUrl: string,
  receiver: Awaited<ReturnType<typeof startReceiver>>,
): Promise<boolean> {
  out(`\nitem 6: two API processes and one worker on the loaded database (Redis for the shared rate limit)\n`);
  const redis = await startRedis();
  const env = { ...side.setup, env: { ...side.setup.env, REDIS_URL: redis.url } };
  const apis = [await startApi(env, 'api 1'), await startApi(env, 'api 2')];
  const worker = await startWorker(env, 'worker');
  const processes = [...apis, worker];
  const since = new Date();
  receiver.counts.clear();
  let ok = true;
  try {
    const operations = mix(receiver.url);
    const cpuBefore = new Map(processes.map((process) => [process.pid, cpuSecondsOf(process.pid)]));
    const postgresCpu = measurePostgresCpu();
    const started = performance.now();
    const {
      value: results,
      waits,
      samples,
    } = await sampleWaits(side.databaseUrl, async () => {
      const lines: string[] = [];
      for (const operation of operations) {
        const spec = await operation.spec(side, 0);
        const amount = spec.amount ?? operation.amount;
        const half = amount === undefined ? undefined : Math.floor(amount / 2);
        // Both API processes at once, half the connections each; a consuming phase splits its ids between them.
        const results = await Promise.all(
          apis.map((api, index) =>
            runLoad({
              ...spec,
              ...(half === undefined
                ? {}
                : {
                    paths: spec.paths.length > 1 ? spec.paths.filter((_, at) => at % 2 === index) : spec.paths,
                    ...(spec.rotatingBodies
                      ? { rotatingBodies: spec.rotatingBodies.filter((_, at) => at % 2 === index) }
                      : {}),
                  }),
              origin: api.url,
              connections: Math.max(1, Math.min(Math.floor(CONNECTIONS / 2), half ?? CONNECTIONS)),
              durationS: DURATION_S,
              amount: half,
            }),
          ),
        );
        const total = results.reduce((sum, result: LoadResult) => sum + result.requestsPerSecond, 0);
        const errors = results.reduce((sum, result) => sum + result.errors, 0);
        if (errors > 0) ok = false;
        lines.push(
          `  ${operation.name.padEnd(40)} ${total.toFixed(0).padStart(6)} req/s through both (${results.map((result) => result.requestsPerSecond.toFixed(0)).join(' + ')}),` +
            ` p99 ${results.map((result) => result.p99Ms.toFixed(1)).join(' / ')} ms, errors ${errors}\n`,
        );
      }
      return lines;
    });
    const wall = secondsSince(started);
    out(results.join(''));
    const cpu = processes.map(
      (process) =>
        `${process.label} ${((100 * (cpuSecondsOf(process.pid) - cpuBefore.get(process.pid)!)) / wall).toFixed(0)} %`,
    );
    out(
      `  CPU over the mix (${wall.toFixed(0)} s, % of one core): ${cpu.join(', ')}, PostgreSQL ${((100 * (postgresCpu() ?? 0)) / 1e6 / wall).toFixed(0)} %\n`,
    );
    out(`${waitsLine(waits, samples)}\n`);

    const deposits = await sendDeposits(
      side,
      DEPOSITS,
      apis.map((api) => api.url),
    );
    const drained = await drain(side, drainWorkersOf([worker]), since, deposits);
    out(drainedLine('cluster', drained));

    // Nothing twice, nothing lost: the deliveries to the receiver since the phase began, read once none of them is
    // pending (the worker's own events keep coming after the drain: the snapshot judged is one with none due). Only
    // those to the receiver: the loaded history's go to its shop URL, and its last expired invoices' are dated ahead.
    // A `delivered` row was answered 2xx by the receiver before it was written, so its event id must be counted there.
    const webhooks = await receiverDeliveries(side.client, receiver.url, since);
    const twice = [...receiver.counts.entries()].filter(([, n]) => n > 1);
    const delivered = webhooks.filter((row) => row.status === 'delivered');
    const lost = delivered.filter((row) => !receiver.counts.has(row.event_id));
    const failed = webhooks.filter((row) => row.status === 'failed');
    const missing = lost.length + failed.length;
    out(
      `  webhooks: ${webhooks.length} deliveries to the receiver, ${delivered.length} delivered, ${failed.length} failed, ` +
        `${receiver.counts.size} event ids received, ${twice.length} received more than once, ${lost.length} delivered but never received  ${verdict(twice.length === 0 && missing === 0)}\n`,
    );
    for (const row of [...lost, ...failed])
      out(
        `    ${row.id} ${row.status} after ${row.attempt_count} attempts, created ${row.created_at.toISOString()}, last error ${row.last_error ?? '-'}\n`,
      );
    const creditsTwice = await count(
      side.client,
      `select count(*) as n from (select reference_id from ledger_transfers where type = 'deposit' and created_at >= $1 and pending_id is null
         group by reference_id having count(*) > 1) as twice`,
      [since],
    );
    const credited = await count(
      side.client,
      `select count(*) as n from crypto_deposits where seen_at >= $1 and status = 'credited'`,
      [since],
    );
    out(
      `  deposits: ${deposits} sent, ${credited} credited, ${creditsTwice} credited more than once  ${verdict(credited === deposits && creditsTwice === 0)}\n`,
    );
    const node = createTronNodeClient({ urls: [chainUrl], usdtContract: USDT_CONTRACT_MAINNET, timeoutMs: 30_000 });
    const payouts = await side.client.query<{ recipient_address: string; amount_micro: string; status: string }>(
      `select recipient_address, amount_micro::text, status from crypto_payouts where shop_id = $1 and created_at >= $2`,
      [side.merchants[0]!.shop_id, since],
    );
    let wrong = 0;
    for (let at = 0; at < payouts.rows.length; at += 20) {
      const chunk = payouts.rows.slice(at, at + 20);
      const balances = await Promise.all(chunk.map((row) => node.getUsdtBalance(row.recipient_address as TronAddress)));
      chunk.forEach((row, index) => {
        const expected = row.status === 'completed' ? BigInt(row.amount_micro) : 0n;
        if (balances[index] !== expected) wrong += 1;
      });
    }
    await node.close();
    const completed = payouts.rows.filter((row) => row.status === 'completed').length;
    out(
      `  payouts: ${payouts.rows.length} created, ${completed} completed, ${wrong} recipients whose USDT on the chain is not the payout's amount once  ${verdict(wrong === 0)}\n`,
    );
    if (twice.length > 0 || missing > 0 || credited !== deposits || creditsTwice > 0 || wrong > 0) ok = false;
  } finally {
    await Promise.all(processes.map((process) => process.stop()));
    await redis.stop();
  }
  return ok;
}

/** The server's version and the settings docs/operations.md recommends for a large database, as the run found them. */
async function serverSettings(): Promise<string> {
  const client = new pg.Client({ connectionString: BENCH_SERVER_URL });
  await client.connect();
  try {
    const names = [
      'server_version',
      'shared_buffers',
      'effective_cache_size',
      'random_page_cost',
      'work_mem',
      'maintenance_work_mem',
      'max_connections',
      'synchronous_commit',
    ];
    const { rows } = await client.query<{ name: string; setting: string }>(
      `select name, current_setting(name) as setting from unnest($1::text[]) as name`,
      [names],
    );
    return rows.map((row) => `${row.name} ${row.setting}`).join(', ');
  } finally {
    await client.end();
  }
}

// ---------------------------------------------------------------- the run

out(
  `bench:growth at scale ${SCALE}: ${availableParallelism()} cores, load ${loadavg()
    .map((value) => value.toFixed(2))
    .join(' ')}\n`,
);
const receiver = await startReceiver();
out(`  PostgreSQL ${await serverSettings()}\n`);
const loadedDatabase = await createBenchDatabase('growth_loaded');
const emptyDatabase = await createBenchDatabase('growth_empty');
const chainSetup = await gatewaySetup('postgres', loadedDatabase.url);
// A chain per side: a side's watcher reads every block of its chain, so on one shared chain the side
// drained second would also read the other side's payouts and deposits.
const chains = { loaded: await startChain(chainSetup), empty: await startChain(chainSetup) };
const sideEnv = {
  PAYGATE_ALLOW_HTTP_WEBHOOKS: '1',
  PAYGATE_WEBHOOK_ALLOW_PRIVATE: '1',
  // The deposits are sent through the sandbox chain's helper, which a shop may call 120 times a minute by default.
  PAYGATE_SANDBOX_HELPER_CALLS_PER_MINUTE: '1000000',
  PAYGATE_ADDRESS_POOL_SIZE: String(BATCH * (PAIRS + 2) + DEPOSITS),
  // The loaded addresses are no one's key: a sweep of one could never be signed, and the executor's pass
  // that met it would sign nothing else. Both sides leave every address unswept; the bench measures no sweep.
  PAYGATE_SWEEP_THRESHOLD_USDT: SWEEP_NEVER_USDT,
};
const sides: GrowthSide[] = [];
let failed = false;
try {
  for (const [name, database] of [
    ['loaded', loadedDatabase],
    ['empty', emptyDatabase],
  ] as const) {
    const setup = await gatewaySetup('postgres', database.url, {
      ...sideEnv,
      PAYGATE_SANDBOX_CHAIN_URL: chains[name].url,
    });
    const merchants = await createMerchants(setup, SHOPS);
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    const side: GrowthSide = {
      name,
      databaseUrl: database.url,
      setup,
      merchants,
      client,
      chainPid: chains[name].pid,
      pending: [],
      invoices: [],
    };
    // The first invoice through the API gives the sandbox key its real first address (the loaded addresses come after);
    // the faucet's answer names the side's hot wallet, where the loaded sweeps send their USDT.
    side.api = await startApi(setup, `${name} api`);
    await post(side, '/v1/crypto/invoices', { external_id: 'bench-growth-first', amount: '1', network: 'TRC20' });
    side.hotWallet = (
      (await post(side, '/v1/test_helpers/crypto/faucet', { trx: '1' })) as { address: string }
    ).address;
    await side.api.stop();
    sides.push(side);
  }
  const [loaded, empty] = sides as [GrowthSide, GrowthSide];
  const loads = growthShopLoads(
    loaded.merchants.map((merchant) => ({ merchantId: merchant.merchant_id, shopId: merchant.shop_id })),
    SCALE,
  );
  out(
    `\nloading ${SHOPS} shops (the first the big one): ${loads.reduce((sum, load) => sum + load.payments, 0).toLocaleString('en')} payments, ${loads.reduce((sum, load) => sum + load.deposits, 0).toLocaleString('en')} deposits, ${loads.reduce((sum, load) => sum + load.payouts, 0).toLocaleString('en')} payouts\n`,
  );
  const loadStarted = performance.now();
  await loadGrowthData(
    loaded.databaseUrl,
    loads,
    { hotWallet: loaded.hotWallet!, unsweptSeconds: UNSWEPT_SECONDS },
    (line) => out(`${line}\n`),
  );
  out(`  loaded in ${(secondsSince(loadStarted) / 60).toFixed(1)} min\n`);
  await fundLoadedChain(loaded, chains.loaded.url, loaded.hotWallet!);
  if (!(await checkLoadedCustody(loaded))) failed = true;
  const checked = await promisify(execFile)(process.execPath, [PAYGATE, 'ledger', 'check'], {
    // Every account and transfer of the year is read: the API's statement timeout is not for this.
    env: { ...loaded.setup.env, PAYGATE_DB_STATEMENT_TIMEOUT_MS: '0' },
    maxBuffer: 1 << 24,
  }).catch((error: { stdout?: string; stderr?: string }) => {
    failed = true;
    return { stdout: error.stdout ?? '', stderr: error.stderr ?? String(error) };
  });
  out(`  paygate ledger check on the loaded database: ${`${checked.stdout}${checked.stderr}`.trim()}\n`);

  out('\npreparing both sides (big shop funded, address pools filled)\n');
  for (const side of sides) {
    side.api = await startApi(side.setup, `${side.name} api`);
    await prepareSide(side, BATCH * (PAIRS + 2) + DEPOSITS);
    await side.client.query('vacuum analyze');
    await side.client.query('checkpoint');
  }
  await loaded.client.query('select pg_stat_reset()');
  const mixStarted = new Date();
  const outcomes: OperationOutcome[] = [];
  for (const operation of mix(receiver.url)) outcomes.push(await runOperation(operation, [empty, loaded]));
  const figures = await databaseFigures(loaded.client);

  out("\nthe workers: each side's worker drains what its API phases left (deliveries, payouts) and credits deposits\n");
  const drained: Drained[] = [];
  for (const side of [empty, loaded]) {
    await side.api!.stop();
    side.api = await startApi(side.setup, `${side.name} api`);
    const deposits = await sendDeposits(side, DEPOSITS, [side.api.url]);
    const worker = await startDrainWorkers(side);
    try {
      drained.push(await drain(side, worker, mixStarted, deposits));
      out(drainedLine(side.name, drained.at(-1)!));
    } finally {
      await worker.stop();
    }
  }
  // The second round in the other order (loaded first), so that a machine growing busier or quieter
  // during the drains falls on both sides alike.
  out('  the same deliveries made due again and drained alone, loaded first\n');
  const redrained = new Map<GrowthSide, Redrained>();
  for (const [side, first] of [
    [loaded, drained[1]!],
    [empty, drained[0]!],
  ] as const) {
    const again = await redrainDeliveries(side, first.deliveryWindow);
    redrained.set(side, again);
    out(
      `  ${side.name.padEnd(7)} ${again.deliveries} deliveries in ${again.seconds.toFixed(1)} s (${(again.deliveries / again.seconds).toFixed(0)}/s); worker CPU ${again.workerCpuSeconds.toFixed(1)} s\n${again.timeline}\n${again.databaseTime}`,
    );
  }
  for (const side of sides) await side.api?.stop();

  const clusterOk =
    process.env.BENCH_GROWTH_SKIP_CLUSTER === '1' ? undefined : await cluster(loaded, chains.loaded.url, receiver);
  if (clusterOk === false) failed = true;

  out(`\nthe loaded database after the mix\n${figures}`);
  out(`\nsummary (scale ${SCALE}; empty → loaded, mean of ${PAIRS} phases each)\n`);
  for (const outcome of outcomes) out(`${judge(outcome).line}\n`);
  const [emptyDrain, loadedDrain] = drained as [Drained, Drained];
  const rate = (n: number, s: number) => n / Math.max(0.001, s);
  // Both rounds together: every delivery of both over the time of both, per side.
  const roundsRate = (first: Drained, second: Redrained) =>
    rate(first.deliveries + second.deliveries, first.deliverySeconds + second.seconds);
  const emptyRate = roundsRate(emptyDrain, redrained.get(empty)!);
  const loadedRate = roundsRate(loadedDrain, redrained.get(loaded)!);
  const deliveryRatio = loadedRate / emptyRate;
  const roundRatios = [
    rate(loadedDrain.deliveries, loadedDrain.deliverySeconds) / rate(emptyDrain.deliveries, emptyDrain.deliverySeconds),
    rate(redrained.get(loaded)!.deliveries, redrained.get(loaded)!.seconds) /
      rate(redrained.get(empty)!.deliveries, redrained.get(empty)!.seconds),
  ];
  out(
    `  ${'worker: webhook deliveries drained'.padEnd(40)} ${emptyRate.toFixed(0).padStart(6)} → ${loadedRate.toFixed(0).padStart(6)} /s` +
      `  ratio ${deliveryRatio.toFixed(2)} (>= ${TARGETS.ratio}) ${verdict(deliveryRatio >= TARGETS.ratio)}` +
      `  (round 1 with payouts and deposits ${roundRatios[0]!.toFixed(2)}, round 2 alone ${roundRatios[1]!.toFixed(2)})\n`,
  );
  if (clusterOk !== undefined) out(`  item 6 (2 API + 1 worker): nothing done twice  ${verdict(clusterOk)}\n`);
} catch (error) {
  failed = true;
  out(`\nerror: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
} finally {
  for (const side of sides) {
    await side.api?.stop();
    await side.client.end();
    await side.setup.cleanUp();
  }
  await chains.loaded.stop();
  await chains.empty.stop();
  await receiver.stop();
  await chainSetup.cleanUp();
  await emptyDatabase.drop();
  if (process.env.BENCH_GROWTH_KEEP === '1')
    out(`\nBENCH_GROWTH_KEEP=1: the loaded database is kept: ${loadedDatabase.url}\n`);
  else await loadedDatabase.drop();
}
if (failed) process.exitCode = 1;

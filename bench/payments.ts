// `npm run bench:payments`: POST /v1/payments through the whole gateway (auth,
// rate limiter raised but active, validation, idempotency, tariff, insert) with
// autocannon at 50 connections and a distinct Idempotency-Key per request, on
// PostgreSQL and on PGlite; then, in the same run, a baseline that issues the
// same database statements straight through a `pg` pool at the same
// concurrency, and the ratio. Target on PostgreSQL: ratio >= 0.5, p99 <= 25 ms,
// zero errors. Uses fresh databases on BENCH_DATABASE_URL
// (default postgres://postgres@127.0.0.1:5432/postgres), dropped afterwards.
// BENCH_DURATION_S (default 10) sets the measured seconds; BENCH_SKIP_PGLITE=1 skips the PGlite run.
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { createBenchDatabase } from './bench-database.ts';
import { measurePostgresCpu } from './server-cpu.ts';
import { Registry } from 'prom-client';
import { buildApp } from '../src/app.ts';
import { systemClock } from '../src/clock.ts';
import { loadConfig, type Config } from '../src/config.ts';
import type { AppContext } from '../src/context.ts';
import { openDatabase, type DatabaseBackend } from '../src/db/database.ts';
import { migrate } from '../src/db/migrate.ts';
import { throwawayKeyring } from '../src/kms/keyring.ts';
import { createLogger } from '../src/logger.ts';
import { createMerchant } from '../src/merchants/merchant-service.ts';

const CONNECTIONS = 50;
const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 10);
const WARMUP_S = 2;
const POOL_SIZE = 20;
const BODY = JSON.stringify({ amount: 1500.5, currency: 'RUB', order_id: 'bench-order', callback_url: 'https://merchant.example/hook' });

interface AutocannonResult {
  requests: { average: number; total: number };
  latency: { p50: number; p99: number; average: number };
  errors: number;
  timeouts: number;
  non2xx: number;
  '2xx': number;
}
type AutocannonRequest = { method?: string; path?: string; headers?: Record<string, string>; body?: string };
type Autocannon = (options: Record<string, unknown>) => Promise<AutocannonResult>;
const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon;

interface Figures {
  readonly label: string;
  readonly requestsPerSecond: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly errors: number;
}

function print(figures: Figures): void {
  process.stdout.write(
    `${figures.label.padEnd(36)} ${figures.requestsPerSecond.toFixed(0).padStart(7)} req/s   p50 ${figures.p50Ms.toFixed(2).padStart(6)} ms   p99 ${figures.p99Ms
      .toFixed(2)
      .padStart(6)} ms   errors ${figures.errors}\n`,
  );
}

/** One line of CPU per request: this process's, and the PostgreSQL server's when known. */
function printCpu(label: string, cpu: NodeJS.CpuUsage, databaseUs: number | undefined, requests: number): void {
  const perRequest = (microseconds: number) => `${(microseconds / 1000 / Math.max(1, requests)).toFixed(2)} ms`;
  const database = databaseUs === undefined ? '' : `, PostgreSQL CPU ${perRequest(databaseUs)} per request`;
  process.stdout.write(`  (${label} CPU ${perRequest(cpu.user + cpu.system)} per request${database})\n`);
}

async function benchGateway(backend: DatabaseBackend, url: string | undefined): Promise<Figures> {
  const config: Config = {
    ...loadConfig({ LOG_LEVEL: 'silent', PAYGATE_DATA_DIR: 'memory://' }),
    databaseUrl: url,
    databasePoolSize: POOL_SIZE,
    rateLimitPerMinute: 10_000_000, // raised for the run; the limiter still counts every request
    publicUrl: 'http://127.0.0.1',
  };
  const handle = await openDatabase({ url, dataDir: 'memory://', poolSize: POOL_SIZE });
  await migrate(handle);
  const keyring = throwawayKeyring();
  const context: AppContext = { db: handle.db, backend, clock: systemClock, config, metrics: new Registry(), logger: createLogger(config), keyring };
  const merchant = await createMerchant(context, { name: 'Bench shop', email: 'bench@example.test' });
  const app = await buildApp(context);
  const address = await app.listen({ port: 0, host: '127.0.0.1' });
  // The load generator runs in its own process, so it does not take CPU from the gateway.
  const run = (seconds: number) => loadInChildProcess(`${address}/v1/payments`, merchant.api_key, seconds);
  try {
    await run(WARMUP_S);
    const cpuBefore = process.cpuUsage();
    const databaseCpu = measurePostgresCpu();
    const result = await run(DURATION_S);
    printCpu(`${backend}: gateway process`, process.cpuUsage(cpuBefore), backend === 'postgres' ? databaseCpu() : undefined, result.requests.total);
    const created = await handle.db.selectFrom('payments').select((eb) => eb.fn.countAll<bigint>().as('count')).executeTakeFirstOrThrow();
    process.stdout.write(`  (${backend}: ${created.count} payments in the database, ${result['2xx']} answered 201 in the measured run)\n`);
    return {
      label: `gateway on ${backend}`,
      requestsPerSecond: result.requests.average,
      p50Ms: result.latency.p50,
      p99Ms: result.latency.p99,
      errors: result.errors + result.timeouts + result.non2xx,
    };
  } finally {
    await app.close();
    await handle.close();
  }
}

/** The same statements a request makes (auth lookup, idempotency claim, tariff read, insert + completion), straight through pg. */
async function benchBaseline(url: string): Promise<Figures> {
  const pool = new pg.Pool({ connectionString: url, max: POOL_SIZE });
  const handle = await openDatabase({ url, poolSize: 2 });
  await migrate(handle);
  const config = loadConfig({ LOG_LEVEL: 'silent', PAYGATE_DATA_DIR: 'memory://' });
  const context = { db: handle.db, clock: systemClock, config } as unknown as AppContext;
  const merchant = await createMerchant(context, { name: 'Baseline shop', email: 'baseline@example.test' });
  await handle.close();
  const keyHash = createHash('sha256').update(merchant.api_key).digest();
  const shopId = merchant.shop_id;

  async function oneRequest(): Promise<void> {
    const now = new Date();
    await pool.query(
      'select k.id, k.key_hash, k.scopes, k.revoked_at, s.id as shop_id, s.mode, s.merchant_id from api_keys k join shops s on s.id = k.shop_id where k.key_hash = $1',
      [keyHash],
    );
    const key = randomUUID();
    const token = randomUUID();
    await pool.query(
      `insert into payment_idempotency_keys (shop_id, idempotency_key, request_hash, state, lease_token, locked_until, created_at)
       values ($1, $2, $3, 'in_progress', $4, $5, $6) on conflict (shop_id, idempotency_key) do nothing returning lease_token`,
      [shopId, key, createHash('sha256').update(BODY).digest('hex'), token, new Date(now.getTime() + 30_000), now],
    );
    const client = await pool.connect();
    try {
      await client.query('begin');
      await client.query('select * from payment_method_settings where shop_id = $1', [shopId]);
      const id = randomUUID();
      await client.query(
        `insert into payments (id, shop_id, order_code, status, amount_kopecks, amount_total_kopecks, currency, method, order_id, callback_url, created_at, expires_at)
         values ($1, $2, $3, 'pending', 150050, 150050, 'RUB', null, 'bench-order', 'https://merchant.example/hook', $4, $5)`,
        [id, shopId, randomBytes(8).toString('base64url').slice(0, 10), now, new Date(now.getTime() + 3_600_000)],
      );
      await client.query(
        `update payment_idempotency_keys set state = 'completed', response_status = 201, response_body = $1, payment_id = $2
         where shop_id = $3 and idempotency_key = $4 and lease_token = $5 and state = 'in_progress'`,
        [BODY, id, shopId, key, token],
      );
      await client.query('commit');
    } finally {
      client.release();
    }
  }

  async function run(seconds: number): Promise<{ latencies: number[]; errors: number; elapsedMs: number }> {
    const latencies: number[] = [];
    let errors = 0;
    const started = performance.now();
    const deadline = started + seconds * 1000;
    await Promise.all(
      Array.from({ length: CONNECTIONS }, async () => {
        while (performance.now() < deadline) {
          const begin = performance.now();
          try {
            await oneRequest();
            latencies.push(performance.now() - begin);
          } catch {
            errors += 1;
          }
        }
      }),
    );
    return { latencies, errors, elapsedMs: performance.now() - started };
  }

  try {
    await run(WARMUP_S);
    const cpuBefore = process.cpuUsage();
    const databaseCpu = measurePostgresCpu();
    const { latencies, errors, elapsedMs } = await run(DURATION_S);
    printCpu('baseline: client process', process.cpuUsage(cpuBefore), databaseCpu(), latencies.length);
    latencies.sort((a, b) => a - b);
    const at = (fraction: number) => latencies[Math.min(latencies.length - 1, Math.floor(fraction * latencies.length))] ?? 0;
    return { label: 'baseline: same SQL through a pg pool', requestsPerSecond: latencies.length / (elapsedMs / 1000), p50Ms: at(0.5), p99Ms: at(0.99), errors };
  } finally {
    await pool.end();
  }
}

function runAutocannon(url: string, apiKey: string, seconds: number): Promise<AutocannonResult> {
  return autocannon({
    url,
    connections: CONNECTIONS,
    duration: seconds,
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
    body: BODY,
    requests: [
      {
        setupRequest: (request: AutocannonRequest) => ({
          ...request,
          headers: { ...request.headers, 'idempotency-key': randomUUID() },
        }),
      },
    ],
  });
}

function loadInChildProcess(url: string, apiKey: string, seconds: number): Promise<AutocannonResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [fileURLToPath(import.meta.url), '--load', url, apiKey, String(seconds)], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(JSON.parse(output) as AutocannonResult) : reject(new Error(`load generator exited ${code}`))));
  });
}

async function main(): Promise<void> {
  process.stdout.write(
    `POST /v1/payments, ${CONNECTIONS} connections, ${DURATION_S} s after ${WARMUP_S} s warm-up, distinct Idempotency-Key per request, pool ${POOL_SIZE}\n`,
  );
  const gatewayDatabase = await createBenchDatabase('payments');
  const baselineDatabase = await createBenchDatabase('payments');
  try {
    const onPostgres = await benchGateway('postgres', gatewayDatabase.url);
    const baseline = await benchBaseline(baselineDatabase.url);
    const onPGlite = process.env.BENCH_SKIP_PGLITE ? undefined : await benchGateway('pglite', undefined);
    process.stdout.write('\n');
    print(onPostgres);
    if (onPGlite) print(onPGlite);
    print(baseline);
    const ratio = onPostgres.requestsPerSecond / baseline.requestsPerSecond;
    process.stdout.write(`\nratio gateway/baseline on PostgreSQL: ${ratio.toFixed(2)} (target >= 0.5); p99 ${onPostgres.p99Ms} ms (target <= 25 ms)\n`);
    const met = ratio >= 0.5 && onPostgres.p99Ms <= 25 && onPostgres.errors === 0;
    process.stdout.write(met ? 'targets met\n' : 'TARGETS NOT MET\n');
  } finally {
    await gatewayDatabase.drop();
    await baselineDatabase.drop();
  }
}

if (process.argv[2] === '--load') {
  const [url, apiKey, seconds] = process.argv.slice(3) as [string, string, string];
  process.stdout.write(JSON.stringify(await runAutocannon(url, apiKey, Number(seconds))));
} else {
  await main();
}

// `npm run bench:payments`: the gateway's payment routes against their anchor
// routes, on PostgreSQL and on PGlite, in alternating phases of one run.
//   POST /v1/payments (full semantics: authentication, scope, rate limit raised
//   but counting, validation, a distinct Idempotency-Key per request, tariff,
//   insert, stored response) against POST /anchor/payments (Fastify 5, JSON
//   schema, one INSERT … RETURNING through a `pg` Pool of 20 / a bare PGlite);
//   GET /v1/payments/{id} over existing payments against GET /anchor/payments/:id
//   (one SELECT by primary key).
// Gateway (`paygate serve`), anchor (bench/anchors/anchor-server.ts) and autocannon
// each run as their own process. Targets: ratio >= 0.5; on PostgreSQL p99 <= 25 ms;
// zero errors. A missed target prints MISS; the exit code is non-zero only on errors.
//   BENCH_DURATION_S (default 10) seconds per phase, BENCH_WARMUP_S (3), BENCH_PAIRS (2),
//   BENCH_CONNECTIONS (50), BENCH_SEED_IDS (500) payments per side for the GET phases,
//   BENCH_SKIP_PGLITE=1 / BENCH_SKIP_POSTGRES=1, BENCH_DATABASE_URL (the PostgreSQL server),
//   BENCH_GATEWAY_LOG_LEVEL (default warn).
import { randomUUID } from 'node:crypto';
import { alternate, type AlternatingOutcome } from './alternating-phases.ts';
import { startAnchor } from './anchors/anchor-process.ts';
import { createBenchDatabase } from './bench-database.ts';
import { createBenchMerchant, gatewaySetup, startGateway, type Backend } from './gateway-process.ts';
import { envNumber, verdict } from './verdict.ts';

const DURATION_S = envNumber('BENCH_DURATION_S', 10);
const WARMUP_S = envNumber('BENCH_WARMUP_S', 3);
const PAIRS = envNumber('BENCH_PAIRS', 2);
const CONNECTIONS = envNumber('BENCH_CONNECTIONS', 50);
const SEED_IDS = envNumber('BENCH_SEED_IDS', 500);
const BODY = JSON.stringify({
  amount: 1500.5,
  currency: 'RUB',
  order_id: 'bench-order',
  callback_url: 'https://merchant.example/hook',
});
const JSON_HEADERS = { 'content-type': 'application/json' };

/** Creates `count` payments through `url` (10 at a time) and returns the ids its answers carry in `idField`. */
async function seedPayments(
  url: string,
  headers: Record<string, string>,
  idField: string,
  count: number,
): Promise<string[]> {
  const ids: string[] = [];
  let started = 0;
  await Promise.all(
    Array.from({ length: 10 }, async () => {
      while (started < count) {
        started += 1;
        const response = await fetch(url, {
          method: 'POST',
          headers: { ...headers, 'idempotency-key': randomUUID() },
          body: BODY,
        });
        const answer = (await response.json()) as Record<string, unknown>;
        if (response.status !== 201 || typeof answer[idField] !== 'string') {
          throw new Error(`seeding ${url}: ${response.status} ${JSON.stringify(answer)}`);
        }
        ids.push(answer[idField]);
      }
    }),
  );
  return ids;
}

async function benchBackend(backend: Backend): Promise<AlternatingOutcome[]> {
  const name = backend === 'postgres' ? 'PostgreSQL' : 'PGlite';
  const database = backend === 'postgres' ? await createBenchDatabase('payments') : undefined;
  const setup = await gatewaySetup(backend, database?.url);
  try {
    const merchant = await createBenchMerchant(setup);
    const gateway = await startGateway(setup);
    const anchor = await startAnchor(database?.url).catch(async (error: unknown) => {
      await gateway.stop();
      throw error;
    });
    try {
      process.stdout.write(
        `\n${name}: gateway pid ${gateway.pid} at ${gateway.url}, anchor pid ${anchor.pid} at ${anchor.url}\n`,
      );
      const auth = { authorization: `Bearer ${merchant.api_key}` };
      const common = { connections: CONNECTIONS, distinctIdempotencyKey: false };
      const phases = { postgres: backend === 'postgres', durationS: DURATION_S, pairs: PAIRS, warmupS: WARMUP_S };
      const targets = { ratioAtLeast: 0.5, p99AtMostMs: backend === 'postgres' ? 25 : undefined };
      const create = await alternate({
        title: `POST /v1/payments on ${name}`,
        anchor: {
          pid: anchor.pid,
          spec: {
            ...common,
            origin: anchor.url,
            method: 'POST',
            paths: ['/anchor/payments'],
            headers: JSON_HEADERS,
            body: BODY,
          },
        },
        gateway: {
          pid: gateway.pid,
          spec: {
            ...common,
            origin: gateway.url,
            method: 'POST',
            paths: ['/v1/payments'],
            headers: { ...JSON_HEADERS, ...auth },
            body: BODY,
            distinctIdempotencyKey: true,
          },
        },
        ...phases,
        targets,
      });
      const anchorIds = await seedPayments(`${anchor.url}/anchor/payments`, JSON_HEADERS, 'id', SEED_IDS);
      const gatewayIds = await seedPayments(
        `${gateway.url}/v1/payments`,
        { ...JSON_HEADERS, ...auth },
        'payment_id',
        SEED_IDS,
      );
      const read = await alternate({
        title: `GET /v1/payments/{id} on ${name} (${SEED_IDS} ids in turn)`,
        anchor: {
          pid: anchor.pid,
          spec: {
            ...common,
            origin: anchor.url,
            method: 'GET',
            paths: anchorIds.map((id) => `/anchor/payments/${id}`),
            headers: {},
          },
        },
        gateway: {
          pid: gateway.pid,
          spec: {
            ...common,
            origin: gateway.url,
            method: 'GET',
            paths: gatewayIds.map((id) => `/v1/payments/${id}`),
            headers: auth,
          },
        },
        ...phases,
        targets,
      });
      return [create, read];
    } finally {
      await Promise.all([gateway.stop(), anchor.stop()]);
    }
  } finally {
    await setup.cleanUp();
    await database?.drop();
  }
}

function summary(outcomes: readonly AlternatingOutcome[]): void {
  const out = (text: string) => process.stdout.write(text);
  out(
    '\nsummary (ratio = mean gateway req/s / mean anchor req/s; min = worst gateway phase / the anchor phase before it)\n',
  );
  for (const outcome of outcomes) {
    const p99 =
      outcome.targets.p99AtMostMs === undefined
        ? ''
        : `, p99 ${outcome.gatewayP99MaxMs.toFixed(1)} ms (<= ${outcome.targets.p99AtMostMs})`;
    out(
      `  ${outcome.title.padEnd(56)} gateway ${outcome.gatewayMean.toFixed(0).padStart(6)} / anchor ${outcome.anchorMean.toFixed(0).padStart(6)} req/s` +
        `  ratio ${outcome.ratio.toFixed(2)} (min ${outcome.minRatio.toFixed(2)}, >= ${outcome.targets.ratioAtLeast})${p99}, errors ${outcome.gatewayErrors}` +
        `  ${verdict(outcome.met)}\n`,
    );
  }
}

const backends: Backend[] = [];
if (!process.env.BENCH_SKIP_POSTGRES) backends.push('postgres');
if (!process.env.BENCH_SKIP_PGLITE) backends.push('pglite');
const outcomes: AlternatingOutcome[] = [];
for (const backend of backends) outcomes.push(...(await benchBackend(backend)));
summary(outcomes);

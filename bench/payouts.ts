// `npm run bench:payouts`: payout creation through the whole gateway against the
// anchor route, on PostgreSQL, in alternating phases of one run.
//   POST /v1/crypto/payouts (full semantics: authentication, `payouts` scope, rate
//   limit raised but counting, validation, a distinct external_id per request, the
//   network-fee quote (chain prices and the recipient's USDT from the quote cache,
//   warm after the first request), the idempotency record, the payout row, its
//   queued outgoing transfer, the reservation of total_debit and the
//   crypto.payout.updated outbox row, in one transaction) against POST
//   /anchor/payments (Fastify 5, JSON schema, one INSERT … RETURNING through a `pg`
//   Pool of 20), as bench/payments.ts measures it.
// Laid out as production runs it: the gateway under test is `paygate serve --role
// api` (the executor is a worker's job, never the API's), the simulated chain is
// `paygate chain simulate` in its own process (PAYGATE_SANDBOX_CHAIN_URL), and with
// BENCH_PAYOUTS_WORKER=1 a `paygate serve --role worker` process sends the payouts
// meanwhile (it competes for the same 2 cores and the same database).
// Two lines, each against the anchor measured in the same alternating run:
//   1. the target: BENCH_MERCHANTS (50) merchants, each its own shop, key and USDT
//      balance, the load generator taking their keys in turn;
//   2. informational: ONE merchant (one balance row: each reservation locks it
//      until COMMIT; concurrent payouts share a statement that updates it once).
// Every balance is credited beforehand (as a final deposit would, one ledger
// transfer each); afterwards `paygate ledger check` must be green. Then the
// executor's bench (bench/payout-executor.ts, the executor engineer's) runs when present.
// Target: ratio >= 0.5, zero errors. A missed target prints MISS; the exit code is
// non-zero only on errors or a failed ledger check.
//   BENCH_DURATION_S (default 10) seconds per phase, BENCH_WARMUP_S (3), BENCH_PAIRS (2),
//   BENCH_CONNECTIONS (50), BENCH_MERCHANTS (50), BENCH_PAYOUTS_WORKER (unset),
//   BENCH_SKIP_EXECUTOR=1 (skip the executor's half), BENCH_DATABASE_URL (the
//   PostgreSQL server), BENCH_GATEWAY_LOG_LEVEL (default warn).
import { randomBytes } from 'node:crypto';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { alternate, type AlternatingOutcome } from './alternating-phases.ts';
import { startAnchor } from './anchors/anchor-process.ts';
import { createBenchDatabase } from './bench-database.ts';
import {
  createBenchMerchant,
  gatewaySetup,
  startGateway,
  type BenchMerchant,
  type GatewaySetup,
} from './gateway-process.ts';
import { startServerProcess, type ServerProcess } from './server-process.ts';
import { envNumber, verdict } from './verdict.ts';
import { openDatabase } from '../src/db/database.ts';
import { inTransaction } from '../src/db/transaction.ts';
import { systemClock } from '../src/clock.ts';
import { ensureAccounts, merchantAccountKey, systemAccountKey } from '../src/ledger/ledger-accounts.ts';
import { transfer } from '../src/ledger/ledger-service.ts';
import { tronAddressFromPrivateKey } from '../src/crypto/tron/address.ts';

const DURATION_S = envNumber('BENCH_DURATION_S', 10);
const WARMUP_S = envNumber('BENCH_WARMUP_S', 3);
const PAIRS = envNumber('BENCH_PAIRS', 2);
const CONNECTIONS = envNumber('BENCH_CONNECTIONS', 50);
const MERCHANTS = envNumber('BENCH_MERCHANTS', 50);
const WITH_WORKER = process.env.BENCH_PAYOUTS_WORKER === '1';
const PAYGATE = fileURLToPath(new URL('../bin/paygate.js', import.meta.url));
const ANCHOR_BODY = JSON.stringify({
  amount: 1500.5,
  currency: 'RUB',
  order_id: 'bench-order',
  callback_url: 'https://merchant.example/hook',
});
const UNIQUE = '@@external_id@@';
const JSON_HEADERS = { 'content-type': 'application/json' };
/** 100 million USDT per merchant: far more than any run spends (about 25 USDT per payout with its fee). */
const FUNDING_MICRO = 100_000_000_000_000n;
/** `paygate merchant create` processes run at once (each is a Node start-up). */
const CREATE_CONCURRENCY = 5;

/** Credits each shop's sandbox USDT main account from the hot wallet, as a final deposit does. */
async function fund(databaseUrl: string, merchants: readonly BenchMerchant[]): Promise<void> {
  const handle = await openDatabase({ url: databaseUrl, poolSize: 2 });
  try {
    await inTransaction(handle.db, async (tx) => {
      for (const merchant of merchants) {
        const [main, hotWallet] = await ensureAccounts(tx, systemClock, [
          merchantAccountKey('sandbox', merchant.merchant_id, 'USDT', 'main'),
          systemAccountKey('sandbox', 'hot_wallet', 'USDT', 0),
        ]);
        await transfer(tx, systemClock, {
          id: `bench-payouts-funding:${merchant.shop_id}`,
          debitAccountId: hotWallet!.id,
          creditAccountId: main!.id,
          amount: FUNDING_MICRO,
          type: 'deposit',
          reference: { type: 'deposit', id: 'bench-funding' },
        });
      }
    });
  } finally {
    await handle.close();
  }
}

async function createMerchants(setup: GatewaySetup, count: number): Promise<BenchMerchant[]> {
  const merchants: BenchMerchant[] = [];
  while (merchants.length < count) {
    const wave = Math.min(CREATE_CONCURRENCY, count - merchants.length);
    merchants.push(...(await Promise.all(Array.from({ length: wave }, () => createBenchMerchant(setup)))));
  }
  return merchants;
}

/** `paygate chain simulate` on a free port: the sandbox chain every role of the run drives. */
function startChain(setup: GatewaySetup): Promise<ServerProcess> {
  return startServerProcess({
    label: 'simulated chain',
    script: PAYGATE,
    args: ['chain', 'simulate', '--port', '0', '--seed', `bench-payouts-${randomBytes(4).toString('hex')}`],
    env: setup.env,
    ready: /simulated TRON chain listening on (\S+)/,
  });
}

/** `paygate serve --role worker`: the executor (and every other worker) in a process of its own. */
function startWorker(setup: GatewaySetup): Promise<ServerProcess> {
  return startServerProcess({
    label: 'worker',
    script: PAYGATE,
    args: ['serve', '--role', 'worker'],
    env: setup.env,
    ready: /paygate workers (running)/,
  });
}

function summaryLine(label: string, outcome: AlternatingOutcome, target: boolean): string {
  return (
    `  ${label.padEnd(34)} gateway ${outcome.gatewayMean.toFixed(0).padStart(6)} / anchor ${outcome.anchorMean.toFixed(0).padStart(6)} req/s` +
    `  ratio ${outcome.ratio.toFixed(2)} (min ${outcome.minRatio.toFixed(2)}, >= 0.5), p99 ${outcome.gatewayP99MaxMs.toFixed(1)} ms, errors ${outcome.gatewayErrors}` +
    `  ${verdict(outcome.met)}${target ? '' : ' (informational)'}\n`
  );
}

const database = await createBenchDatabase('payouts');
const chainSetup = await gatewaySetup('postgres', database.url);
let failed = false;
try {
  const chain = await startChain(chainSetup);
  const setup = await gatewaySetup('postgres', database.url, { PAYGATE_SANDBOX_CHAIN_URL: chain.url });
  const servers: ServerProcess[] = [chain];
  try {
    const merchants = await createMerchants(setup, MERCHANTS);
    await fund(database.url, merchants);
    const gateway = await startGateway(setup, 'api');
    servers.push(gateway);
    if (WITH_WORKER) servers.push(await startWorker(setup));
    const anchor = await startAnchor(database.url);
    servers.push(anchor);
    process.stdout.write(
      `\nPostgreSQL: gateway (--role api) pid ${gateway.pid} at ${gateway.url}, anchor pid ${anchor.pid} at ${anchor.url}, chain pid ${chain.pid} at ${chain.url}, ` +
        `${WITH_WORKER ? `worker pid ${servers[2]!.pid} sending meanwhile` : 'no worker (creation alone; BENCH_PAYOUTS_WORKER=1 adds one)'}\n`,
    );
    const address = tronAddressFromPrivateKey(randomBytes(32));
    const body = JSON.stringify({ external_id: `bench-${UNIQUE}`, network: 'TRC20', amount: '1.50', address });
    const common = { connections: CONNECTIONS, distinctIdempotencyKey: false };
    const anchorSide = {
      pid: anchor.pid,
      spec: {
        ...common,
        origin: anchor.url,
        method: 'POST' as const,
        paths: ['/anchor/payments'],
        headers: JSON_HEADERS,
        body: ANCHOR_BODY,
      },
    };
    const gatewaySide = (keys: readonly BenchMerchant[]) => ({
      pid: gateway.pid,
      spec: {
        ...common,
        origin: gateway.url,
        method: 'POST' as const,
        paths: ['/v1/crypto/payouts'],
        headers: JSON_HEADERS,
        rotatingHeaders: keys.map((merchant) => ({ authorization: `Bearer ${merchant.api_key}` })),
        body,
        uniqueBodyToken: UNIQUE,
      },
    });
    const run = (title: string, keys: readonly BenchMerchant[]) =>
      alternate({
        title,
        anchor: anchorSide,
        gateway: gatewaySide(keys),
        postgres: true,
        durationS: DURATION_S,
        pairs: PAIRS,
        warmupS: WARMUP_S,
        targets: { ratioAtLeast: 0.5 },
      });
    const spread = await run(`POST /v1/crypto/payouts, ${merchants.length} merchants (target)`, merchants);
    const hot = await run('POST /v1/crypto/payouts, one merchant (informational)', merchants.slice(0, 1));
    process.stdout.write(
      `\nsummary\n${summaryLine(`${merchants.length} merchants, keys in turn`, spread, true)}${summaryLine('one merchant (one balance row)', hot, false)}` +
        '  one merchant: its balance row is locked by each creating statement until COMMIT; concurrent payouts share one (docs/payouts-api.md).\n',
    );
    if (spread.gatewayErrors > 0 || hot.gatewayErrors > 0) failed = true;
  } finally {
    await Promise.all(servers.map((server) => server.stop()));
  }
  const check = await promisify(execFile)(process.execPath, [PAYGATE, 'ledger', 'check'], { env: setup.env }).catch(
    (error: { stdout?: string; stderr?: string }) => {
      failed = true;
      return { stdout: error.stdout ?? '', stderr: error.stderr ?? String(error) };
    },
  );
  process.stdout.write(`\npaygate ledger check: ${`${check.stdout}${check.stderr}`.trim()}\n`);
  await setup.cleanUp();
} finally {
  await chainSetup.cleanUp();
  await database.drop();
}

// The executor engineer's half of bench:payouts, when it has landed.
const executorBench = new URL('./payout-executor.ts', import.meta.url);
if (process.env.BENCH_SKIP_EXECUTOR === '1') {
  process.stdout.write('\nBENCH_SKIP_EXECUTOR=1: the executor half was not run.\n');
} else if (existsSync(executorBench)) {
  process.stdout.write('\nthe executor (bench/payout-executor.ts):\n');
  const module = (await import(executorBench.href)) as {
    runPayoutExecutorBench?: () => Promise<{ race: { overspent: boolean; ledgerViolations: number } }>;
    printPayoutExecutorBench?: (result: unknown) => void;
  };
  if (typeof module.runPayoutExecutorBench === 'function') {
    const result = await module.runPayoutExecutorBench();
    module.printPayoutExecutorBench?.(result);
    if (result.race.overspent || result.race.ledgerViolations > 0) failed = true;
  }
} else {
  process.stdout.write('\nbench/payout-executor.ts is not there: the executor half was not run.\n');
}
if (failed) process.exitCode = 1;

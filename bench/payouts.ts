// `npm run bench:payouts`: payout creation through the whole gateway against the
// anchor route, on PostgreSQL, in alternating phases of one run.
//   POST /v1/crypto/payouts (full semantics: authentication, `payouts` scope, rate
//   limit raised but counting, validation, a distinct external_id per request, the
//   network-fee quote from the sandbox chain over HTTP, the idempotency record,
//   the payout row, its queued outgoing transfer, the linked reservation of
//   total_debit and the crypto.payout.updated outbox row, in one transaction)
//   against POST /anchor/payments (Fastify 5, JSON schema, one INSERT … RETURNING
//   through a `pg` Pool of 20), as bench/payments.ts measures it.
// The shop's USDT balance is credited beforehand (as a final deposit would, one
// ledger transfer); afterwards `paygate ledger check` must be green. Then the
// executor's bench (bench/payout-executor.ts, the executor engineer's) runs when present.
// With `serve --role all` the executor signs and sends the payouts in the same
// process meanwhile (and the sandbox chain runs there too); PAYGATE_OUTGOING_MAX_IN_FLIGHT=1
// in the environment nearly stops it, to measure creation alone.
// Targets: ratio >= 0.5, zero errors. A missed target prints MISS; the exit code is
// non-zero only on errors or a failed ledger check.
//   BENCH_DURATION_S (default 10) seconds per phase, BENCH_WARMUP_S (3), BENCH_PAIRS (2),
//   BENCH_CONNECTIONS (50), BENCH_DATABASE_URL (the PostgreSQL server),
//   BENCH_GATEWAY_LOG_LEVEL (default warn).
import { randomBytes } from 'node:crypto';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { alternate } from './alternating-phases.ts';
import { startAnchor } from './anchors/anchor-process.ts';
import { createBenchDatabase } from './bench-database.ts';
import { createBenchMerchant, gatewaySetup, startGateway, type BenchMerchant } from './gateway-process.ts';
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
const PAYGATE = fileURLToPath(new URL('../bin/paygate.js', import.meta.url));
const ANCHOR_BODY = JSON.stringify({ amount: 1500.5, currency: 'RUB', order_id: 'bench-order', callback_url: 'https://merchant.example/hook' });
const UNIQUE = '@@external_id@@';
const JSON_HEADERS = { 'content-type': 'application/json' };
/** 100 million USDT: far more than any run spends (about 25 USDT per payout with its fee). */
const FUNDING_MICRO = 100_000_000_000_000n;

/** Credits the shop's sandbox USDT main account from the hot wallet, as a final deposit does. */
async function fund(databaseUrl: string, merchant: BenchMerchant): Promise<void> {
  const handle = await openDatabase({ url: databaseUrl, poolSize: 2 });
  try {
    await inTransaction(handle.db, async (tx) => {
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
    });
  } finally {
    await handle.close();
  }
}

const database = await createBenchDatabase('payouts');
const setup = await gatewaySetup('postgres', database.url);
let failed = false;
try {
  const merchant = await createBenchMerchant(setup);
  await fund(database.url, merchant);
  const gateway = await startGateway(setup);
  const anchor = await startAnchor(database.url).catch(async (error: unknown) => {
    await gateway.stop();
    throw error;
  });
  try {
    process.stdout.write(`\nPostgreSQL: gateway pid ${gateway.pid} at ${gateway.url}, anchor pid ${anchor.pid} at ${anchor.url}\n`);
    const address = tronAddressFromPrivateKey(randomBytes(32));
    const body = JSON.stringify({ external_id: `bench-${UNIQUE}`, network: 'TRC20', amount: '1.50', address });
    const common = { connections: CONNECTIONS, distinctIdempotencyKey: false };
    const outcome = await alternate({
      title: 'POST /v1/crypto/payouts on PostgreSQL',
      anchor: { pid: anchor.pid, spec: { ...common, origin: anchor.url, method: 'POST', paths: ['/anchor/payments'], headers: JSON_HEADERS, body: ANCHOR_BODY } },
      gateway: {
        pid: gateway.pid,
        spec: {
          ...common,
          origin: gateway.url,
          method: 'POST',
          paths: ['/v1/crypto/payouts'],
          headers: { ...JSON_HEADERS, authorization: `Bearer ${merchant.api_key}` },
          body,
          uniqueBodyToken: UNIQUE,
        },
      },
      postgres: true,
      durationS: DURATION_S,
      pairs: PAIRS,
      warmupS: WARMUP_S,
      targets: { ratioAtLeast: 0.5 },
    });
    process.stdout.write(
      `\nsummary\n  ${outcome.title.padEnd(44)} gateway ${outcome.gatewayMean.toFixed(0).padStart(6)} / anchor ${outcome.anchorMean.toFixed(0).padStart(6)} req/s` +
        `  ratio ${outcome.ratio.toFixed(2)} (min ${outcome.minRatio.toFixed(2)}, >= 0.5), p99 ${outcome.gatewayP99MaxMs.toFixed(1)} ms, errors ${outcome.gatewayErrors}  ${verdict(outcome.met)}\n`,
    );
    if (outcome.gatewayErrors > 0) failed = true;
  } finally {
    await Promise.all([gateway.stop(), anchor.stop()]);
  }
  const check = await promisify(execFile)(process.execPath, [PAYGATE, 'ledger', 'check'], { env: setup.env }).catch((error: { stdout?: string; stderr?: string }) => {
    failed = true;
    return { stdout: error.stdout ?? '', stderr: error.stderr ?? String(error) };
  });
  process.stdout.write(`\npaygate ledger check: ${`${check.stdout}${check.stderr}`.trim()}\n`);
} finally {
  await setup.cleanUp();
  await database.drop();
}

// The executor engineer's half of bench:payouts, when it has landed.
const executorBench = new URL('./payout-executor.ts', import.meta.url);
if (existsSync(executorBench)) {
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

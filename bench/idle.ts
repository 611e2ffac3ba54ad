// `npm run bench:idle`: an idle gateway and how fast it wakes.
//  1. `paygate serve` (role all) on a fresh PostgreSQL database with no traffic and
//     no due work: its CPU (utime + stime from /proc/<pid>/stat) over BENCH_IDLE_S
//     seconds (default 60) after BENCH_IDLE_SETTLE_S (5) to finish starting, and its
//     RSS. Targets: < 1 % of a core, <= 150 MB.
//  2. Wake-up: a payment with a callback_url on a loopback receiver is paid through
//     POST /v1/test_helpers/payments/{id}/pay after BENCH_WAKE_GAP_S (3) idle seconds,
//     so its webhook becomes due while the workers sleep; the time from the pay
//     request to the webhook's arrival, BENCH_WAKE_SAMPLES (5) times. Target <= 1 s.
// BENCH_IDLE_PGLITE=1 also measures the gateway on PGlite (reported, no target).
// A missed target prints MISS; the exit code is non-zero only on errors.
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { performance } from 'node:perf_hooks';
import { createBenchDatabase } from './bench-database.ts';
import {
  createBenchMerchant,
  gatewaySetup,
  startGateway,
  type Backend,
  type BenchMerchant,
} from './gateway-process.ts';
import { cpuSecondsOf, rssBytesOf } from './proc-stat.ts';
import type { ServerProcess } from './server-process.ts';
import { measurePostgresCpu } from './server-cpu.ts';
import { envNumber, verdict } from './verdict.ts';

const IDLE_S = envNumber('BENCH_IDLE_S', 60);
const SETTLE_S = envNumber('BENCH_IDLE_SETTLE_S', 5);
const WAKE_SAMPLES = envNumber('BENCH_WAKE_SAMPLES', 5);
const WAKE_GAP_S = envNumber('BENCH_WAKE_GAP_S', 3);
const WAKE_TIMEOUT_MS = 10_000;
const CPU_TARGET_PERCENT = 1;
const RSS_TARGET_MB = 150;
const WAKE_TARGET_MS = 1_000;

const out = (text: string) => process.stdout.write(text);
const megabytes = (bytes: number) => bytes / 1024 / 1024;

async function measureIdle(gateway: ServerProcess, backend: Backend): Promise<void> {
  await sleep(SETTLE_S * 1000);
  const cpuBefore = cpuSecondsOf(gateway.pid);
  const database = backend === 'postgres' ? measurePostgresCpu() : undefined;
  const started = performance.now();
  let rssMax = rssBytesOf(gateway.pid);
  while (performance.now() - started < IDLE_S * 1000) {
    await sleep(Math.min(1000, IDLE_S * 1000 - (performance.now() - started)));
    rssMax = Math.max(rssMax, rssBytesOf(gateway.pid));
  }
  const elapsedS = (performance.now() - started) / 1000;
  const cpuPercent = ((cpuSecondsOf(gateway.pid) - cpuBefore) / elapsedS) * 100;
  const rssEnd = rssBytesOf(gateway.pid);
  const databaseUs = database?.();
  const targets = backend === 'postgres';
  out(
    `  idle CPU over ${elapsedS.toFixed(0)} s: ${cpuPercent.toFixed(2)} % of a core` +
      (targets ? `   target < ${CPU_TARGET_PERCENT} %   ${verdict(cpuPercent < CPU_TARGET_PERCENT)}` : '') +
      `\n  RSS: ${megabytes(rssEnd).toFixed(0)} MB at the end, ${megabytes(rssMax).toFixed(0)} MB at most` +
      (targets ? `   target <= ${RSS_TARGET_MB} MB   ${verdict(megabytes(rssMax) <= RSS_TARGET_MB)}` : '') +
      '\n' +
      (databaseUs === undefined
        ? ''
        : `  PostgreSQL server CPU meanwhile: ${((databaseUs / 1_000_000 / elapsedS) * 100).toFixed(2)} % of a core (the whole server: includes other users' work)\n`),
  );
}

/** A loopback webhook receiver that reports when a body mentioning a given text arrives. */
async function startReceiver() {
  const waiting = new Map<string, (at: number) => void>();
  const server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString()));
    request.on('end', () => {
      const at = performance.now();
      response.end('ok');
      for (const [text, resolve] of waiting) if (body.includes(text)) resolve(at);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    /** Resolves to the arrival time (performance.now()) of the first body containing `text`, or undefined after `timeoutMs`. */
    arrivalOf(text: string, timeoutMs: number): Promise<number | undefined> {
      return new Promise((resolve) => {
        const timer = setTimeout(() => (waiting.delete(text), resolve(undefined)), timeoutMs);
        waiting.set(text, (at) => (clearTimeout(timer), waiting.delete(text), resolve(at)));
      });
    },
    close: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))),
  };
}

async function call(
  gateway: ServerProcess,
  merchant: BenchMerchant,
  path: string,
  body: unknown,
): Promise<Record<string, unknown>> {
  const response = await fetch(`${gateway.url}${path}`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${merchant.api_key}`,
      'content-type': 'application/json',
      'idempotency-key': randomUUID(),
    },
    body: JSON.stringify(body),
  });
  const answer = (await response.json()) as Record<string, unknown>;
  if (!response.ok) throw new Error(`POST ${path}: ${response.status} ${JSON.stringify(answer)}`);
  return answer;
}

async function measureWakeUp(gateway: ServerProcess, merchant: BenchMerchant): Promise<void> {
  const receiver = await startReceiver();
  try {
    const latencies: number[] = [];
    for (let sample = 1; sample <= WAKE_SAMPLES; sample++) {
      const payment = await call(gateway, merchant, '/v1/payments', {
        amount: 100,
        currency: 'RUB',
        callback_url: receiver.url,
      });
      const paymentId = String(payment.payment_id);
      await sleep(WAKE_GAP_S * 1000);
      const arrival = receiver.arrivalOf(paymentId, WAKE_TIMEOUT_MS);
      const started = performance.now();
      await call(gateway, merchant, `/v1/test_helpers/payments/${paymentId}/pay`, {});
      const at = await arrival;
      const latencyMs = at === undefined ? Number.POSITIVE_INFINITY : at - started;
      latencies.push(latencyMs);
      out(
        `  wake-up ${sample}: webhook ${at === undefined ? `not delivered within ${WAKE_TIMEOUT_MS} ms` : `arrived ${latencyMs.toFixed(0)} ms`} after the pay request\n`,
      );
    }
    const sorted = [...latencies].sort((a, b) => a - b);
    const worst = sorted.at(-1)!;
    out(
      `  wake-up: median ${sorted[Math.floor(sorted.length / 2)]!.toFixed(0)} ms, worst ${worst.toFixed(0)} ms   target <= ${WAKE_TARGET_MS} ms   ${verdict(worst <= WAKE_TARGET_MS)}\n`,
    );
  } finally {
    await receiver.close();
  }
}

async function benchIdle(backend: Backend): Promise<void> {
  const database = backend === 'postgres' ? await createBenchDatabase('idle') : undefined;
  const setup = await gatewaySetup(backend, database?.url, {
    PAYGATE_ALLOW_HTTP_WEBHOOKS: '1',
    PAYGATE_WEBHOOK_ALLOW_PRIVATE: '1',
  });
  try {
    const merchant = await createBenchMerchant(setup);
    const gateway = await startGateway(setup);
    try {
      out(
        `\nidle gateway on ${backend === 'postgres' ? 'PostgreSQL' : 'PGlite'} (pid ${gateway.pid}, role all), after ${SETTLE_S} s to settle\n`,
      );
      await measureIdle(gateway, backend);
      await measureWakeUp(gateway, merchant);
    } finally {
      await gateway.stop();
    }
  } finally {
    await setup.cleanUp();
    await database?.drop();
  }
}

await benchIdle('postgres');
if (process.env.BENCH_IDLE_PGLITE) await benchIdle('pglite');

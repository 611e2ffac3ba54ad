// Several workers and a crashed worker, on PostgreSQL (PGlite is one process:
// these guarantees are about separate connections and processes).
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock, type Clock } from '../../src/clock.ts';
import type { AppContext } from '../../src/context.ts';
import { openDatabase, type DatabaseHandle } from '../../src/db/database.ts';
import { inTransaction } from '../../src/db/transaction.ts';
import { createDeliveryWorker, DEFAULT_LEASE_MS } from '../../src/webhooks/delivery-worker.ts';
import { emit } from '../../src/webhooks/outbox.ts';
import { createTestApp, type TestApp } from '../support/app.ts';
import { TEST_DATABASE_URL } from '../support/databases.ts';
import { TEST_ROOT_KEY } from '../support/keyring.ts';
import { randomForThisTest, randomIndex } from '../support/seeded-random.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/**
 * Counts deliveries per webhook-id and the most requests for one id that were ever in flight at once.
 * With `holdAfter`, every request after that many is held unanswered until `stopHolding()`: a worker
 * sending one is certainly mid-delivery.
 */
async function startCountingReceiver(delayMs: () => number, options: { holdAfter?: number } = {}) {
  const received = new Map<string, number>();
  const inFlight = new Map<string, number>();
  const held: Array<() => void> = [];
  let holding = options.holdAfter !== undefined;
  let accepted = 0;
  let maxInFlightForOneId = 0;
  const server: Server = createServer((request, response) => {
    const id = String(request.headers['webhook-id']);
    inFlight.set(id, (inFlight.get(id) ?? 0) + 1);
    maxInFlightForOneId = Math.max(maxInFlightForOneId, inFlight.get(id)!);
    request.resume();
    request.on('end', () => {
      const answer = () => {
        inFlight.set(id, inFlight.get(id)! - 1);
        received.set(id, (received.get(id) ?? 0) + 1);
        if (!response.destroyed) response.end('ok');
      };
      accepted += 1;
      if (holding && accepted > options.holdAfter!) held.push(answer);
      else setTimeout(answer, delayMs());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    received,
    get maxInFlightForOneId() {
      return maxInFlightForOneId;
    },
    get heldCount() {
      return held.length;
    },
    /** Answers the held requests (to whoever still listens) and holds no more. */
    stopHolding() {
      holding = false;
      for (const answer of held.splice(0)) answer();
    },
    close: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))),
  };
}

async function emitMany(testApp: TestApp, shopId: string, url: string, count: number): Promise<string[]> {
  const ids: string[] = [];
  for (let start = 0; start < count; start += 100) {
    await inTransaction(testApp.context.db, async (tx) => {
      for (let index = start; index < Math.min(count, start + 100); index++) {
        ids.push(
          (await emit(tx, testApp.clock, { shopId, type: 'payment.paid', data: { index }, destination: url })).id,
        );
      }
    });
  }
  return ids;
}

async function statusCounts(testApp: TestApp): Promise<Record<string, number>> {
  const rows = await testApp.context.db
    .selectFrom('webhook_deliveries')
    .select(['status', (eb) => eb.fn.countAll<bigint>().as('count')])
    .groupBy('status')
    .execute();
  return Object.fromEntries(rows.map((row) => [row.status, Number(row.count)]));
}

describe.runIf(TEST_DATABASE_URL)('webhook workers on postgres', () => {
  let testApp: TestApp;
  const handles: DatabaseHandle[] = [];
  beforeAll(async () => {
    testApp = await createTestApp('postgres');
    testApp.clock.set(new Date());
  });
  afterAll(async () => {
    await Promise.all(handles.map((handle) => handle.close()));
    await testApp.close();
  });

  async function separateContext(clock: Clock): Promise<AppContext> {
    const handle = await openDatabase({ url: testApp.database.url, poolSize: 10 });
    handles.push(handle);
    return { ...testApp.context, db: handle.db, clock, metrics: new Registry() };
  }

  it('two workers on separate connection pools deliver 1,000 events, each exactly once, never two attempts of one event at a time', async () => {
    const random = randomForThisTest();
    const receiver = await startCountingReceiver(() => randomIndex(random, 4));
    try {
      await testApp.context.db.deleteFrom('webhook_attempts').execute();
      await testApp.context.db.deleteFrom('webhook_deliveries').execute();
      const merchant = await testApp.createMerchant();
      const ids = await emitMany(testApp, merchant.shop_id, receiver.url, 1_000);
      // Real time: a receiver's backlog beyond what a worker holds is postponed at the receiver's pace.
      const contexts = [await separateContext(systemClock), await separateContext(systemClock)];
      const workers = contexts.map((context) => createDeliveryWorker(context, { concurrency: 16, idlePollMs: 10 }));
      for (const worker of workers) worker.start();
      try {
        await expect.poll(() => receiver.received.size, { timeout: 240_000, interval: 50 }).toBe(1_000);
        await expect.poll(() => statusCounts(testApp), { timeout: 60_000, interval: 50 }).toEqual({ delivered: 1_000 });
      } finally {
        await Promise.all(workers.map((worker) => worker.stop()));
      }
      expect([...receiver.received.keys()].sort()).toEqual([...ids].sort());
      expect(Math.max(...receiver.received.values())).toBe(1);
      expect(receiver.maxInFlightForOneId).toBe(1);
      const attempts = await testApp.context.db
        .selectFrom('webhook_attempts')
        .select(['event_id', 'attempt_number'])
        .execute();
      expect(attempts).toHaveLength(1_000);
      expect(attempts.every((attempt) => attempt.attempt_number === 1)).toBe(true);
      // Both workers took part.
      for (const context of contexts) {
        const counted = (await context.metrics.getSingleMetricAsString('paygate_webhook_attempts_total')).match(
          /outcome="succeeded"} (\d+)/,
        );
        expect(Number(counted?.[1] ?? 0)).toBeGreaterThan(0);
      }
    } finally {
      await receiver.close();
    }
  });

  it('a worker process killed with SIGKILL mid-batch loses nothing: after its lease expires another worker delivers every event', async () => {
    const receiver = await startCountingReceiver(() => 100, { holdAfter: 40 });
    let child: ChildProcess | undefined;
    try {
      await testApp.context.db.deleteFrom('webhook_attempts').execute();
      await testApp.context.db.deleteFrom('webhook_deliveries').execute();
      const merchant = await testApp.createMerchant();
      const ids = await emitMany(testApp, merchant.shop_id, receiver.url, 300);
      child = spawn(`${ROOT}node_modules/.bin/node`, ['bin/paygate.js', 'serve', '--role', 'worker'], {
        cwd: ROOT,
        env: {
          ...process.env,
          DATABASE_URL: testApp.database.url,
          PAYGATE_ROOT_KEY: TEST_ROOT_KEY,
          PAYGATE_WEBHOOK_ALLOW_PRIVATE: '1',
          PAYGATE_ALLOW_HTTP_WEBHOOKS: '1',
          PAYGATE_WEBHOOK_CONCURRENCY: '8',
          LOG_LEVEL: 'warn',
        },
        stdio: ['ignore', 'ignore', 'inherit'],
      });
      // Killed while a delivery is certainly in flight: the receiver holds every request after the 40th.
      await expect.poll(() => receiver.heldCount, { timeout: 120_000, interval: 20 }).toBeGreaterThan(0);
      child.kill('SIGKILL');
      await new Promise((resolve) => child!.once('exit', resolve));

      // The killed worker held claims it never finished: they stay leased, not lost.
      const stranded = await testApp.context.db
        .selectFrom('webhook_deliveries')
        .select('id')
        .where('status', '=', 'pending')
        .where('lease_token', 'is not', null)
        .execute();
      expect(stranded.length).toBeGreaterThan(0);
      expect(receiver.received.size).toBeLessThan(ids.length);
      receiver.stopHolding();

      // Another worker, once the leases have run out (its clock runs past them), finishes the job.
      const later: Clock = { now: () => new Date(Date.now() + DEFAULT_LEASE_MS + 1_000) };
      const successor = createDeliveryWorker(await separateContext(later), { concurrency: 32, idlePollMs: 10 });
      successor.start();
      try {
        await expect
          .poll(() => statusCounts(testApp), { timeout: 120_000, interval: 50 })
          .toEqual({ delivered: ids.length });
      } finally {
        await successor.stop();
      }
      for (const id of ids) expect(receiver.received.get(id) ?? 0).toBeGreaterThanOrEqual(1);
    } finally {
      if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await receiver.close();
    }
  });
});

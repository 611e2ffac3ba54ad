// `npm run bench:webhooks`: 10,000 events through the delivery engine on
// PostgreSQL to a local receiver, then a bare undici client posting the same
// bodies to the same receiver at the same concurrency, and the ratio. The one
// receiver stands for many: its per-receiver cap is the whole concurrency unless
// PAYGATE_WEBHOOK_ORIGIN_CONCURRENCY says otherwise.
// Target: ratio >= 0.5 (PASS/MISS printed); a lost webhook is an error (exit 1).
// Uses a fresh database on BENCH_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/postgres), dropped after.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { availableParallelism, loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { measurePostgresCpu } from './server-cpu.ts';
import { openWebhookBenchDatabase } from './webhook-bench-database.ts';
import { verdict } from './verdict.ts';
import { Agent, request } from 'undici';
import { systemClock } from '../src/clock.ts';
import { inTransaction } from '../src/db/transaction.ts';
import { createDeliveryWorker } from '../src/webhooks/delivery-worker.ts';
import { emit } from '../src/webhooks/outbox.ts';

const EVENTS = Number(process.env.BENCH_EVENTS ?? 10_000);

function startReceiver() {
  const received = new Set<string>();
  let requests = 0;
  const server = createServer((req, res) => {
    requests += 1;
    const id = req.headers['webhook-id'];
    if (typeof id === 'string') received.add(id);
    req.resume();
    req.on('end', () => res.end('ok'));
  });
  return new Promise<{ url: string; received: Set<string>; requests: () => number; close: () => Promise<void> }>(
    (resolve) => {
      server.listen(0, '127.0.0.1', () =>
        resolve({
          url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
          received,
          requests: () => requests,
          close: () => new Promise((done) => (server.closeAllConnections(), server.close(() => done()))),
        }),
      );
    },
  );
}

/** Posts every body with `concurrency` loops on one undici Agent; resolves to requests per second. */
async function bareUndici(url: string, bodies: readonly string[], concurrency: number): Promise<number> {
  const agent = new Agent({ connections: concurrency });
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < bodies.length) {
        const body = bodies[next++]!;
        const response = await request(url, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body,
          dispatcher: agent,
        });
        await response.body.text();
      }
    }),
  );
  const rate = bodies.length / ((performance.now() - started) / 1000);
  await agent.close();
  return rate;
}

async function main(): Promise<void> {
  const bench = await openWebhookBenchDatabase('webhooks', {
    PAYGATE_WEBHOOK_ORIGIN_CONCURRENCY:
      process.env.PAYGATE_WEBHOOK_ORIGIN_CONCURRENCY ?? process.env.PAYGATE_WEBHOOK_CONCURRENCY ?? '32',
  });
  const { context } = bench;
  const { config } = context;
  const concurrency = config.webhookConcurrency;
  const receiver = await startReceiver().catch(async (error: unknown) => {
    await bench.close();
    throw error;
  });
  try {
    // A realistic body: a payment.paid event with the full payment (about 600 bytes).
    const payment = (index: number) => ({
      id: `0b9d6f2e-6a51-4a8e-9d7e-${String(index).padStart(12, '0')}`,
      order_id: `order-${index}`,
      status: 'paid',
      amount: 1500.5,
      amount_total: 1545.02,
      currency: 'RUB',
      method: 'card',
      description: 'Order from the bench shop',
      payment_url: `http://localhost:8080/pay/${index}`,
      callback_url: receiver.url,
      created_at: new Date().toISOString(),
      paid_at: new Date().toISOString(),
      expires_at: new Date(Date.now() + 3_600_000).toISOString(),
    });
    const emitStarted = performance.now();
    const ids: string[] = [];
    for (let start = 0; start < EVENTS; start += 500) {
      await inTransaction(context.db, async (tx) => {
        for (let index = start; index < Math.min(EVENTS, start + 500); index++) {
          ids.push(
            (
              await emit(tx, systemClock, {
                shopId: bench.shopId,
                type: 'payment.paid',
                data: payment(index),
                destination: receiver.url,
              })
            ).id,
          );
        }
      });
    }
    const emitSeconds = (performance.now() - emitStarted) / 1000;
    const bodies = (await context.db.selectFrom('webhook_events').select('payload').execute()).map(
      (row) => row.payload,
    );
    const baselineBefore = await bareUndici(receiver.url, bodies, concurrency);
    receiver.received.clear();
    const requestsBefore = receiver.requests();

    const worker = createDeliveryWorker(context, { idlePollMs: 20 });
    const engineStarted = performance.now();
    const engineCpu = process.cpuUsage();
    const engineDatabaseCpu = measurePostgresCpu();
    worker.start();
    const deadline = Date.now() + 10 * 60_000;
    for (;;) {
      if (receiver.received.size >= EVENTS) {
        const pending = await context.db
          .selectFrom('webhook_deliveries')
          .select((eb) => eb.fn.countAll<bigint>().as('count'))
          .where('status', '!=', 'delivered')
          .executeTakeFirstOrThrow();
        if (Number(pending.count) === 0) break;
      }
      if (Date.now() > deadline) break;
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    const engineSeconds = (performance.now() - engineStarted) / 1000;
    const engineCpuUsage = process.cpuUsage(engineCpu);
    const engineCpuUs = (engineCpuUsage.user + engineCpuUsage.system) / EVENTS;
    const databaseCpuUs = engineDatabaseCpu();
    await worker.stop();
    const delivered = await context.db
      .selectFrom('webhook_deliveries')
      .select((eb) => eb.fn.countAll<bigint>().as('count'))
      .where('status', '=', 'delivered')
      .executeTakeFirstOrThrow();
    const lost = ids.filter((id) => !receiver.received.has(id)).length + (EVENTS - Number(delivered.count));
    const engineRequests = receiver.requests() - requestsBefore;

    const baselineCpu = process.cpuUsage();
    const baselineAfter = await bareUndici(receiver.url, bodies, concurrency);
    const baselineCpuUsage = process.cpuUsage(baselineCpu);
    const baselineCpuUs = (baselineCpuUsage.user + baselineCpuUsage.system) / bodies.length;
    const engineRate = EVENTS / engineSeconds;
    // The machine is shared: the bare client runs before and after the engine, and the ratio uses their mean.
    const baselineRate = (baselineBefore + baselineAfter) / 2;
    const ratio = engineRate / baselineRate;
    const line = (label: string, value: string) => process.stdout.write(`${label.padEnd(34)}${value}\n`);
    line('machine load (1 min)', loadavg()[0]!.toFixed(2) + ` on ${availableParallelism()} cores`);
    line('events', String(EVENTS));
    line('concurrency', `${concurrency} (${Math.min(concurrency, config.webhookOriginConcurrency)} per receiver)`);
    line('emit (outbox, 500 per tx)', `${(EVENTS / emitSeconds).toFixed(0)} events/s`);
    line(
      'engine: delivered and recorded',
      `${engineRate.toFixed(0)} events/s (${engineSeconds.toFixed(2)} s, ${engineRequests} requests)`,
    );
    line(
      'bare undici, same bodies',
      `${baselineRate.toFixed(0)} requests/s (before ${baselineBefore.toFixed(0)}, after ${baselineAfter.toFixed(0)})`,
    );
    line(
      'this process CPU per event',
      `engine ${engineCpuUs.toFixed(0)} µs, bare ${baselineCpuUs.toFixed(0)} µs (both include the receiver)`,
    );
    line(
      'PostgreSQL CPU per event',
      databaseCpuUs === undefined ? 'unknown (no /proc)' : `${(databaseCpuUs / EVENTS).toFixed(0)} µs`,
    );
    line('ratio engine / bare', `${ratio.toFixed(2)} (target >= 0.5)   ${verdict(ratio >= 0.5)}`);
    line('lost', `${lost} (must be 0)   ${verdict(lost === 0)}`);
    // A lost webhook is an error; a missed speed target is not.
    process.exitCode = lost === 0 ? 0 : 1;
  } finally {
    await receiver.close();
    await bench.close();
  }
}

await main();

// `npm run bench:webhook-spell`: a backlog of 6,000 webhooks to one receiver drained by
// the delivery engine on PostgreSQL, once undisturbed (the anchor, before and after)
// and once with the worker's event loop busy 40 ms of every 50 for the first 3 s (a
// stand-in for a process that signs a batch of payouts beside the deliveries). The
// spell books the backlog at its slow pace; the engine must claim it early once the
// receiver answers quickly again, not leave it idle until the booked times.
// Target: after the spell ends, deliveries per second >= 0.8 of the anchor's rate.
// A lost webhook (any of the three drains; counted by webhook-id) is an error (exit 1). Uses a fresh database on BENCH_DATABASE_URL, dropped after.
//   BENCH_EVENTS (6,000), BENCH_SPELL_S (3), BENCH_SPELL_BUSY_MS (40 of every 50).
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { availableParallelism, loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { Registry } from 'prom-client';
import { sql } from 'kysely';
import { envNumber, verdict } from './verdict.ts';
import { openWebhookBenchDatabase } from './webhook-bench-database.ts';
import { systemClock } from '../src/clock.ts';
import { listenOnPostgres } from '../src/db/notifications.ts';
import { inTransaction } from '../src/db/transaction.ts';
import { createDeliveryWorker } from '../src/webhooks/delivery-worker.ts';
import { emit } from '../src/webhooks/outbox.ts';

const EVENTS = envNumber('BENCH_EVENTS', 6_000);
const SPELL_MS = envNumber('BENCH_SPELL_S', 3) * 1000;
const BUSY_MS = envNumber('BENCH_SPELL_BUSY_MS', 40);
const PERIOD_MS = 50;
const TARGET = 0.8;
/** A drain that has not delivered everything by then is reported with what it lost. */
const DRAIN_LIMIT_MS = 10 * 60_000;

/** A loopback receiver recording when each webhook first arrived (ms of performance.now()), by its webhook-id. */
async function startReceiver() {
  const arrivals = new Map<string, number>();
  const server = createServer((request, response) => {
    const id = String(request.headers['webhook-id']);
    request.resume();
    request.on('end', () => {
      if (!arrivals.has(id)) arrivals.set(id, performance.now());
      response.end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    arrivals,
    close: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))),
  };
}

/** Keeps the event loop busy `BUSY_MS` of every `PERIOD_MS` from now until `SPELL_MS` have passed. */
function busySpell(): () => void {
  const endsAt = performance.now() + SPELL_MS;
  const timer = setInterval(() => {
    const until = Math.min(endsAt, performance.now() + BUSY_MS);
    while (performance.now() < until);
    if (performance.now() >= endsAt) clearInterval(timer);
  }, PERIOD_MS);
  return () => clearInterval(timer);
}

interface Drain {
  readonly seconds: number;
  /** Not received once, or not recorded delivered, when the drain ended. */
  readonly lost: number;
  /** Deliveries per second after the spell (over the whole drain without one). */
  readonly rateAfterSpell: number;
  readonly claimedEarly: number;
}

async function main(): Promise<void> {
  const bench = await openWebhookBenchDatabase('webhook_spell', {}, (url) => listenOnPostgres({ url }));
  const { context } = bench;
  let receiver: Awaited<ReturnType<typeof startReceiver>> | undefined;
  try {
    receiver = await startReceiver();
    const { url, arrivals } = receiver;
    for (let start = 0; start < EVENTS; start += 500) {
      await inTransaction(context.db, async (tx) => {
        for (let index = start; index < Math.min(EVENTS, start + 500); index++)
          await emit(tx, systemClock, {
            shopId: bench.shopId,
            type: 'payment.paid',
            data: { id: `pay_${index}`, status: 'paid', amount: 1500.5 },
            destination: url,
          });
      });
    }

    /** Every delivery made due again, then drained by a fresh worker (with the spell or without). */
    async function drain(spell: boolean): Promise<Drain> {
      await sql`update webhook_deliveries set status = 'pending', next_attempt_at = now(), locked_until = null, lease_token = null`.execute(
        context.db,
      );
      arrivals.clear();
      const metrics = new Registry();
      const worker = createDeliveryWorker({ ...context, metrics });
      const started = performance.now();
      const stopSpell = spell ? busySpell() : () => undefined;
      worker.start();
      const deadline = Date.now() + DRAIN_LIMIT_MS;
      try {
        while (arrivals.size < EVENTS && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
      } finally {
        stopSpell();
        await worker.stop();
      }
      const seconds = (performance.now() - started) / 1000;
      const spellEnds = started + (spell ? SPELL_MS : 0);
      const times = [...arrivals.values()];
      const after = times.filter((at) => at >= spellEnds);
      const lastAt = Math.max(...times);
      const early = (await metrics.getSingleMetric('paygate_webhook_deliveries_claimed_early_total')?.get())?.values[0]
        ?.value;
      const delivered = await context.db
        .selectFrom('webhook_deliveries')
        .select((eb) => eb.fn.countAll<string>().as('count'))
        .where('status', '=', 'delivered')
        .executeTakeFirstOrThrow();
      return {
        seconds,
        lost: EVENTS - Math.min(arrivals.size, Number(delivered.count)),
        rateAfterSpell: after.length / Math.max((lastAt - spellEnds) / 1000, 0.001),
        claimedEarly: early ?? 0,
      };
    }

    const before = await drain(false);
    const withSpell = await drain(true);
    const afterwards = await drain(false);
    const anchorRate = (before.rateAfterSpell + afterwards.rateAfterSpell) / 2;
    const ratio = withSpell.rateAfterSpell / anchorRate;
    const lost = before.lost + withSpell.lost + afterwards.lost;
    const line = (label: string, value: string) => process.stdout.write(`${label.padEnd(40)}${value}\n`);
    const drainLine = (drained: Drain) =>
      `${drained.seconds.toFixed(2)} s, ${drained.rateAfterSpell.toFixed(0)}/s, ${drained.claimedEarly} claimed early`;
    line('machine load (1 min)', `${loadavg()[0]!.toFixed(2)} on ${availableParallelism()} cores`);
    line('deliveries to one receiver', String(EVENTS));
    line('anchor: undisturbed drain, before', drainLine(before));
    line('anchor: undisturbed drain, after', drainLine(afterwards));
    line(
      `with a ${SPELL_MS / 1000} s spell (${BUSY_MS} of ${PERIOD_MS} ms busy)`,
      drainLine(withSpell) + ' (rate after the spell)',
    );
    line('ratio after the spell / anchor', `${ratio.toFixed(2)} (target >= ${TARGET})   ${verdict(ratio >= TARGET)}`);
    line('lost', `${lost} (must be 0)   ${verdict(lost === 0)}`);
    process.exitCode = lost === 0 ? 0 : 1;
  } finally {
    await receiver?.close();
    await bench.close();
  }
}

await main();

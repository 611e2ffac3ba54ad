// An idle delivery worker sleeps (a backstop of an hour here), yet a new webhook
// is attempted: the outbox insert notifies (migration 0014) and the notification
// wakes the worker. A delivery whose notification was missed is still found by
// the backstop pass, and the wake-up survives the listening connection being
// killed. Whether a wake-up happened is told by the backstop it beat, never by
// how fast it was: a loaded machine only makes these slower, not failing.
import { sql } from 'kysely';
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/clock.ts';
import type { AppContext } from '../../src/context.ts';
import type { Notifications } from '../../src/db/notifications.ts';
import { inTransaction } from '../../src/db/transaction.ts';
import { attemptDelivery } from '../../src/webhooks/delivery-attempt.ts';
import { createDeliveryWorker, type DeliveryWorker } from '../../src/webhooks/delivery-worker.ts';
import { emit } from '../../src/webhooks/outbox.ts';
import { webhookMetrics } from '../../src/webhooks/webhook-metrics.ts';
import { findClaimedDelivery } from '../../src/webhooks/webhook-repository.ts';
import { createWebhookSender } from '../../src/webhooks/webhook-sender.ts';
import { backends, itOnServer } from '../support/databases.ts';
import { createTestApp, type TestApp } from '../support/app.ts';
import { startReceiver, type Receiver } from './receiver.ts';

/** A sleep the tests never wait out: a delivery before it was woken. */
const BACKSTOP_MS = 3_600_000;
/** A safety net only, far below the backstop: past it, the wake-up is declared missing. */
const SAFETY_MS = 45_000;

describe.each(backends)('an idle delivery worker on %s', (backend) => {
  let testApp: TestApp;
  let notifications: Notifications;
  let context: AppContext;
  let receiver: Receiver;
  let shopId: string;
  const arrivals = new Map<string, number>();

  beforeAll(async () => {
    testApp = await createTestApp(backend);
    notifications = await testApp.database.listen();
    context = { ...testApp.context, notifications };
    receiver = await startReceiver((request) => {
      arrivals.set(String(request.headers['webhook-id']), performance.now());
      return { status: 200, body: 'ok' };
    });
    shopId = (await testApp.createMerchant()).shop_id;
  });
  afterAll(async () => {
    await receiver.close();
    await notifications.close();
    await testApp.close();
  });

  /** Emits one event to the receiver; resolves to its commit-to-arrival time, or rejects (loudly) after `withinMs`. */
  async function deliveryLatencyMs(withinMs = SAFETY_MS): Promise<number> {
    const event = await inTransaction(context.db, (tx) =>
      emit(tx, testApp.clock, { shopId, type: 'payment.paid', data: {}, destination: receiver.url }),
    );
    const committed = performance.now();
    while (!arrivals.has(event.id)) {
      if (performance.now() - committed > withinMs)
        throw new Error(`event ${event.id} not delivered within ${withinMs} ms: the worker was not woken`);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    return arrivals.get(event.id)! - committed;
  }

  const idle = (milliseconds: number) => new Promise((resolve) => setTimeout(resolve, milliseconds));

  async function withWorker(
    options: { backstopMs: number },
    work: (worker: DeliveryWorker) => Promise<void>,
    on: AppContext = context,
  ): Promise<void> {
    const worker = createDeliveryWorker(on, options);
    worker.start();
    try {
      await work(worker);
    } finally {
      await worker.stop();
    }
  }

  it('a new webhook is attempted once committed, though the worker sleeps an hour between passes', async () => {
    await withWorker({ backstopMs: BACKSTOP_MS }, async () => {
      for (let round = 0; round < 3; round++) {
        await idle(300);
        expect(await deliveryLatencyMs()).toBeLessThan(BACKSTOP_MS);
      }
    });
  });

  it('a delivery whose notification never came is attempted by the backstop pass', async () => {
    const backstopMs = 2_000;
    await sql`alter table webhook_deliveries disable trigger webhook_deliveries_due_notify`.execute(context.db);
    try {
      await withWorker({ backstopMs }, async () => {
        await idle(300);
        const latencyMs = await deliveryLatencyMs();
        // Not woken: it waited for the pass (a lower bound, which load only makes hold more surely).
        expect(latencyMs).toBeGreaterThan(500);
      });
    } finally {
      await sql`alter table webhook_deliveries enable trigger webhook_deliveries_due_notify`.execute(context.db);
    }
  });

  it('a retry recorded by another process (which then stops) is attempted once it falls due, though the worker sleeps an hour', async () => {
    // Real time: the retry falls due about 5 s after the failed attempt.
    const realTime = { ...context, clock: systemClock };
    const attempts = new Map<string, number>();
    const retried = new Map<string, number>();
    // The first attempt of each event fails; the retry is answered and timed.
    receiver.handler = (request) => {
      const id = String(request.headers['webhook-id']);
      attempts.set(id, (attempts.get(id) ?? 0) + 1);
      if (attempts.get(id) === 1) return { status: 500 };
      retried.set(id, Date.now());
      return { status: 200 };
    };
    try {
      await withWorker(
        { backstopMs: BACKSTOP_MS },
        async () => {
          await idle(300);
          // The other process: it holds the delivery under its lease (so the sleeping worker cannot
          // take the first attempt), makes the attempt, records the retry and goes away.
          const token = randomUUID();
          const emitted = await inTransaction(realTime.db, (tx) =>
            emit(
              tx,
              realTime.clock,
              { shopId, type: 'payment.paid', data: {}, destination: receiver.url },
              { lease: { token, until: new Date(Date.now() + 60_000) } },
            ),
          );
          const sender = createWebhookSender({ config: realTime.config });
          try {
            const delivery = (await findClaimedDelivery(realTime.db, emitted.deliveryId!, token))!;
            const summary = await attemptDelivery({ ...realTime, sender, metrics: webhookMetrics(realTime) }, delivery);
            expect(summary.result.outcome).not.toBe('succeeded');
            const dueAtMs = summary.nextAttemptAt!.getTime();
            while (!retried.has(emitted.id)) {
              if (Date.now() - dueAtMs > SAFETY_MS)
                throw new Error(
                  `the retry was not attempted within ${SAFETY_MS} ms of falling due: the worker was not woken`,
                );
              await idle(10);
            }
            // The failed attempt and one retry, nothing more.
            expect(attempts.get(emitted.id)).toBe(2);
          } finally {
            await sender.close();
          }
        },
        realTime,
      );
    } finally {
      receiver.handler = (request) => {
        arrivals.set(String(request.headers['webhook-id']), performance.now());
        return { status: 200, body: 'ok' };
      };
    }
  });

  itOnServer(backend)(
    'after its listening connection is killed, the worker is woken again once the listener is back',
    async () => {
      await withWorker({ backstopMs: BACKSTOP_MS }, async () => {
        await idle(300);
        await sql`select pg_terminate_backend(pid) from pg_stat_activity where application_name = 'paygate-listener' and datname = current_database()`.execute(
          context.db,
        );
        // While it is down the worker polls every second, so this one is not left to the backstop either.
        expect(await deliveryLatencyMs()).toBeLessThan(BACKSTOP_MS);
        const started = performance.now();
        while (!notifications.listening && performance.now() - started < SAFETY_MS) await idle(10);
        expect(notifications.listening).toBe(true);
        for (let round = 0; round < 2; round++) {
          await idle(300);
          expect(await deliveryLatencyMs()).toBeLessThan(BACKSTOP_MS);
        }
      });
    },
  );
});

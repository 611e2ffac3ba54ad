// An idle delivery worker sleeps (a backstop of an hour here), yet a new webhook
// is attempted: the outbox insert notifies (migration 0014) and the notification
// wakes the worker. A delivery whose notification was missed is still found by
// the backstop pass, and the wake-up survives the listening connection being
// killed. The tests wait for the worker to be asleep (its sleep observer) and for
// the webhook to arrive, never for a time: a sleep of an hour that ends at all
// was woken, and one that ran out was not.
import { sql, type KyselyPlugin, type QueryId } from 'kysely';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppContext } from '../../src/context.ts';
import type { Notifications } from '../../src/db/notifications.ts';
import { inTransaction } from '../../src/db/transaction.ts';
import { attemptDelivery } from '../../src/webhooks/delivery-attempt.ts';
import { createDeliveryWorker, type DeliveryWorkerOptions } from '../../src/webhooks/delivery-worker.ts';
import { emit } from '../../src/webhooks/outbox.ts';
import { webhookMetrics } from '../../src/webhooks/webhook-metrics.ts';
import { findClaimedDelivery } from '../../src/webhooks/webhook-repository.ts';
import { createWebhookSender } from '../../src/webhooks/webhook-sender.ts';
import { backends, itOnServer } from '../support/databases.ts';
import { eventually } from '../support/eventually.ts';
import { createTestApp, type TestApp } from '../support/app.ts';
import { watchSleeps, type SleepWatch } from '../support/worker-sleeps.ts';
import { startReceiver, type Handler, type Receiver } from './receiver.ts';

/** A sleep the tests never wait out: only a wake-up ends it. */
const HOUR_MS = 3_600_000;
/** Also the lease, so that an attempt in flight does not make the worker's next sleep shorter. */
const SLEEPS_AN_HOUR: DeliveryWorkerOptions = { backstopMs: HOUR_MS, leaseMs: HOUR_MS };
const sleepsAnHour = (pauseMs: number) => pauseMs === HOUR_MS;

/**
 * A database that answers the delivery worker's due-time read (nextDeliveryDueAt, the one
 * `webhook_deliveries_next_due_at` call it runs) only once `released` settles: what a slow read is to the worker.
 */
function answeringDueTimeReadsWhen(released: Promise<void>): KyselyPlugin {
  const dueTimeReads = new Set<QueryId>();
  return {
    transformQuery({ node, queryId }) {
      if (
        node.kind === 'RawNode' &&
        node.sqlFragments.some((fragment) => fragment.includes('webhook_deliveries_next_due_at('))
      ) {
        dueTimeReads.add(queryId);
      }
      return node;
    },
    async transformResult({ result, queryId }) {
      if (dueTimeReads.delete(queryId)) await released;
      return result;
    },
  };
}

describe.each(backends)('an idle delivery worker on %s', (backend) => {
  let testApp: TestApp;
  let notifications: Notifications;
  let context: AppContext;
  let receiver: Receiver;
  let shopId: string;
  const arrived = new Set<string>();
  const arrivalWaiters = new Map<string, () => void>();

  function recordArrival(eventId: string): void {
    arrived.add(eventId);
    arrivalWaiters.get(eventId)?.();
  }
  const answerOk: Handler = (request) => {
    recordArrival(String(request.headers['webhook-id']));
    return { status: 200, body: 'ok' };
  };

  /** Resolves once the receiver has been sent the event. */
  function arrival(eventId: string): Promise<void> {
    if (arrived.has(eventId)) return Promise.resolve();
    return new Promise((resolve) => arrivalWaiters.set(eventId, resolve));
  }

  beforeAll(async () => {
    testApp = await createTestApp(backend);
    notifications = await testApp.database.listen();
    context = { ...testApp.context, notifications };
    receiver = await startReceiver(answerOk);
    shopId = (await testApp.createMerchant()).shop_id;
  });
  afterAll(async () => {
    await receiver.close();
    await notifications.close();
    await testApp.close();
  });

  /** Emits one event to the receiver and resolves once it has arrived. */
  async function emitAndAwaitArrival(): Promise<void> {
    const event = await inTransaction(context.db, (tx) =>
      emit(tx, testApp.clock, { shopId, type: 'payment.paid', data: {}, destination: receiver.url }),
    );
    await arrival(event.id);
  }

  async function withWorker(
    options: DeliveryWorkerOptions,
    work: (sleeps: SleepWatch) => Promise<void>,
  ): Promise<void> {
    const sleeps = watchSleeps();
    const worker = createDeliveryWorker(context, { ...options, sleepObserver: sleeps.observer });
    worker.start();
    try {
      await work(sleeps);
    } finally {
      await worker.stop();
    }
  }

  it('a new webhook is attempted once committed, though the worker sleeps an hour between passes', async () => {
    await withWorker(SLEEPS_AN_HOUR, async (sleeps) => {
      for (let round = 0; round < 3; round++) {
        await sleeps.asleep(sleepsAnHour);
        const woken = sleeps.woken;
        await emitAndAwaitArrival();
        expect(sleeps.woken).toBeGreaterThan(woken);
      }
    });
  });

  it('a delivery whose notification never came is attempted by the backstop pass', async () => {
    // Short, as the test waits for this pass.
    const backstopMs = 1_000;
    await sql`alter table webhook_deliveries disable trigger webhook_deliveries_due_notify`.execute(context.db);
    try {
      await withWorker({ backstopMs }, async (sleeps) => {
        await sleeps.asleep((pauseMs) => pauseMs === backstopMs);
        const woken = sleeps.woken;
        await emitAndAwaitArrival();
        // Nothing cut a sleep short: the pass that found it came when the backstop ran out.
        expect(sleeps.woken).toBe(woken);
      });
    } finally {
      await sql`alter table webhook_deliveries enable trigger webhook_deliveries_due_notify`.execute(context.db);
    }
  });

  it('a retry recorded by another process (which then stops) is attempted once it falls due, though the worker sleeps an hour', async () => {
    const attempts = new Map<string, number>();
    // The first attempt of each event fails; the retry is answered.
    receiver.handler = (request, index) => {
      const id = String(request.headers['webhook-id']);
      attempts.set(id, (attempts.get(id) ?? 0) + 1);
      return attempts.get(id) === 1 ? { status: 500 } : answerOk(request, index);
    };
    try {
      await withWorker(SLEEPS_AN_HOUR, async (sleeps) => {
        await sleeps.asleep(sleepsAnHour);
        // The other process: it holds the delivery under its lease (so the sleeping worker cannot
        // take the first attempt), makes the attempt, records the retry and goes away.
        const token = randomUUID();
        const emitted = await inTransaction(context.db, (tx) =>
          emit(
            tx,
            testApp.clock,
            { shopId, type: 'payment.paid', data: {}, destination: receiver.url },
            { lease: { token, until: new Date(testApp.clock.now().getTime() + 60_000) } },
          ),
        );
        const sender = createWebhookSender({ config: context.config });
        try {
          const asleepSince = sleeps.sleeps;
          const delivery = (await findClaimedDelivery(context.db, emitted.deliveryId!, token))!;
          const summary = await attemptDelivery({ ...context, sender, metrics: webhookMetrics(context) }, delivery);
          expect(summary.result.outcome).not.toBe('succeeded');
          const retryInMs = summary.nextAttemptAt!.getTime() - testApp.clock.now().getTime();
          // The recorded retry wakes the worker, which claims nothing yet and sleeps until it falls due.
          await sleeps.sleepsEnded(asleepSince);
          expect(await sleeps.asleep()).toBe(retryInMs);
          testApp.clock.advance(retryInMs);
          await arrival(emitted.id);
          // The failed attempt and one retry, nothing more.
          expect(attempts.get(emitted.id)).toBe(2);
        } finally {
          await sender.close();
        }
      });
    } finally {
      receiver.handler = answerOk;
    }
  });

  it('a backlog put off at the receiver’s pace is claimed early, not slept on, when the held deliveries are all answered while the worker reads when to wake', async () => {
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let worker: ReturnType<typeof createDeliveryWorker> | undefined;
    // No notification comes for these deliveries or for their postponements, as none comes for
    // a postponement a minute or more ahead (a backlog booked at a slow spell's pace): only the
    // worker's own bookkeeping can bring them back before their time.
    await sql`alter table webhook_deliveries disable trigger webhook_deliveries_due_notify`.execute(context.db);
    try {
      // One attempt at a time to the receiver: the worker holds 8 of its deliveries and puts 12 off.
      const events = await inTransaction(context.db, async (tx) => {
        const emitted = [];
        for (let index = 0; index < 20; index++)
          emitted.push(
            await emit(tx, testApp.clock, { shopId, type: 'payment.paid', data: {}, destination: receiver.url }),
          );
        return emitted;
      });
      const ids = events.map((event) => event.id);
      const arrivedOfThese = () => ids.filter((id) => arrived.has(id)).length;
      // A sleep begun with nothing in flight while some of the backlog has not arrived is a stall:
      // it fails the test at once instead of holding it to its timeout.
      let stalled!: (reason: Error) => void;
      const stall = new Promise<never>((_, reject) => (stalled = reject));
      const running = createDeliveryWorker(
        { ...context, db: context.db.withPlugin(answeringDueTimeReadsWhen(released)) },
        {
          ...SLEEPS_AN_HOUR,
          concurrency: 4,
          originConcurrency: 1,
          sleepObserver: {
            asleep(pauseMs) {
              if (running.inFlight === 0 && arrivedOfThese() < ids.length)
                stalled(new Error(`asleep for ${pauseMs} ms, idle, with ${arrivedOfThese()} of ${ids.length} arrived`));
            },
            awake: () => undefined,
          },
        },
      );
      worker = running;
      running.start();
      // The worker reads when to wake once nothing more is due; the answer comes after the 8 it
      // held have all been answered and the 12 it put off are written.
      const postponed = () =>
        context.db
          .selectFrom('webhook_deliveries')
          .select((eb) => eb.fn.countAll<number>().as('count'))
          .where('event_id', 'in', ids)
          .where('status', '=', 'pending')
          .where('locked_until', 'is', null)
          .where('next_attempt_at', '>', testApp.clock.now())
          .executeTakeFirstOrThrow();
      await Promise.race([
        stall,
        eventually(
          async () => ({
            arrived: arrivedOfThese(),
            inFlight: running.inFlight,
            postponed: Number((await postponed()).count),
          }),
          (state) => state.arrived === 8 && state.inFlight === 0 && state.postponed === 12,
        ),
      ]);
      release();
      // The clock stands still, so nothing put off falls due: only an early claim delivers the rest.
      await Promise.race([stall, Promise.all(ids.map(arrival))]);
      expect(await context.metrics.metrics()).toMatch(/paygate_webhook_deliveries_claimed_early_total [1-9]/);
    } finally {
      release();
      await worker?.stop();
      await sql`alter table webhook_deliveries enable trigger webhook_deliveries_due_notify`.execute(context.db);
    }
  });

  itOnServer(backend)(
    'after its listening connection is killed, the worker is woken again once the listener is back',
    async () => {
      await withWorker(SLEEPS_AN_HOUR, async (sleeps) => {
        await sleeps.asleep(sleepsAnHour);
        const listeningAgain = new Promise<void>((resolve) => {
          const unsubscribe = notifications.onListeningChange((listening) => {
            if (!listening) return;
            unsubscribe();
            resolve();
          });
        });
        await sql`select pg_terminate_backend(pid) from pg_stat_activity where application_name = 'paygate-listener' and datname = current_database()`.execute(
          context.db,
        );
        // While it is down the worker polls, so this one is not left to the backstop either.
        await emitAndAwaitArrival();
        await listeningAgain;
        for (let round = 0; round < 2; round++) {
          await sleeps.asleep(sleepsAnHour);
          const woken = sleeps.woken;
          await emitAndAwaitArrival();
          expect(sleeps.woken).toBeGreaterThan(woken);
        }
      });
    },
  );
});

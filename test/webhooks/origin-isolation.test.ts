// One merchant's receiver that never answers must not delay another
// merchant's webhooks. The worker runs as in production (concurrency
// 32, 10 s attempt limit, 500 ms idle poll) against two real receivers.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inTransaction } from '../../src/db/transaction.ts';
import { createDeliveryWorker, type DeliveryWorker } from '../../src/webhooks/delivery-worker.ts';
import { emit } from '../../src/webhooks/outbox.ts';
import { backends } from '../support/databases.ts';
import { createTestApp, type TestApp } from '../support/app.ts';
import { eventually } from '../support/eventually.ts';
import { startReceiver, type Receiver } from './receiver.ts';

/** Events queued for the dead receiver, as in the report (96). */
const DEAD_EVENTS = 96;
/*
 * What must hold for a healthy merchant's webhook while the other receiver
 * hangs: it never waits out one of the dead receiver's attempts (the 10 s
 * limit). Shown by order, not by time: every healthy webhook arrives while the
 * dead receiver's attempts are all still hanging (before per-origin caps, the
 * first one came only after three waves of 32 dead attempts had timed out).
 */

describe.each(backends)('a dead receiver does not delay other merchants on %s', (backend) => {
  let testApp: TestApp;
  let dead: Receiver;
  let healthy: Receiver;
  let worker: DeliveryWorker;
  /** Each healthy webhook's id → how many of the dead receiver's requests were still hanging when it arrived. */
  const arrivals = new Map<string, number>();

  beforeAll(async () => {
    testApp = await createTestApp(backend);
    // Accepts the connection, reads the request, never answers.
    dead = await startReceiver(() => ({ hang: true }));
    healthy = await startReceiver((request) => {
      arrivals.set(String(request.headers['webhook-id']), dead.open);
      return { status: 200, body: 'ok' };
    });
    worker = createDeliveryWorker(testApp.context);
    worker.start();
  });
  afterAll(async () => {
    // Closing the dead receiver first ends the probe still hanging on it, so the worker stops at once.
    await dead.close();
    await worker.stop();
    await healthy.close();
    await testApp.close();
  });

  const emitTo = (shopId: string, url: string) =>
    inTransaction(testApp.context.db, (tx) =>
      emit(tx, testApp.clock, { shopId, type: 'payment.paid', data: { shop: shopId }, destination: url }),
    );

  /** Emits events one after another to the healthy receiver; resolves to the dead receiver's hanging requests at each arrival. */
  async function deliverToHealthy(shopId: string, count: number): Promise<number[]> {
    const hangingAtArrival: number[] = [];
    for (let index = 0; index < count; index++) {
      const event = await emitTo(shopId, healthy.url);
      hangingAtArrival.push(
        await eventually(
          () => arrivals.get(event.id),
          (hanging) => hanging !== undefined,
        ),
      );
    }
    return hangingAtArrival;
  }

  it("the healthy receiver gets every webhook while the dead receiver's attempts still hang (at most its origin cap), then the dead one is postponed", async () => {
    const merchantA = await testApp.createMerchant();
    const merchantB = await testApp.createMerchant();
    const originCap = testApp.context.config.webhookOriginConcurrency;
    expect(await deliverToHealthy(merchantA.shop_id, 5)).toEqual([0, 0, 0, 0, 0]);

    const deadEventIds: string[] = [];
    for (let index = 0; index < DEAD_EVENTS; index++) deadEventIds.push((await emitTo(merchantB.shop_id, dead.url)).id);
    await eventually(
      () => dead.open,
      (hanging) => hanging === originCap,
    );
    // Every one arrives while all the dead receiver's attempts still hang: none waited for one to time out.
    expect(await deliverToHealthy(merchantA.shop_id, 10)).toEqual(Array(10).fill(originCap));
    // No more than the cap ever reached the dead receiver at once, though 96 were due and slots were free.
    expect(dead.requests).toHaveLength(originCap);

    // Once its attempts time out, the dead receiver is impaired: its other deliveries are postponed
    // without an attempt counted, and none of them holds a lease or a slot.
    const deadDeliveries = () =>
      testApp.context.db.selectFrom('webhook_deliveries').selectAll().where('event_id', 'in', deadEventIds).execute();
    await eventually(
      async () => (await deadDeliveries()).filter((delivery) => delivery.attempt_count === 1).length,
      (attempted) => attempted === originCap,
      50,
    );
    await eventually(
      async () => (await deadDeliveries()).filter((delivery) => delivery.lease_token === null).length,
      (released) => released === DEAD_EVENTS,
    );
    const now = testApp.clock.now().getTime();
    const postponed = (await deadDeliveries()).filter((delivery) => delivery.attempt_count === 0);
    expect(postponed).toHaveLength(DEAD_EVENTS - originCap);
    expect(
      postponed.every((delivery) => delivery.status === 'pending' && delivery.next_attempt_at!.getTime() > now),
    ).toBe(true);
    await eventually(
      () => worker.inFlight,
      (inFlight) => inFlight === 0,
    );
    const metrics = await testApp.context.metrics.metrics();
    expect(metrics).toMatch(/paygate_webhook_deliveries_postponed_total\{reason="impaired"\} [1-9]/);

    // When they fall due again, the impaired receiver gets one probe at a time; the healthy one is still unaffected.
    testApp.clock.advance(10 * 60_000);
    await eventually(
      () => dead.requests.length,
      (received) => received === originCap + 1,
    );
    // The probe hangs, and the healthy receiver's webhooks still arrive beside it.
    expect(await deliverToHealthy(merchantA.shop_id, 5)).toEqual([1, 1, 1, 1, 1]);
    expect(dead.requests).toHaveLength(originCap + 1);
    await eventually(
      () => worker.inFlight,
      (inFlight) => inFlight === 1,
    );
  });
});

import { Webhook } from 'standardwebhooks';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { OPERATOR } from '../../src/audit/audit-service.ts';
import { inTransaction } from '../../src/db/transaction.ts';
import { createDeliveryWorker, type DeliveryWorker } from '../../src/webhooks/delivery-worker.ts';
import { emit } from '../../src/webhooks/outbox.ts';
import { RETRY_DELAYS_MS } from '../../src/webhooks/retry-schedule.ts';
import { WEBHOOK_USER_AGENT } from '../../src/webhooks/signing.ts';
import { claimDueDeliveries, claimPacedDeliveries, postponeDeliveries } from '../../src/webhooks/webhook-repository.ts';
import { rotateSecret } from '../../src/webhooks/webhook-service.ts';
import { backends } from '../support/databases.ts';
import { eventually } from '../support/eventually.ts';
import { createTestApp, type TestApp } from '../support/app.ts';
import { closedPortUrl, startReceiver, type Receiver } from './receiver.ts';

describe.each(backends)('webhook delivery on %s', (backend) => {
  let testApp: TestApp;
  let receiver: Receiver;
  const workers: DeliveryWorker[] = [];

  beforeAll(async () => {
    // Signatures carry the clock's time, and the standardwebhooks verifier checks it against the real time.
    testApp = await createTestApp(backend);
    testApp.clock.set(new Date());
    receiver = await startReceiver();
  });
  afterEach(async () => {
    await Promise.all(workers.splice(0).map((worker) => worker.stop()));
    receiver.handler = () => ({ status: 200, body: 'ok' });
    receiver.requests.length = 0;
  });
  afterAll(async () => {
    await receiver.close();
    await testApp.close();
  });

  function worker(options: Parameters<typeof createDeliveryWorker>[1] = {}): DeliveryWorker {
    const created = createDeliveryWorker(testApp.context, { concurrency: 4, ...options });
    workers.push(created);
    return created;
  }

  async function emitTo(shopId: string, url: string | null, type = 'payment.paid') {
    return inTransaction(testApp.context.db, (tx) =>
      emit(tx, testApp.clock, { shopId, type, data: { id: 'pay_1', status: 'paid', amount: 100.5 }, destination: url }),
    );
  }

  const deliveryOf = (eventId: string) =>
    testApp.context.db
      .selectFrom('webhook_deliveries')
      .selectAll()
      .where('event_id', '=', eventId)
      .executeTakeFirstOrThrow();
  const attemptsOf = (eventId: string) =>
    testApp.context.db
      .selectFrom('webhook_attempts')
      .selectAll()
      .where('event_id', '=', eventId)
      .orderBy('attempt_number')
      .execute();

  it('an event to a healthy receiver is delivered on the first attempt with the exact payload and Standard Webhooks headers', async () => {
    const merchant = await testApp.createMerchant();
    const event = await emitTo(merchant.shop_id, receiver.url);
    expect(await worker().drain()).toBe(1);

    expect(receiver.requests).toHaveLength(1);
    const [request] = receiver.requests;
    const stored = await testApp.context.db
      .selectFrom('webhook_events')
      .select('payload')
      .where('id', '=', event.id)
      .executeTakeFirstOrThrow();
    expect(request!.body).toBe(stored.payload);
    expect(request!.method).toBe('POST');
    expect(request!.headers).toMatchObject({
      'content-type': 'application/json',
      'user-agent': WEBHOOK_USER_AGENT,
      'webhook-id': event.id,
      'webhook-timestamp': String(Math.floor(testApp.clock.now().getTime() / 1000)),
    });
    expect(JSON.parse(request!.body)).toEqual({
      id: event.id,
      type: 'payment.paid',
      created_at: testApp.clock.now().toISOString(),
      data: { id: 'pay_1', status: 'paid', amount: 100.5 },
    });
    expect(await deliveryOf(event.id)).toMatchObject({
      status: 'delivered',
      attempt_count: 1,
      next_attempt_at: null,
      lease_token: null,
    });
    expect(await attemptsOf(event.id)).toMatchObject([
      { attempt_number: 1, outcome: 'succeeded', status_code: 200, response_body: 'ok' },
    ]);
  });

  it('the signature verifies with the standardwebhooks package and the shop secret, and fails with another secret', async () => {
    const merchant = await testApp.createMerchant();
    await emitTo(merchant.shop_id, receiver.url);
    await worker().drain();
    const [request] = receiver.requests;
    const headers = request!.headers as Record<string, string>;
    expect(new Webhook(merchant.webhook_secret).verify(request!.body, headers)).toMatchObject({ type: 'payment.paid' });
    const other = await testApp.createMerchant();
    expect(() => new Webhook(other.webhook_secret).verify(request!.body, headers)).toThrow();
  });

  it('after a rotation both signatures are sent for 24 h, each verifying with its secret; afterwards only the new one', async () => {
    const merchant = await testApp.createMerchant();
    const rotated = await rotateSecret(testApp.context, merchant.shop_id, {
      actor: OPERATOR,
      merchantId: merchant.merchant_id,
    });
    await emitTo(merchant.shop_id, receiver.url);
    await worker().drain();
    const [request] = receiver.requests;
    const headers = request!.headers as Record<string, string>;
    expect(headers['webhook-signature']!.split(' ')).toHaveLength(2);
    expect(() => new Webhook(rotated.webhook_secret).verify(request!.body, headers)).not.toThrow();
    expect(() => new Webhook(merchant.webhook_secret).verify(request!.body, headers)).not.toThrow();

    const before = testApp.clock.now();
    testApp.clock.advance(24 * 60 * 60 * 1000 + 1000);
    try {
      await emitTo(merchant.shop_id, receiver.url);
      await worker().drain();
      const later = receiver.requests[1]!;
      expect((later.headers['webhook-signature'] as string).split(' ')).toHaveLength(1);
      expect(
        new Webhook(rotated.webhook_secret).sign(
          later.headers['webhook-id'] as string,
          new Date(Number(later.headers['webhook-timestamp']) * 1000),
          later.body,
        ),
      ).toBe(later.headers['webhook-signature']);
    } finally {
      testApp.clock.set(before);
    }
  });

  it('a receiver failing 3 times is delivered on the 4th attempt, each retry at its scheduled time within ±20 % jitter', async () => {
    const merchant = await testApp.createMerchant();
    receiver.handler = (_request, index) => (index < 3 ? { status: 500, body: 'boom' } : { status: 204 });
    const event = await emitTo(merchant.shop_id, receiver.url);
    const delivering = worker();
    const start = testApp.clock.now();
    try {
      await delivering.drain();
      for (let retry = 0; retry < 3; retry++) {
        const delivery = await deliveryOf(event.id);
        const waitMs = delivery.next_attempt_at!.getTime() - testApp.clock.now().getTime();
        const stepMs = RETRY_DELAYS_MS[retry]!;
        expect(waitMs).toBeGreaterThanOrEqual(stepMs * 0.8);
        expect(waitMs).toBeLessThanOrEqual(stepMs * 1.2);
        // Not a moment early: just before the due time nothing is sent.
        testApp.clock.advance(waitMs - 1);
        expect(await delivering.drain()).toBe(0);
        testApp.clock.advance(1);
        expect(await delivering.drain()).toBe(1);
      }
      expect(receiver.requests).toHaveLength(4);
      expect(new Set(receiver.requests.map((request) => request.headers['webhook-id']))).toEqual(new Set([event.id]));
      const attempts = await attemptsOf(event.id);
      expect(attempts.map((attempt) => [attempt.attempt_number, attempt.outcome, attempt.status_code])).toEqual([
        [1, 'http_error', 500],
        [2, 'http_error', 500],
        [3, 'http_error', 500],
        [4, 'succeeded', 204],
      ]);
      expect(attempts[0]!.response_body).toBe('boom');
      expect(attempts.slice(0, 3).every((attempt) => attempt.next_retry_at !== null)).toBe(true);
      expect(await deliveryOf(event.id)).toMatchObject({
        status: 'delivered',
        attempt_count: 4,
        next_attempt_at: null,
      });
    } finally {
      testApp.clock.set(start);
    }
  });

  it('a receiver that never succeeds is attempted on the whole schedule, then the delivery is failed', async () => {
    const merchant = await testApp.createMerchant();
    receiver.handler = () => ({ status: 503 });
    const event = await emitTo(merchant.shop_id, receiver.url);
    const delivering = worker();
    const start = testApp.clock.now();
    try {
      await delivering.drain();
      for (const stepMs of RETRY_DELAYS_MS) {
        testApp.clock.advance(stepMs * 1.2 + 1);
        expect(await delivering.drain()).toBe(1);
      }
      testApp.clock.advance(7 * 24 * 60 * 60 * 1000);
      expect(await delivering.drain()).toBe(0);
      expect(receiver.requests).toHaveLength(RETRY_DELAYS_MS.length + 1);
      expect(await deliveryOf(event.id)).toMatchObject({
        status: 'failed',
        attempt_count: RETRY_DELAYS_MS.length + 1,
        next_attempt_at: null,
      });
      const attempts = await attemptsOf(event.id);
      expect(attempts.at(-1)!.next_retry_at).toBeNull();
      const spanHours = (attempts.at(-1)!.started_at.getTime() - attempts[0]!.started_at.getTime()) / 3_600_000;
      expect(spanHours).toBeGreaterThan(2.5 * 24);
      expect(spanHours).toBeLessThan(4 * 24);
    } finally {
      testApp.clock.set(start);
    }
  });

  it.each([
    ['does not answer at all', { hang: true }],
    ['sends its headers and then stalls (the whole answer must come in time)', { hangAfterHeaders: true }],
  ] as const)('a receiver that %s within the limit makes a timeout attempt, retried later', async (_case, answer) => {
    const merchant = await testApp.createMerchant();
    receiver.handler = () => answer;
    const event = await emitTo(merchant.shop_id, receiver.url);
    await worker({ attemptTimeoutMs: 300 }).drain();
    const [attempt] = await attemptsOf(event.id);
    expect(attempt).toMatchObject({ outcome: 'timeout', status_code: null, error: 'no complete answer within 300 ms' });
    expect(attempt!.duration_ms).toBeGreaterThanOrEqual(250);
    expect(await deliveryOf(event.id)).toMatchObject({ status: 'pending', attempt_count: 1 });
  });

  it('an answer that never ends is read up to 4 KiB and counts by its status, without waiting for the rest', async () => {
    const merchant = await testApp.createMerchant();
    receiver.handler = () => ({ status: 200, endlessBody: true });
    const event = await emitTo(merchant.shop_id, receiver.url);
    await worker({ attemptTimeoutMs: 5_000 }).drain();
    const [attempt] = await attemptsOf(event.id);
    // Succeeded, so it did not wait for the end (that would be a timeout), nor up to the attempt's limit.
    expect(attempt).toMatchObject({ outcome: 'succeeded', status_code: 200, response_body: 'y'.repeat(4096) });
    expect(attempt!.duration_ms).toBeLessThan(5_000);
    expect(await deliveryOf(event.id)).toMatchObject({ status: 'delivered' });
  });

  it('a refused connection is a connection_error attempt, retried later', async () => {
    const merchant = await testApp.createMerchant();
    const event = await emitTo(merchant.shop_id, await closedPortUrl());
    await worker().drain();
    const [attempt] = await attemptsOf(event.id);
    expect(attempt).toMatchObject({ outcome: 'connection_error', status_code: null });
    expect(attempt!.error).toContain('ECONNREFUSED');
    expect(await deliveryOf(event.id)).toMatchObject({ status: 'pending', attempt_count: 1 });
  });

  it('an unresolvable host is a connection_error naming the DNS failure', async () => {
    const merchant = await testApp.createMerchant();
    const event = await emitTo(merchant.shop_id, 'http://paygate-receiver.invalid/hooks');
    await worker().drain();
    const [attempt] = await attemptsOf(event.id);
    expect(attempt).toMatchObject({ outcome: 'connection_error', status_code: null });
    expect(attempt!.error).toMatch(/DNS lookup failed/);
  });

  it('429 with Retry-After postpones the next attempt to what the receiver asked', async () => {
    const merchant = await testApp.createMerchant();
    receiver.handler = (_request, index) =>
      index === 0 ? { status: 429, headers: { 'retry-after': '120' } } : { status: 200 };
    const event = await emitTo(merchant.shop_id, receiver.url);
    const delivering = worker();
    const start = testApp.clock.now();
    try {
      await delivering.drain();
      const delivery = await deliveryOf(event.id);
      expect(delivery.next_attempt_at!.getTime() - start.getTime()).toBe(120_000);
      testApp.clock.advance(119_000);
      await delivering.drain();
      expect(await deliveryOf(event.id)).toMatchObject({ status: 'pending', attempt_count: 1 });
      testApp.clock.advance(1_000);
      await delivering.drain();
      expect(await deliveryOf(event.id)).toMatchObject({ status: 'delivered', attempt_count: 2 });
    } finally {
      testApp.clock.set(start);
    }
  });

  it('503 with a Retry-After beyond the schedule is capped at its longest step (24 h)', async () => {
    const merchant = await testApp.createMerchant();
    receiver.handler = () => ({ status: 503, headers: { 'retry-after': String(7 * 24 * 3600) } });
    const event = await emitTo(merchant.shop_id, receiver.url);
    await worker().drain();
    const delivery = await deliveryOf(event.id);
    expect(delivery.next_attempt_at!.getTime() - testApp.clock.now().getTime()).toBe(24 * 3600 * 1000);
  });

  it('a redirect is not followed: the 3xx is the answer and a failed attempt', async () => {
    const merchant = await testApp.createMerchant();
    receiver.handler = (request) =>
      request.path === '/hooks' ? { status: 307, headers: { location: '/elsewhere' } } : { status: 200 };
    const event = await emitTo(merchant.shop_id, receiver.url);
    await worker().drain();
    expect(receiver.requests.map((request) => request.path)).toEqual(['/hooks']);
    expect(await attemptsOf(event.id)).toMatchObject([{ outcome: 'http_error', status_code: 307 }]);
  });

  it('a long answer is stored truncated to 4 KiB', async () => {
    const merchant = await testApp.createMerchant();
    receiver.handler = () => ({ status: 500, body: 'x'.repeat(100_000) });
    const event = await emitTo(merchant.shop_id, receiver.url);
    await worker().drain();
    const [attempt] = await attemptsOf(event.id);
    expect(attempt!.response_body).toBe('x'.repeat(4096));
  });

  it('an event emitted in a transaction that rolls back leaves no event and no delivery', async () => {
    const merchant = await testApp.createMerchant();
    let emittedId = '';
    await expect(
      inTransaction(testApp.context.db, async (tx) => {
        emittedId = (
          await emit(tx, testApp.clock, {
            shopId: merchant.shop_id,
            type: 'payment.paid',
            data: {},
            destination: receiver.url,
          })
        ).id;
        throw new Error('the state change failed');
      }),
    ).rejects.toThrow('the state change failed');
    expect(emittedId).toMatch(/^evt_/);
    expect(
      await testApp.context.db.selectFrom('webhook_events').select('id').where('id', '=', emittedId).execute(),
    ).toEqual([]);
    expect(
      await testApp.context.db
        .selectFrom('webhook_deliveries')
        .select('id')
        .where('event_id', '=', emittedId)
        .execute(),
    ).toEqual([]);
    expect(await worker().drain()).toBe(0);
    expect(receiver.requests).toHaveLength(0);
  });

  it("an event for the shop's endpoint goes to the URL configured when it was emitted; with none it is stored undelivered", async () => {
    const merchant = await testApp.createMerchant();
    const unsent = await emitTo(merchant.shop_id, 'shop' as const);
    expect(unsent.destinationUrl).toBeNull();
    await testApp.context.db
      .updateTable('webhook_endpoints')
      .set({ webhook_url: receiver.url })
      .where('shop_id', '=', merchant.shop_id)
      .execute();
    const sent = await emitTo(merchant.shop_id, 'shop' as const);
    expect(sent.destinationUrl).toBe(receiver.url);
    await worker().drain();
    expect(receiver.requests.map((request) => request.headers['webhook-id'])).toEqual([sent.id]);
  });

  it('the metrics count attempts by outcome and gauge the due deliveries', async () => {
    const merchant = await testApp.createMerchant();
    const delivering = worker();
    receiver.handler = () => ({ status: 500 });
    await emitTo(merchant.shop_id, receiver.url);
    await delivering.drain();
    const stillDue = await emitTo(merchant.shop_id, receiver.url);
    const text = await testApp.context.metrics.metrics();
    expect(text).toMatch(/paygate_webhook_attempts_total\{outcome="http_error"\} [1-9]/);
    expect(text).toMatch(/paygate_webhook_deliveries_due [1-9]/);
    const response = await testApp.app.inject({ method: 'GET', url: '/metrics' });
    expect(response.body).toContain('paygate_webhook_deliveries_due');
    receiver.handler = () => ({ status: 200 });
    await delivering.drain();
    expect((await deliveryOf(stillDue.id)).status).toBe('delivered');
  });

  it('a stopping worker finishes its attempt in flight and gives back the deliveries it claimed but never started', async () => {
    const merchant = await testApp.createMerchant();
    receiver.handler = () => ({ hang: true });
    const events = [
      await emitTo(merchant.shop_id, receiver.url),
      await emitTo(merchant.shop_id, receiver.url),
      await emitTo(merchant.shop_id, receiver.url),
    ];
    const stopping = worker({ concurrency: 1, attemptTimeoutMs: 300 });
    expect(await stopping.runOnce()).toBe(3);
    expect(stopping.inFlight).toBe(1);
    await stopping.stop();
    const deliveries = await Promise.all(events.map((event) => deliveryOf(event.id)));
    expect(deliveries.map((delivery) => delivery.attempt_count).sort()).toEqual([0, 0, 1]);
    expect(deliveries.every((delivery) => delivery.lease_token === null && delivery.locked_until === null)).toBe(true);
    // Given back, they are due at once for the next worker.
    receiver.handler = () => ({ status: 200 });
    await worker().drain();
    const after = await Promise.all(events.map((event) => deliveryOf(event.id)));
    expect(after.filter((delivery) => delivery.status === 'delivered')).toHaveLength(2);
  });

  it('a claimed delivery whose lease would run out during its attempt is not started; after the lease it is delivered once', async () => {
    const merchant = await testApp.createMerchant();
    receiver.handler = () => ({ hang: true });
    const first = await emitTo(merchant.shop_id, receiver.url);
    // Another origin (the same receiver by name): a timeout postpones the queued deliveries of its own origin only.
    const second = await emitTo(merchant.shop_id, receiver.url.replace('127.0.0.1', 'localhost'));
    const slow = worker({ concurrency: 1, attemptTimeoutMs: 300 });
    expect(await slow.runOnce()).toBe(2);
    // While the first attempt hangs, the second waits in the queue and its 60 s lease wears down.
    testApp.clock.advance(56_000);
    await slow.drain();
    // (Earlier tests' retries fall due as the clock moves; only this test's events are looked at.)
    const sentOf = (id: string) => receiver.requests.filter((request) => request.headers['webhook-id'] === id);
    expect(sentOf(first.id)).toHaveLength(1);
    expect(sentOf(second.id)).toHaveLength(0);
    expect(await deliveryOf(second.id)).toMatchObject({ status: 'pending', attempt_count: 0 });
    expect((await deliveryOf(second.id)).lease_token).not.toBeNull();

    receiver.handler = () => ({ status: 200 });
    testApp.clock.advance(5_000);
    await worker().drain();
    expect(await deliveryOf(second.id)).toMatchObject({ status: 'delivered', attempt_count: 1 });
    expect(sentOf(second.id)).toHaveLength(1);
  });

  it('a worker holds only as many deliveries as it can start within their leases at the pace attempts take', async () => {
    const merchant = await testApp.createMerchant();
    // Leases leave (5,400 - 300 - 5,000) / 2 = 50 ms of safe queueing; a slow receiver takes at least 100 ms.
    const paced = worker({ concurrency: 2, leaseMs: 5_400, attemptTimeoutMs: 300 });
    receiver.handler = () => ({ status: 200, delayMs: 100 });
    for (let index = 0; index < 6; index++) await emitTo(merchant.shop_id, receiver.url);
    // Before any attempt the pace is the worst case (the 300 ms limit): only what can start now is claimed.
    expect(await paced.runOnce()).toBe(2);
    await paced.drain();
    // Attempts of 100 ms or more (a loaded machine only makes them slower) keep it so: nothing can wait.
    for (let index = 0; index < 6; index++) await emitTo(merchant.shop_id, receiver.url);
    expect(await paced.runOnce()).toBe(2);
    await paced.drain();

    // Leases leave (55,000 - 30,000 - 5,000) / 2 = 10 s of safe queueing: at the worst-case pace (the 30 s
    // limit) nothing waits either; attempts far faster than that (any local answer, however loaded the
    // machine) let the worker hold more than it can start at once.
    const patient = worker({ concurrency: 2, leaseMs: 55_000, attemptTimeoutMs: 30_000 });
    receiver.handler = () => ({ status: 200 });
    for (let index = 0; index < 6; index++) await emitTo(merchant.shop_id, receiver.url);
    expect(await patient.runOnce()).toBe(2);
    await patient.drain();
    for (let index = 0; index < 60; index++) await emitTo(merchant.shop_id, receiver.url);
    await patient.drain();
    for (let index = 0; index < 20; index++) await emitTo(merchant.shop_id, receiver.url);
    expect(await patient.runOnce()).toBeGreaterThan(2);
    await patient.drain();
  });

  it("a receiver's backlog beyond what the worker holds for it is postponed without an attempt, so another receiver's delivery is not stuck behind it", async () => {
    const merchant = await testApp.createMerchant();
    const arrivals: string[] = [];
    const busy = await startReceiver(() => (arrivals.push('busy'), { status: 200, delayMs: 50 }));
    const other = await startReceiver(() => (arrivals.push('other'), { status: 200 }));
    const start = testApp.clock.now();
    try {
      const backlog = [];
      for (let index = 0; index < 30; index++) backlog.push(await emitTo(merchant.shop_id, busy.url));
      // Due just after the whole backlog, so that every claim reaches it last.
      testApp.clock.advance(1);
      const behind = await emitTo(merchant.shop_id, other.url);
      // One attempt at a time per receiver: the worker holds 8 of one receiver's deliveries (one in flight, seven queued).
      const paced = worker({ concurrency: 4, originConcurrency: 1 });
      await paced.drain();
      expect(await deliveryOf(behind.id)).toMatchObject({ status: 'delivered' });
      // It went out while the busy receiver was still working through the 8 it held.
      expect(arrivals.indexOf('other')).toBeLessThanOrEqual(8);
      expect(await testApp.context.metrics.metrics()).toMatch(
        /paygate_webhook_deliveries_postponed_total\{reason="backlog"\} [1-9]/,
      );
      // The clock has not moved, so none of what was put off fell due: the receiver kept taking
      // deliveries at its real pace, and the worker claimed each postponed one as it had room.
      expect(busy.requests.map((request) => request.headers['webhook-id']).sort()).toEqual(
        backlog.map((event) => event.id).sort(),
      );
      for (const event of backlog) {
        expect(await deliveryOf(event.id)).toMatchObject({ status: 'delivered', attempt_count: 1 });
        expect(await attemptsOf(event.id)).toHaveLength(1);
      }
      expect(await testApp.context.metrics.metrics()).toMatch(/paygate_webhook_deliveries_claimed_early_total [1-9]/);
    } finally {
      testApp.clock.set(start);
      await busy.close();
      await other.close();
    }
  });

  it('a running worker delivers a backlog put off at its receiver’s pace while the clock stands still: each postponement is claimed early as the receiver has room, none waits for the backstop', async () => {
    const merchant = await testApp.createMerchant();
    const receiver = await startReceiver(() => ({ status: 200 }));
    const events = [];
    for (let index = 0; index < 200; index++) events.push(await emitTo(merchant.shop_id, receiver.url));
    // Holds 8 of the receiver's deliveries, puts the rest off; nothing would fall due for an hour
    // but what the worker claims early (the manual clock never reaches a booked time).
    const running = worker({ concurrency: 4, originConcurrency: 1, backstopMs: 3_600_000, idlePollMs: 3_600_000 });
    running.start();
    try {
      await eventually(
        () => receiver.requests.length,
        (count) => count >= events.length,
      );
      expect(new Set(receiver.requests.map((request) => request.headers['webhook-id'])).size).toBe(events.length);
      expect(await testApp.context.metrics.metrics()).toMatch(/paygate_webhook_deliveries_claimed_early_total [1-9]/);
    } finally {
      await running.stop();
      await receiver.close();
    }
  });

  it('a paced postponement is claimed early only as it was left: pending, under no lease, due at the booked time', async () => {
    const merchant = await testApp.createMerchant();
    const receiver = await startReceiver(() => ({ status: 200 }));
    const start = testApp.clock.now();
    try {
      const event = await emitTo(merchant.shop_id, receiver.url);
      const { id } = await deliveryOf(event.id);
      const db = testApp.context.db;
      const now = testApp.clock.now();
      const lease = (token: string) => ({ now, lockedUntil: new Date(now.getTime() + 60_000), leaseToken: token });
      const [claimed] = await claimDueDeliveries(db, { ...lease('first'), limit: 1 });
      expect(claimed!.deliveryId).toBe(id);
      const bookedMs = now.getTime() + 5_000;
      await postponeDeliveries(db, [{ id, leaseToken: 'first', until: new Date(bookedMs) }], now);

      // Booked for another time (another worker postponed it since): left alone.
      expect(await claimPacedDeliveries(db, { ...lease('x'), postponements: [{ id, untilMs: bookedMs + 1 }] })).toEqual(
        [],
      );
      // Under another worker's lease: left alone.
      await db
        .updateTable('webhook_deliveries')
        .set({ lease_token: 'other', locked_until: new Date(bookedMs) })
        .where('id', '=', id)
        .execute();
      expect(await claimPacedDeliveries(db, { ...lease('x'), postponements: [{ id, untilMs: bookedMs }] })).toEqual([]);
      await db
        .updateTable('webhook_deliveries')
        .set({ lease_token: null, locked_until: null })
        .where('id', '=', id)
        .execute();

      // As the postponement left it: claimed now under the new lease, with what an attempt needs.
      const [early] = await claimPacedDeliveries(db, { ...lease('early'), postponements: [{ id, untilMs: bookedMs }] });
      expect(early).toMatchObject({ deliveryId: id, eventId: event.id, leaseToken: 'early', attemptCount: 0 });
      expect(await deliveryOf(event.id)).toMatchObject({ status: 'pending', lease_token: 'early', attempt_count: 0 });
      // Claimed once: a second early claim of the same booking finds it under a lease.
      expect(await claimPacedDeliveries(db, { ...lease('again'), postponements: [{ id, untilMs: bookedMs }] })).toEqual(
        [],
      );
      await db
        .updateTable('webhook_deliveries')
        .set({ lease_token: null, locked_until: null })
        .where('id', '=', id)
        .execute();
      // Given back, it falls due at its booked time as ever.
      testApp.clock.set(new Date(bookedMs));
      await worker().drain();
      expect(await deliveryOf(event.id)).toMatchObject({ status: 'delivered', attempt_count: 1 });
    } finally {
      testApp.clock.set(start);
      await receiver.close();
    }
  });

  it('a receiver whose attempts time out gets one attempt at a time, the rest postponed without an attempt counted, until it answers again', async () => {
    const merchant = await testApp.createMerchant();
    const flaky = await startReceiver(() => ({ hang: true }));
    const start = testApp.clock.now();
    try {
      const events = [];
      for (let index = 0; index < 6; index++) events.push(await emitTo(merchant.shop_id, flaky.url));
      // A 2 s limit: an answer is slow (a stall) from 1 s, which a loaded machine stays well under.
      const impaired = worker({ concurrency: 4, originConcurrency: 2, attemptTimeoutMs: 2_000 });
      await impaired.drain();
      // Two attempts (the cap) timed out; the four others were put off 30 to 45 s, with no attempt counted.
      expect(flaky.requests).toHaveLength(2);
      const untouched = (await Promise.all(events.map((event) => deliveryOf(event.id)))).filter(
        (row) => row.attempt_count === 0,
      );
      expect(untouched).toHaveLength(4);
      for (const row of untouched) {
        expect(row.lease_token).toBeNull();
        const delayMs = row.next_attempt_at!.getTime() - start.getTime();
        expect(delayMs).toBeGreaterThanOrEqual(30_000);
        expect(delayMs).toBeLessThanOrEqual(45_000);
      }
      // All six due again (retries too): one probe only, which hangs as well.
      testApp.clock.advance(46_000);
      await impaired.drain();
      expect(flaky.requests).toHaveLength(3);
      // The two attempts that timed out together were one stall: the other five are put off 30 to 45 s again, not twice that.
      const probedAt = testApp.clock.now().getTime();
      const putOff = (await Promise.all(events.map((event) => deliveryOf(event.id)))).filter((row) => {
        const delayMs = row.next_attempt_at!.getTime() - probedAt;
        return row.lease_token === null && delayMs >= 30_000 && delayMs <= 45_000;
      });
      expect(putOff).toHaveLength(5);
      // The receiver answers again: the next probe succeeds, and then its deliveries go at its full cap.
      flaky.handler = () => ({ status: 200 });
      testApp.clock.advance(10 * 60_000);
      await impaired.drain();
      expect(flaky.requests).toHaveLength(4);
      testApp.clock.advance(10 * 60_000);
      await impaired.drain();
      const rows = await Promise.all(events.map((event) => deliveryOf(event.id)));
      expect(rows.every((row) => row.status === 'delivered')).toBe(true);
      expect(flaky.requests).toHaveLength(9);
    } finally {
      testApp.clock.set(start);
      await flaky.close();
    }
  });

  it('a lease shorter than the attempt timeout plus a margin is refused when the worker is made', () => {
    expect(() => createDeliveryWorker(testApp.context, { leaseMs: 10_000, attemptTimeoutMs: 10_000 })).toThrow(
      /must exceed the attempt timeout/,
    );
  });

  it('a running worker delivers events emitted after it started, without being driven', async () => {
    const merchant = await testApp.createMerchant();
    const running = worker({ idlePollMs: 20 });
    running.start();
    const event = await emitTo(merchant.shop_id, receiver.url);
    await expect
      .poll(async () => (await deliveryOf(event.id)).status, { timeout: 5_000, interval: 20 })
      .toBe('delivered');
    expect(receiver.requests).toHaveLength(1);
  });
});

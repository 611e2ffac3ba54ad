// GET /v1/webhooks/stream against the real server on a real port: events made by
// API actions arrive in order as SSE frames carrying the exact webhook bodies,
// a resume by Last-Event-ID gets exactly what was missed, heartbeats flow, the
// per-shop bound holds, and the shop's own deliveries are untouched.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inTransaction } from '../../src/db/transaction.ts';
import { createDeliveryWorker } from '../../src/webhooks/delivery-worker.ts';
import { emit } from '../../src/webhooks/outbox.ts';
import { createTestApp, type TestApp } from '../support/app.ts';
import { backends, itOnServer } from '../support/databases.ts';
import { eventually } from '../support/eventually.ts';
import { startReceiver, type Receiver } from './receiver.ts';
import { openSse, type SseConnection } from './sse-client.ts';

const STREAMS_PER_SHOP = 2;

describe.each(backends)('webhook event stream on %s', (backend) => {
  let testApp: TestApp;
  let receiver: Receiver;
  let baseUrl: string;
  const open: SseConnection[] = [];

  beforeAll(async () => {
    testApp = await createTestApp(backend, {
      config: { eventStreamHeartbeatMs: 25, eventStreamsPerShop: STREAMS_PER_SHOP },
    });
    testApp.clock.set(new Date());
    receiver = await startReceiver();
    baseUrl = await testApp.app.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(async () => {
    for (const connection of open) connection.close();
    await receiver.close();
    await testApp.close();
  });

  async function stream(apiKey: string, query = '', headers: Record<string, string> = {}) {
    const connection = await openSse(`${baseUrl}/v1/webhooks/stream${query}`, apiKey, headers);
    open.push(connection);
    return connection;
  }

  async function api(apiKey: string, method: 'GET' | 'POST', url: string, payload?: object) {
    const response = await fetch(`${baseUrl}${url}`, {
      method,
      headers: {
        authorization: `Bearer ${apiKey}`,
        ...(payload ? { 'content-type': 'application/json' } : {}),
      },
      body: payload ? JSON.stringify(payload) : undefined,
    });
    expect(response.status, url).toBeLessThan(300);
    return response.json();
  }

  /** A paid payment, as a merchant makes one: its payment.paid event goes to the receiver (a payment without a callback_url has no events). */
  async function paidPayment(apiKey: string): Promise<string> {
    const payment = await api(apiKey, 'POST', '/v1/payments', {
      amount: 100,
      currency: 'RUB',
      callback_url: receiver.url,
    });
    await api(apiKey, 'POST', `/v1/test_helpers/payments/${payment.payment_id}/pay`);
    return payment.payment_id;
  }

  /** The shop's stored events, oldest first: what the stream must carry. */
  async function storedEvents(apiKey: string): Promise<{ id: string; type: string }[]> {
    const page = await api(apiKey, 'GET', '/v1/webhooks/events?limit=100');
    return [...page.data].reverse();
  }

  it('sends the events of API actions in order, each with its id, type and the exact webhook body', async () => {
    const merchant = await testApp.createMerchant();
    const connection = await stream(merchant.api_key);
    expect(connection.status).toBe(200);
    expect(connection.headers['content-type']).toMatch(/^text\/event-stream/);
    const paymentIds = [
      await paidPayment(merchant.api_key),
      await paidPayment(merchant.api_key),
      await paidPayment(merchant.api_key),
    ];
    const received = await connection.waitForEvents(3);
    const stored = await storedEvents(merchant.api_key);
    expect(received.map((event) => event.id)).toEqual(stored.map((event) => event.id));
    expect(received.map((event) => event.event)).toEqual(['payment.paid', 'payment.paid', 'payment.paid']);
    expect(received.map((event) => JSON.parse(event.data).data.payment_id)).toEqual(paymentIds);
    const rows = await testApp.database.db
      .selectFrom('webhook_events')
      .select(['id', 'payload'])
      .where('shop_id', '=', merchant.shop_id)
      .execute();
    const payloads = new Map(rows.map((row) => [row.id, row.payload]));
    for (const event of received) expect(event.data).toBe(payloads.get(event.id ?? ''));
  });

  it('resumed with Last-Event-ID, sends exactly the events after it, then new ones', async () => {
    const merchant = await testApp.createMerchant();
    const first = await stream(merchant.api_key);
    await paidPayment(merchant.api_key);
    const [seen] = await first.waitForEvents(1);
    first.close();
    for (let index = 0; index < 3; index++) await paidPayment(merchant.api_key);
    const resumed = await stream(merchant.api_key, '', { 'last-event-id': seen!.id! });
    const missed = await resumed.waitForEvents(3);
    const stored = await storedEvents(merchant.api_key);
    expect(missed.map((event) => event.id)).toEqual(stored.slice(1).map((event) => event.id));
    await paidPayment(merchant.api_key);
    const all = await resumed.waitForEvents(4);
    expect(all.map((event) => event.id)).toEqual((await storedEvents(merchant.api_key)).slice(1).map((e) => e.id));
    // ?after= resumes the same way.
    const byQuery = await stream(merchant.api_key, `?after=${seen!.id}`);
    expect((await byQuery.waitForEvents(4)).map((event) => event.id)).toEqual(all.map((event) => event.id));
  });

  // One PGlite session cannot hold a transaction open beside the API's requests.
  itOnServer(backend)(
    'an event of a transaction that commits after a newer one is sent, in order, not stepped over',
    async () => {
      const merchant = await testApp.createMerchant();
      const connection = await stream(merchant.api_key);
      let release!: () => void;
      const released = new Promise<void>((resolve) => (release = resolve));
      let written!: () => void;
      const eventWritten = new Promise<void>((resolve) => (written = resolve));
      const slow = inTransaction(testApp.context.db, async (tx) => {
        await emit(tx, testApp.clock, {
          shopId: merchant.shop_id,
          type: 'crypto.invoice.updated',
          data: { invoice_id: 'inv_slow' },
          destination: null,
        });
        written();
        await released;
      });
      await eventWritten;
      await paidPayment(merchant.api_key);
      release();
      await slow;
      const received = await connection.waitForEvents(2);
      expect(received.map((event) => event.event)).toEqual(['crypto.invoice.updated', 'payment.paid']);
    },
  );

  it('refuses a Last-Event-ID that is not an event of the shop with 400 invalid_request', async () => {
    const merchant = await testApp.createMerchant();
    const other = await testApp.createMerchant();
    const connection = await stream(other.api_key);
    await paidPayment(other.api_key);
    const [foreign] = await connection.waitForEvents(1);
    const refused = await stream(merchant.api_key, '', { 'last-event-id': foreign!.id! });
    expect(refused.status).toBe(400);
    expect(refused.error).toMatchObject({ error: 'invalid_request' });
    expect(String((refused.error as { message: string }).message)).toContain('Last-Event-ID');
  });

  it('sends only the types asked for with ?types= patterns', async () => {
    const merchant = await testApp.createMerchant();
    const connection = await stream(merchant.api_key, '?types=crypto.*,webhook.test');
    await paidPayment(merchant.api_key);
    await inTransaction(testApp.context.db, (tx) =>
      emit(tx, testApp.clock, {
        shopId: merchant.shop_id,
        type: 'crypto.invoice.updated',
        data: { invoice_id: 'inv_1' },
        destination: null,
      }),
    );
    const [only] = await connection.waitForEvents(1);
    expect(only!.event).toBe('crypto.invoice.updated');
    const bad = await stream(merchant.api_key, '?types=payment.%25');
    expect(bad.status).toBe(400);
  });

  it('sends a heartbeat comment while no events come', async () => {
    const merchant = await testApp.createMerchant();
    const connection = await stream(merchant.api_key);
    await eventually(
      () => connection.comments.filter((comment) => comment.trim() === 'heartbeat').length,
      (count) => count >= 2,
    );
  });

  it('holds at most the bound of streams per shop: the next is 429 rate_limited, other shops unaffected', async () => {
    const merchant = await testApp.createMerchant();
    const other = await testApp.createMerchant();
    const held: SseConnection[] = [];
    for (let index = 0; index < STREAMS_PER_SHOP; index++) held.push(await stream(merchant.api_key));
    expect(held.map((connection) => connection.status)).toEqual([200, 200]);
    const refused = await stream(merchant.api_key);
    expect(refused.status).toBe(429);
    expect(refused.headers['retry-after']).toBe('5');
    expect(refused.error).toMatchObject({ error: 'rate_limited' });
    expect((await stream(other.api_key)).status).toBe(200);
    held[0]!.close();
    const reopened = await eventually(
      () => stream(merchant.api_key),
      (connection) => connection.status === 200,
      20,
    );
    expect(reopened.status).toBe(200);
  });

  it("leaves the shop's deliveries as they are: the endpoint gets each event exactly once", async () => {
    const merchant = await testApp.createMerchant();
    const streams = [await stream(merchant.api_key), await stream(merchant.api_key)];
    for (let index = 0; index < 3; index++) await paidPayment(merchant.api_key);
    for (const connection of streams) await connection.waitForEvents(3);
    const worker = createDeliveryWorker(testApp.context, { concurrency: 4 });
    try {
      await worker.drain();
    } finally {
      await worker.stop();
    }
    const ids = (await storedEvents(merchant.api_key)).map((event) => event.id);
    // Earlier tests' events go to the same receiver; this shop's are these three.
    const delivered = receiver.requests
      .map((request) => String(request.headers['webhook-id']))
      .filter((id) => ids.includes(id));
    expect(delivered.sort()).toEqual([...ids].sort());
    const events = await api(merchant.api_key, 'GET', '/v1/webhooks/events?limit=100');
    expect(events.data.map((event: { attempt_count: number }) => event.attempt_count)).toEqual([1, 1, 1]);
  });
});

describe.each(backends)('webhook event stream and shutdown on %s', (backend) => {
  it('closing the server ends open streams instead of waiting for them', async () => {
    const testApp = await createTestApp(backend);
    const baseUrl = await testApp.app.listen({ port: 0, host: '127.0.0.1' });
    const merchant = await testApp.createMerchant();
    const connections = [
      await openSse(`${baseUrl}/v1/webhooks/stream`, merchant.api_key),
      await openSse(`${baseUrl}/v1/webhooks/stream`, merchant.api_key),
    ];
    expect(connections.map((connection) => connection.status)).toEqual([200, 200]);
    await testApp.close();
    await eventually(
      () => connections.every((connection) => connection.ended),
      (ended) => ended,
    );
  });
});

import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inTransaction } from '../../src/db/transaction.ts';
import { createDeliveryWorker } from '../../src/webhooks/delivery-worker.ts';
import { emit } from '../../src/webhooks/outbox.ts';
import { backends } from '../support/databases.ts';
import { createTestApp, type TestApp } from '../support/app.ts';
import { startReceiver, type Receiver } from './receiver.ts';

describe.each(backends)('webhook API on %s', (backend) => {
  let testApp: TestApp;
  let receiver: Receiver;
  beforeAll(async () => {
    testApp = await createTestApp(backend);
    testApp.clock.set(new Date());
    receiver = await startReceiver();
  });
  afterAll(async () => {
    await receiver.close();
    await testApp.close();
  });

  const call = (key: string, method: 'GET' | 'POST' | 'PUT', url: string, payload?: unknown) =>
    testApp.app.inject({
      method,
      url,
      headers: { authorization: `Bearer ${key}` },
      ...(payload === undefined ? {} : { payload: payload as object }),
    });

  async function emitEvents(shopId: string, count: number, type: string, destination: string | null) {
    const ids: string[] = [];
    for (let index = 0; index < count; index++) {
      testApp.clock.advance(1);
      ids.push(
        (
          await inTransaction(testApp.context.db, (tx) =>
            emit(tx, testApp.clock, { shopId, type, data: { index }, destination }),
          )
        ).id,
      );
    }
    return ids;
  }

  async function drain() {
    const worker = createDeliveryWorker(testApp.context, { concurrency: 4 });
    try {
      return await worker.drain();
    } finally {
      await worker.stop();
    }
  }

  it('lists the shop’s events newest first, paginated with an opaque cursor', async () => {
    const merchant = await testApp.createMerchant();
    const ids = await emitEvents(merchant.shop_id, 5, 'payment.paid', null);
    const first = await call(merchant.api_key, 'GET', '/v1/webhooks/events?limit=2');
    expect(first.statusCode).toBe(200);
    const firstPage = first.json();
    expect(firstPage.data.map((event: { id: string }) => event.id)).toEqual([ids[4], ids[3]]);
    const seen = [...firstPage.data];
    let cursor = firstPage.next_cursor as string | null;
    while (cursor) {
      const page = (await call(merchant.api_key, 'GET', `/v1/webhooks/events?limit=2&cursor=${cursor}`)).json();
      seen.push(...page.data);
      cursor = page.next_cursor;
    }
    expect(seen.map((event) => event.id)).toEqual([...ids].reverse());
    expect(seen[0]).toEqual({
      id: ids[4],
      type: 'payment.paid',
      created_at: expect.any(String),
      data: { index: 4 },
      destination_url: null,
      status: 'no_destination',
      attempt_count: 0,
      last_attempt_at: null,
      next_attempt_at: null,
    });
  });

  it('filters by type and by delivery status', async () => {
    const merchant = await testApp.createMerchant();
    receiver.handler = () => ({ status: 200 });
    const [delivered] = await emitEvents(merchant.shop_id, 1, 'payment.paid', receiver.url);
    await drain();
    const [pending] = await emitEvents(merchant.shop_id, 1, 'crypto.payout.updated', receiver.url);
    const [unsent] = await emitEvents(merchant.shop_id, 1, 'payment.expired', null);
    const ids = async (query: string) =>
      (await call(merchant.api_key, 'GET', `/v1/webhooks/events?${query}`))
        .json()
        .data.map((event: { id: string }) => event.id);
    expect(await ids('type=crypto.payout.updated')).toEqual([pending]);
    expect(await ids('status=delivered')).toEqual([delivered]);
    expect(await ids('status=pending')).toEqual([pending]);
    expect(await ids('status=no_destination')).toEqual([unsent]);
    expect((await call(merchant.api_key, 'GET', '/v1/webhooks/events?status=bogus')).json()).toMatchObject({
      error: 'invalid_request',
    });
    expect((await call(merchant.api_key, 'GET', '/v1/webhooks/events?limit=101')).statusCode).toBe(400);
    expect((await call(merchant.api_key, 'GET', '/v1/webhooks/events?cursor=nonsense')).json()).toMatchObject({
      error: 'invalid_request',
    });
    await drain();
  });

  it('shows one event and its attempts with status code, duration, error, body and next retry', async () => {
    const merchant = await testApp.createMerchant();
    receiver.handler = () => ({ status: 502, body: 'bad gateway' });
    const [id] = await emitEvents(merchant.shop_id, 1, 'payment.paid', receiver.url);
    await drain();
    const event = (await call(merchant.api_key, 'GET', `/v1/webhooks/events/${id}`)).json();
    expect(event).toMatchObject({ id, status: 'pending', attempt_count: 1, destination_url: receiver.url });
    const attempts = await call(merchant.api_key, 'GET', `/v1/webhooks/events/${id}/attempts`);
    expect(attempts.statusCode).toBe(200);
    expect(attempts.json()).toEqual({
      data: [
        {
          id: expect.stringMatching(/^att_/),
          event_id: id,
          attempt_number: 1,
          url: receiver.url,
          attempted_at: expect.any(String),
          duration_ms: expect.any(Number),
          outcome: 'http_error',
          status_code: 502,
          error: 'the receiver answered HTTP 502',
          response_body: 'bad gateway',
          next_retry_at: event.next_attempt_at,
        },
      ],
      next_cursor: null,
    });
  });

  it("another shop's event is 404 not_found on every event route", async () => {
    const owner = await testApp.createMerchant();
    const stranger = await testApp.createMerchant();
    const [id] = await emitEvents(owner.shop_id, 1, 'payment.paid', receiver.url);
    for (const [method, url] of [
      ['GET', `/v1/webhooks/events/${id}`],
      ['GET', `/v1/webhooks/events/${id}/attempts`],
      ['POST', `/v1/webhooks/events/${id}/resend`],
    ] as const) {
      const response = await call(stranger.api_key, method, url);
      expect(response.statusCode).toBe(404);
      expect(response.json()).toEqual({
        error: 'not_found',
        message: expect.any(String),
        request_id: expect.any(String),
      });
    }
    expect((await call(stranger.api_key, 'GET', '/v1/webhooks/events')).json().data).toEqual([]);
    await drain();
  });

  it('resend makes a new attempt now with the same webhook-id, even after the delivery succeeded', async () => {
    const merchant = await testApp.createMerchant();
    receiver.handler = () => ({ status: 200 });
    receiver.requests.length = 0;
    const [id] = await emitEvents(merchant.shop_id, 1, 'payment.paid', receiver.url);
    await drain();
    const resent = await call(merchant.api_key, 'POST', `/v1/webhooks/events/${id}/resend`);
    expect(resent.statusCode).toBe(202);
    expect(resent.json()).toMatchObject({ id, status: 'pending', next_attempt_at: testApp.clock.now().toISOString() });
    await drain();
    expect(receiver.requests.map((request) => request.headers['webhook-id'])).toEqual([id, id]);
    expect((await call(merchant.api_key, 'GET', `/v1/webhooks/events/${id}`)).json()).toMatchObject({
      status: 'delivered',
      attempt_count: 2,
    });
  });

  it('a resend of a failed delivery gets one attempt and, failing again, is failed again', async () => {
    const merchant = await testApp.createMerchant();
    receiver.handler = () => ({ status: 500 });
    const [id] = await emitEvents(merchant.shop_id, 1, 'payment.paid', receiver.url);
    await testApp.context.db
      .updateTable('webhook_deliveries')
      .set({ status: 'failed', next_attempt_at: null, attempt_count: 10 })
      .where('event_id', '=', id!)
      .execute();
    await call(merchant.api_key, 'POST', `/v1/webhooks/events/${id}/resend`);
    await drain();
    expect((await call(merchant.api_key, 'GET', `/v1/webhooks/events/${id}`)).json()).toMatchObject({
      status: 'failed',
      attempt_count: 11,
      next_attempt_at: null,
    });
  });

  it('resending an event that had no destination is 409 invalid_state', async () => {
    const merchant = await testApp.createMerchant();
    const [id] = await emitEvents(merchant.shop_id, 1, 'payment.paid', null);
    const response = await call(merchant.api_key, 'POST', `/v1/webhooks/events/${id}/resend`);
    expect(response.statusCode).toBe(409);
    expect(response.json()).toMatchObject({ error: 'invalid_state' });
  });

  it('rotating the secret returns the new secret once; the next webhook carries both signatures', async () => {
    const merchant = await testApp.createMerchant();
    const rotated = await call(merchant.api_key, 'POST', '/v1/webhooks/secret/rotate');
    expect(rotated.statusCode).toBe(200);
    const { webhook_secret: secret, previous_secret_expires_at: expiresAt } = rotated.json();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
    expect(secret).not.toBe(merchant.webhook_secret);
    expect(Date.parse(expiresAt) - testApp.clock.now().getTime()).toBe(24 * 3600 * 1000);
    receiver.handler = () => ({ status: 200 });
    receiver.requests.length = 0;
    const sent = await call(merchant.api_key, 'POST', '/v1/webhooks/test', { url: receiver.url });
    const [request] = receiver.requests;
    expect((request!.headers['webhook-signature'] as string).split(' ')).toHaveLength(2);
    expect(new Webhook(secret).verify(request!.body, request!.headers as Record<string, string>)).toMatchObject({
      id: sent.json().event.id,
    });
  });

  it('sets, reads and clears the shop endpoint; a URL breaking the rules is 400 and changes nothing', async () => {
    const merchant = await testApp.createMerchant();
    const set = await call(merchant.api_key, 'PUT', '/v1/webhooks/endpoint', { url: 'https://merchant.example/hooks' });
    expect(set.statusCode).toBe(200);
    expect(set.json()).toEqual({ url: 'https://merchant.example/hooks' });
    for (const url of ['ftp://merchant.example/hooks', 'not a url', `https://merchant.example/${'a'.repeat(2100)}`]) {
      const refused = await call(merchant.api_key, 'PUT', '/v1/webhooks/endpoint', { url });
      expect(refused.statusCode).toBe(400);
      expect(refused.json()).toMatchObject({ error: 'invalid_request' });
    }
    expect((await call(merchant.api_key, 'GET', '/v1/webhooks/endpoint')).json()).toEqual({
      url: 'https://merchant.example/hooks',
    });
    expect((await call(merchant.api_key, 'PUT', '/v1/webhooks/endpoint', { url: null })).json()).toEqual({ url: null });
  });

  it('the test send posts a signed webhook.test now and answers with the attempt; without any URL it is 400', async () => {
    const merchant = await testApp.createMerchant();
    const none = await call(merchant.api_key, 'POST', '/v1/webhooks/test', {});
    expect(none.statusCode).toBe(400);
    expect(none.json()).toMatchObject({ error: 'invalid_request' });

    await call(merchant.api_key, 'PUT', '/v1/webhooks/endpoint', { url: receiver.url });
    receiver.handler = () => ({ status: 200, body: 'thanks' });
    receiver.requests.length = 0;
    const response = await call(merchant.api_key, 'POST', '/v1/webhooks/test');
    expect(response.statusCode).toBe(200);
    const body = response.json();
    expect(body.event).toMatchObject({
      type: 'webhook.test',
      status: 'delivered',
      attempt_count: 1,
      destination_url: receiver.url,
    });
    expect(body.attempt).toMatchObject({
      event_id: body.event.id,
      outcome: 'succeeded',
      status_code: 200,
      response_body: 'thanks',
    });
    const [request] = receiver.requests;
    expect(
      new Webhook(merchant.webhook_secret).verify(request!.body, request!.headers as Record<string, string>),
    ).toMatchObject({
      type: 'webhook.test',
    });
    // A worker does not send it a second time.
    expect(await drain()).toBe(0);
    expect(receiver.requests).toHaveLength(1);
  });

  // Every route × scope outcome is in test/webhooks/webhook-403.test.ts; this is the short story.
  it('a key with any single scope may read the webhook log of its own shop, and only a webhooks key may change the endpoint', async () => {
    const merchant = await testApp.createMerchant();
    for (const scope of ['read', 'payments', 'crypto', 'payouts', 'webhooks'] as const) {
      const key = await testApp.createKey(merchant.shop_id, [scope]);
      expect((await call(key, 'GET', '/v1/webhooks/events')).statusCode).toBe(200);
      const put = await call(key, 'PUT', '/v1/webhooks/endpoint', { url: 'https://merchant.example/hooks' });
      expect(put.statusCode).toBe(scope === 'webhooks' ? 200 : 403);
    }
    expect((await testApp.app.inject({ method: 'GET', url: '/v1/webhooks/events' })).statusCode).toBe(401);
  });
});

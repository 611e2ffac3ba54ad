// Issue 11, point 8: every place a webhook URL enters refuses loopback, private,
// link-local and reserved hosts when it is given (400 naming the field, nothing
// stored), and a test send never tells what a host resolved to or what it answered.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backends } from '../support/databases.ts';
import { createTestApp, type TestApp } from '../support/app.ts';
import { closedPortUrl, startReceiver, type Receiver } from './receiver.ts';

type Method = 'GET' | 'POST' | 'PUT';

function caller(testApp: TestApp) {
  return (key: string, method: Method, url: string, payload?: unknown) =>
    testApp.app.inject({
      method,
      url,
      headers: { authorization: `Bearer ${key}` },
      ...(payload === undefined ? {} : { payload: payload as object }),
    });
}

const REFUSED_URLS = [
  ['http://127.0.0.1:8080/hooks', 'loopback'],
  ['https://localhost/hooks', 'loopback'],
  ['https://api.localhost./hooks', 'loopback'],
  ['http://169.254.169.254/latest/meta-data/', 'link-local'],
  ['https://10.0.0.5/hooks', 'private'],
  ['https://[::1]/hooks', 'loopback'],
  ['https://[::ffff:127.0.0.1]/hooks', 'loopback'],
  // WHATWG URL parsing turns both into 127.0.0.1.
  ['https://2130706433/hooks', 'loopback'],
  ['https://0x7f.1/hooks', 'loopback'],
] as const;

describe.each(backends)('webhook URLs are refused when given, on %s', (backend) => {
  let testApp: TestApp;
  let call: ReturnType<typeof caller>;
  beforeAll(async () => {
    testApp = await createTestApp(backend, { config: { webhookAllowPrivate: false } });
    call = caller(testApp);
  });
  afterAll(() => testApp.close());

  it.each(REFUSED_URLS)(
    'PUT /v1/webhooks/endpoint refuses %s (%s) with 400 naming url, and keeps the endpoint',
    async (url, reason) => {
      const merchant = await testApp.createMerchant();
      await call(merchant.api_key, 'PUT', '/v1/webhooks/endpoint', { url: 'https://merchant.example/hooks' });
      const response = await call(merchant.api_key, 'PUT', '/v1/webhooks/endpoint', { url });
      expect(response.statusCode).toBe(400);
      expect(response.json().error).toBe('invalid_request');
      expect(response.json().message).toMatch(new RegExp(`^url must not point to .*${reason}`));
      expect((await call(merchant.api_key, 'GET', '/v1/webhooks/endpoint')).json()).toEqual({
        url: 'https://merchant.example/hooks',
      });
    },
  );

  it.each(REFUSED_URLS)(
    'POST /v1/payments refuses callback_url %s (%s) with 400 naming callback_url, and creates nothing',
    async (url, reason) => {
      const merchant = await testApp.createMerchant();
      const response = await call(merchant.api_key, 'POST', '/v1/payments', {
        amount: 1000,
        currency: 'RUB',
        callback_url: url,
      });
      expect(response.statusCode).toBe(400);
      expect(response.json().error).toBe('invalid_request');
      expect(response.json().message).toMatch(new RegExp(`^callback_url must not point to .*${reason}`));
      const payments = await testApp.context.db
        .selectFrom('payments')
        .select('id')
        .where('shop_id', '=', merchant.shop_id)
        .execute();
      expect(payments).toHaveLength(0);
    },
  );

  it.each(REFUSED_URLS)(
    'POST /v1/webhooks/test refuses %s (%s) with 400 naming url, and sends and stores nothing',
    async (url, reason) => {
      const merchant = await testApp.createMerchant();
      const response = await call(merchant.api_key, 'POST', '/v1/webhooks/test', { url });
      expect(response.statusCode).toBe(400);
      expect(response.json().message).toMatch(new RegExp(`^url must not point to .*${reason}`));
      expect((await call(merchant.api_key, 'GET', '/v1/webhooks/events')).json().data).toEqual([]);
    },
  );

  it('public hosts are accepted everywhere; host names are not resolved when given', async () => {
    const merchant = await testApp.createMerchant();
    for (const url of [
      'https://8.8.8.8/hooks',
      'https://merchant.example/hooks',
      'https://[2606:4700:4700::1111]/hooks',
    ]) {
      expect((await call(merchant.api_key, 'PUT', '/v1/webhooks/endpoint', { url })).statusCode).toBe(200);
      expect(
        (await call(merchant.api_key, 'POST', '/v1/payments', { amount: 1000, currency: 'RUB', callback_url: url }))
          .statusCode,
      ).toBe(201);
    }
  });

  it('a stored endpoint whose name resolves to loopback is refused at the test send without revealing the address', async () => {
    const merchant = await testApp.createMerchant();
    const receiver = await startReceiver();
    try {
      // As left by a version that did not check at creation: only the connection-time guard stands.
      const url = receiver.url.replace('127.0.0.1', 'localhost');
      await testApp.context.db
        .updateTable('webhook_endpoints')
        .set({ webhook_url: url })
        .where('shop_id', '=', merchant.shop_id)
        .execute();
      const response = await call(merchant.api_key, 'POST', '/v1/webhooks/test');
      expect(response.statusCode).toBe(200);
      const { event, attempt } = response.json();
      expect(attempt).toMatchObject({ outcome: 'refused', status_code: null, response_body: null });
      expect(attempt.error).toBe(
        'the host resolves to an address webhooks may not reach (private, loopback, link-local or reserved)',
      );
      expect(response.body).not.toMatch(/127\.0\.0\.1|::1/);
      expect(receiver.requests).toHaveLength(0);
      const listed = await call(merchant.api_key, 'GET', `/v1/webhooks/events/${event.id}/attempts`);
      expect(listed.json().data).toEqual([attempt]);
    } finally {
      await receiver.close();
    }
  });
});

describe.each(backends)('a test send answers without the body or the address of a failure, on %s', (backend) => {
  let testApp: TestApp;
  let call: ReturnType<typeof caller>;
  let receiver: Receiver;
  beforeAll(async () => {
    // Private targets allowed, so that the receivers on 127.0.0.1 are reached.
    testApp = await createTestApp(backend);
    testApp.clock.set(new Date());
    call = caller(testApp);
    receiver = await startReceiver();
  });
  afterAll(async () => {
    await receiver.close();
    await testApp.close();
  });

  it('an error status is answered with its code, without the body, and stored the same', async () => {
    const merchant = await testApp.createMerchant();
    receiver.handler = () => ({ status: 500, body: 'internal reply: db=10.0.0.7 user=admin' });
    const response = await call(merchant.api_key, 'POST', '/v1/webhooks/test', { url: receiver.url });
    const { event, attempt } = response.json();
    expect(attempt).toMatchObject({
      outcome: 'http_error',
      status_code: 500,
      response_body: null,
      error: 'the receiver answered HTTP 500',
    });
    expect(response.body).not.toContain('internal reply');
    expect(receiver.requests).toHaveLength(1);
    expect((await call(merchant.api_key, 'GET', `/v1/webhooks/events/${event.id}/attempts`)).json().data).toEqual([
      attempt,
    ]);
  });

  it('a closed port is a connection error with a generic message, not the address and port', async () => {
    const merchant = await testApp.createMerchant();
    const url = await closedPortUrl();
    const response = await call(merchant.api_key, 'POST', '/v1/webhooks/test', { url });
    const { attempt } = response.json();
    expect(attempt).toMatchObject({
      outcome: 'connection_error',
      response_body: null,
      error: 'could not connect to the receiver',
    });
    expect(attempt.error).not.toContain(new URL(url).port);
  });

  it('a success keeps the receiver’s answer, as before', async () => {
    const merchant = await testApp.createMerchant();
    receiver.handler = () => ({ status: 200, body: 'thanks' });
    const response = await call(merchant.api_key, 'POST', '/v1/webhooks/test', { url: receiver.url });
    expect(response.json().attempt).toMatchObject({
      outcome: 'succeeded',
      status_code: 200,
      response_body: 'thanks',
      error: null,
    });
  });
});

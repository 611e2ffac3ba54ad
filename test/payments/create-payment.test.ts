// POST /v1/payments: the request of spec 2.1 validated exactly, the Payment of 2.2 returned.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backends } from '../support/databases.ts';
import { createTestApp, type TestApp } from '../support/app.ts';
import { postPayment, sandboxShop, type ShopWithKey } from './payment-test-support.ts';

describe.each(backends)('POST /v1/payments on %s', (backend) => {
  let testApp: TestApp;
  let shop: ShopWithKey;

  beforeAll(async () => {
    testApp = await createTestApp(backend);
    shop = await sandboxShop(testApp);
  });
  afterAll(async () => testApp.close());

  const valid = { amount: 10.1, currency: 'RUB' };

  it('creates a pending payment with every field of spec 2.2', async () => {
    const response = await postPayment(testApp, shop.key, {
      amount: 1500.5,
      currency: 'RUB',
      method: 'card',
      order_id: 'order-1',
      callback_url: 'https://merchant.example/hook',
    });
    expect(response.statusCode).toBe(201);
    const payment = response.json();
    expect(Object.keys(payment).sort()).toEqual(
      [
        'amount',
        'amount_total',
        'created_at',
        'currency',
        'expires_at',
        'method',
        'order_code',
        'order_id',
        'paid_at',
        'payment_id',
        'payment_url',
        'status',
      ].sort(),
    );
    expect(payment.payment_id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(payment.order_code).toMatch(/^[A-Za-z0-9]{6,32}$/);
    expect(payment.payment_url).toBe(`http://paygate.test/pay/${payment.order_code}`);
    expect(payment).toMatchObject({
      status: 'pending',
      amount: 1500.5,
      amount_total: 1500.5,
      currency: 'RUB',
      method: 'card',
      order_id: 'order-1',
      paid_at: null,
      created_at: testApp.clock.now().toISOString(),
      expires_at: new Date(testApp.clock.now().getTime() + 3_600_000).toISOString(),
    });
  });

  it('stores the amount as integer kopecks', async () => {
    const payment = (await postPayment(testApp, shop.key, { amount: 1234.56, currency: 'RUB' })).json();
    const row = await testApp.context.db
      .selectFrom('payments')
      .select(['amount_kopecks'])
      .where('id', '=', payment.payment_id)
      .executeTakeFirstOrThrow();
    expect(row.amount_kopecks).toBe(123456n);
  });

  it('returns method null and order_id null when they are not given', async () => {
    const payment = (await postPayment(testApp, shop.key, valid)).json();
    expect(payment.method).toBeNull();
    expect(payment.order_id).toBeNull();
  });

  it('gives every payment its own id and order code', async () => {
    const first = (await postPayment(testApp, shop.key, valid)).json();
    const second = (await postPayment(testApp, shop.key, valid)).json();
    expect(first.payment_id).not.toBe(second.payment_id);
    expect(first.order_code).not.toBe(second.order_code);
  });

  it.each([
    ['1 (lower bound)', 1],
    ['1000000 (upper bound)', 1000000],
    ['10.1', 10.1],
    ['10.10 (the same JSON number)', '10.10'],
    ['999999.99', 999999.99],
    ['1.01', 1.01],
  ])('accepts amount %s', async (_label, amount) => {
    const payload = `{"amount":${String(amount)},"currency":"RUB"}`;
    const response = await postPayment(testApp, shop.key, payload);
    expect(response.statusCode).toBe(201);
    expect(response.json().amount).toBe(Number(amount));
  });

  it.each([
    ['0.99 (below the lower bound)', '0.99'],
    ['1000000.01 (above the upper bound)', '1000000.01'],
    ['10.001 (three decimals)', '10.001'],
    ['0', '0'],
    ['-5', '-5'],
    ['1e400 (parses to Infinity)', '1e400'],
    ['the string "10"', '"10"'],
    ['the string "NaN"', '"NaN"'],
    ['null', 'null'],
    ['true', 'true'],
    ['an object', '{}'],
  ])('refuses amount %s with 400 invalid_request', async (_label, amountJson) => {
    const response = await postPayment(testApp, shop.key, `{"amount":${amountJson},"currency":"RUB"}`);
    expect(response.statusCode).toBe(400);
    expect(response.json()).toMatchObject({ error: 'invalid_request' });
    expect(response.json().message).toContain('amount');
  });

  it('refuses a body without amount or without currency', async () => {
    for (const body of [{ currency: 'RUB' }, { amount: 10 }]) {
      const response = await postPayment(testApp, shop.key, body);
      expect(response.statusCode).toBe(400);
      expect(response.json().error).toBe('invalid_request');
    }
  });

  it.each(['USD', 'rub', '', 'RUBB'])('refuses currency %j with 400 invalid_request', async (currency) => {
    const response = await postPayment(testApp, shop.key, { amount: 10, currency });
    expect(response.statusCode).toBe(400);
    expect(response.json()).toMatchObject({ error: 'invalid_request' });
    expect(response.json().message).toContain('currency');
  });

  it.each(['id', 'payment_id', 'amount_total', 'description'])(
    'refuses a body carrying "%s", naming the field',
    async (field) => {
      const response = await postPayment(testApp, shop.key, { ...valid, [field]: 'x' });
      expect(response.statusCode).toBe(400);
      expect(response.json().error).toBe('invalid_request');
      expect(response.json().message).toContain(`"${field}"`);
    },
  );

  it.each([
    'not a url',
    'ftp://merchant.example/hook',
    '/relative/path',
    'https://',
    'javascript:alert(1)',
    `https://e.example/${'a'.repeat(2048)}`,
  ])('refuses callback_url %j with 400 invalid_request', async (callbackUrl) => {
    const response = await postPayment(testApp, shop.key, { ...valid, callback_url: callbackUrl });
    expect(response.statusCode).toBe(400);
    expect(response.json()).toMatchObject({ error: 'invalid_request' });
    expect(response.json().message).toContain('callback_url');
  });

  it('accepts an http callback_url where plain-http webhooks are allowed', async () => {
    const response = await postPayment(testApp, shop.key, { ...valid, callback_url: 'http://127.0.0.1:9/hook' });
    expect(response.statusCode).toBe(201);
  });

  it('accepts order_id of 255 characters and refuses 256 or an empty one', async () => {
    expect((await postPayment(testApp, shop.key, { ...valid, order_id: 'o'.repeat(255) })).statusCode).toBe(201);
    for (const orderId of ['o'.repeat(256), '']) {
      const response = await postPayment(testApp, shop.key, { ...valid, order_id: orderId });
      expect(response.statusCode).toBe(400);
      expect(response.json().error).toBe('invalid_request');
      expect(response.json().message).toContain('order_id');
    }
  });

  it('refuses wrongly typed optional fields', async () => {
    for (const body of [
      { ...valid, order_id: 5 },
      { ...valid, method: 1 },
      { ...valid, callback_url: ['x'] },
    ]) {
      const response = await postPayment(testApp, shop.key, body);
      expect(response.statusCode).toBe(400);
      expect(response.json().error).toBe('invalid_request');
    }
  });

  it('refuses a body that is not JSON', async () => {
    const response = await postPayment(testApp, shop.key, '{"amount": 10,');
    expect(response.statusCode).toBe(400);
    expect(response.json().error).toBe('invalid_request');
  });

  it('answers 401 unauthorized without a key, with a wrong key, and with a revoked key', async () => {
    const noHeader = await testApp.app.inject({ method: 'POST', url: '/v1/payments', payload: valid });
    expect(noHeader.statusCode).toBe(401);
    expect(noHeader.json().error).toBe('unauthorized');
    const wrong = await postPayment(testApp, `${shop.key.slice(0, -4)}aaaa`, valid);
    expect(wrong.statusCode).toBe(401);
    expect(wrong.json().error).toBe('unauthorized');
  });

  it('answers 403 forbidden to a key without the payments scope', async () => {
    const readKey = await testApp.createKey(shop.shopId, ['read']);
    const response = await postPayment(testApp, readKey, valid);
    expect(response.statusCode).toBe(403);
    expect(response.json().error).toBe('forbidden');
  });

  it('creates nothing when the request is refused', async () => {
    const before = await countPayments(testApp, shop.shopId);
    await postPayment(testApp, shop.key, { amount: 0.5, currency: 'RUB' });
    await postPayment(testApp, shop.key, { ...valid, id: 'x' });
    expect(await countPayments(testApp, shop.shopId)).toBe(before);
  });
});

async function countPayments(testApp: TestApp, shopId: string): Promise<number> {
  const row = await testApp.context.db
    .selectFrom('payments')
    .select((eb) => eb.fn.countAll<bigint>().as('count'))
    .where('shop_id', '=', shopId)
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

describe.each(backends)('POST /v1/payments rate limit on %s', (backend) => {
  let testApp: TestApp;

  beforeAll(async () => {
    testApp = await createTestApp(backend, { config: { rateLimitPerMinute: 3 } });
  });
  afterAll(async () => testApp.close());

  it('more requests per minute than the limit with one key are 429 rate_limited and create nothing', async () => {
    const shop = await sandboxShop(testApp);
    const statuses: number[] = [];
    for (let index = 0; index < 3; index++)
      statuses.push((await postPayment(testApp, shop.key, { amount: 10, currency: 'RUB' })).statusCode);
    expect(statuses).toEqual([201, 201, 201]);
    const limited = await postPayment(testApp, shop.key, { amount: 10, currency: 'RUB' });
    expect(limited.statusCode).toBe(429);
    expect(limited.json().error).toBe('rate_limited');
    expect(limited.headers['retry-after']).toBeDefined();
    expect(await countPayments(testApp, shop.shopId)).toBe(3);
  });
});

// A live shop charges through the configured production connectors only: a
// payment bound to a method none of them supports is 400 method_unavailable and
// is not created, the page offers only methods an acquirer can charge, and a
// payment left bound to such a method shows "unavailable" instead of failing.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { csrfToken } from '../../src/payments/page/page-security.ts';
import { backends } from '../support/databases.ts';
import { createTestApp, type TestApp } from '../support/app.ts';
import { saveConnection } from '../../src/payments/connectors/acquirer-connections.ts';
import { createFakeCardAcquirer, fakeCardProvider, type FakeCardAcquirer } from './fake-card-acquirer.ts';
import { getJson, postPayment, sandboxShop, type ShopWithKey } from './payment-test-support.ts';

function field(html: string, name: string): string | undefined {
  return new RegExp(`name="${name}" value="([^"]*)"`).exec(html)?.[1];
}

async function paymentCount(testApp: TestApp, shop: ShopWithKey): Promise<number> {
  return (await getJson(testApp, shop.key, '/v1/payments?limit=100')).json().data.length;
}

describe.each(backends)('live shops without a production connector on %s', (backend) => {
  let testApp: TestApp;
  let live: ShopWithKey;
  beforeAll(async () => {
    testApp = await createTestApp(backend);
    live = await sandboxShop(testApp, 'live');
  });
  afterAll(() => testApp.close());

  it.each(['card', 'sbp', 'sberpay'])(
    'a payment bound to %s is 400 method_unavailable and nothing is created',
    async (method) => {
      const response = await postPayment(testApp, live.key, { amount: 100, currency: 'RUB', method });
      expect(response.statusCode).toBe(400);
      expect(response.json()).toEqual({
        error: 'method_unavailable',
        message: expect.stringContaining('no live acquirer connector is configured'),
        request_id: expect.any(String),
      });
      expect(await paymentCount(testApp, live)).toBe(0);
    },
  );

  it('a payment without a method is 400 method_unavailable too: no method of the shop can be paid live', async () => {
    const response = await postPayment(testApp, live.key, { amount: 100, currency: 'RUB' });
    expect(response.statusCode).toBe(400);
    expect(response.json()).toEqual({
      error: 'method_unavailable',
      message: expect.stringContaining('no live acquirer connector is configured'),
      request_id: expect.any(String),
    });
    expect(await paymentCount(testApp, live)).toBe(0);
  });

  it('the same idempotency key may be used again after the refusal', async () => {
    const headers = { 'idempotency-key': 'live-sbp-1' };
    expect(
      (await postPayment(testApp, live.key, { amount: 100, currency: 'RUB', method: 'sbp' }, headers)).statusCode,
    ).toBe(400);
    const again = await postPayment(testApp, live.key, { amount: 100, currency: 'RUB', method: 'sbp' }, headers);
    expect(again.json().error).toBe('method_unavailable');
  });

  it('a live payment bound to sbp before this rule shows "unavailable" on its page, not an error', async () => {
    // Made as it was possible before: created in sandbox, then the shop went live.
    const shop = await sandboxShop(testApp);
    const payment = (await postPayment(testApp, shop.key, { amount: 100, currency: 'RUB', method: 'sbp' })).json();
    await sql`update shops set mode = 'live' where id = ${shop.shopId}`.execute(testApp.context.db);
    const page = await testApp.app.inject({ method: 'GET', url: `/pay/${payment.order_code}?lang=en` });
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('data-status="unavailable"');
    expect(page.body).not.toContain('<svg');
    // The page shows no form; a crafted action with a valid CSRF token is refused just the same.
    const cookie = String(page.headers['set-cookie']).split(';')[0]!;
    const csrf = csrfToken(cookie.split('=')[1]!, payment.payment_id);
    const action = await testApp.app.inject({
      method: 'POST',
      url: `/pay/${payment.order_code}/qr`,
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie },
      payload: new URLSearchParams({ csrf, attempt: 'a'.repeat(22), method: 'sbp', lang: 'en' }).toString(),
    });
    expect(action.statusCode).toBe(303);
    expect(action.headers.location).toContain('unavailable=1');
    expect((await getJson(testApp, shop.key, `/v1/payments/${payment.payment_id}`)).json().status).toBe('pending');
  });
});

describe.each(backends)('live shops with a card-only acquirer connection on %s', (backend) => {
  let testApp: TestApp;
  let live: ShopWithKey;
  let acquirer: FakeCardAcquirer;
  beforeAll(async () => {
    acquirer = createFakeCardAcquirer();
    const provider = fakeCardProvider(acquirer);
    testApp = await createTestApp(backend, { acquirerProviders: new Map([[provider.name, provider]]) });
    live = await sandboxShop(testApp, 'live');
    await saveConnection(testApp.context, new Map([[provider.name, provider]]), {
      shopId: live.shopId,
      provider: provider.name,
      credentials: { key: 'good' },
    });
  });
  afterAll(() => testApp.close());

  it.each(['sbp', 'sberpay'])(
    'a payment bound to %s is 400 method_unavailable naming the methods that work',
    async (method) => {
      const response = await postPayment(testApp, live.key, { amount: 100, currency: 'RUB', method });
      expect(response.statusCode).toBe(400);
      expect(response.json()).toEqual({
        error: 'method_unavailable',
        message: expect.stringContaining('use one of card'),
        request_id: expect.any(String),
      });
      expect(await paymentCount(testApp, live)).toBe(0);
    },
  );

  it('a payment without a method is created: card, which the connector charges, can take it', async () => {
    const response = await postPayment(testApp, live.key, { amount: 100, currency: 'RUB' });
    expect(response.statusCode, response.body).toBe(201);
    expect(response.json().method).toBeNull();
  });

  it('a payment bound to card is created, and the payer pays it through the live connector', async () => {
    const created = await postPayment(testApp, live.key, { amount: 250.5, currency: 'RUB', method: 'card' });
    expect(created.statusCode).toBe(201);
    const payment = created.json();
    const page = await testApp.app.inject({ method: 'GET', url: `/pay/${payment.order_code}?lang=en` });
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('id="card-form"');
    const submitted = await testApp.app.inject({
      method: 'POST',
      url: `/pay/${payment.order_code}/card`,
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        cookie: String(page.headers['set-cookie']).split(';')[0]!,
      },
      payload: new URLSearchParams({
        csrf: field(page.body, 'csrf')!,
        attempt: field(page.body, 'attempt')!,
        lang: 'en',
        'cc-number': '4111 1111 1111 1111',
        'cc-exp': '12/34',
        'cc-csc': '123',
      }).toString(),
    });
    expect(submitted.statusCode).toBe(303);
    expect([...acquirer.charges.values()]).toEqual([{ paymentId: payment.payment_id, amountKopecks: 25_050n }]);
    expect((await getJson(testApp, live.key, `/v1/payments/${payment.payment_id}`)).json().status).toBe('paid');
  });

  it('a payment with no bound method offers the payer only the methods a connector charges', async () => {
    const payment = (await postPayment(testApp, live.key, { amount: 100, currency: 'RUB' })).json();
    const page = await testApp.app.inject({ method: 'GET', url: `/pay/${payment.order_code}?lang=en` });
    expect(page.statusCode).toBe(200);
    // One method left, so the page opens it directly with no choice step.
    expect(page.body).toContain('id="card-form"');
    expect(page.body).not.toContain('data-method="sbp"');
    expect(page.body).not.toContain('data-method="sberpay"');
  });
});

// GET /v1/payments/{payment_id} and GET /v1/payments: scopes, tenancy, pagination, filters.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backends } from '../support/databases.ts';
import { createTestApp, type TestApp } from '../support/app.ts';
import { getJson, postPayment, sandboxShop, type ShopWithKey } from './payment-test-support.ts';

describe.each(backends)('reading payments on %s', (backend) => {
  let testApp: TestApp;
  let shop: ShopWithKey;

  beforeAll(async () => {
    testApp = await createTestApp(backend);
    shop = await sandboxShop(testApp);
  });
  afterAll(async () => testApp.close());

  it('GET returns the payment exactly as created, to a read-only key too', async () => {
    const created = await postPayment(testApp, shop.key, {
      amount: 42,
      currency: 'RUB',
      method: 'sbp',
      order_id: 'r-1',
    });
    const readKey = await testApp.createKey(shop.shopId, ['read']);
    const response = await getJson(testApp, readKey, `/v1/payments/${created.json().payment_id}`);
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual(created.json());
  });

  it('a key without read or payments scope gets 403', async () => {
    const cryptoKey = await testApp.createKey(shop.shopId, ['crypto']);
    const created = await postPayment(testApp, shop.key, { amount: 42, currency: 'RUB' });
    expect((await getJson(testApp, cryptoKey, `/v1/payments/${created.json().payment_id}`)).statusCode).toBe(403);
  });

  it("another shop's payment is 404 not_found, in GET and in the list", async () => {
    const other = await sandboxShop(testApp);
    const created = await postPayment(testApp, shop.key, { amount: 42, currency: 'RUB', order_id: 'secret' });
    const response = await getJson(testApp, other.key, `/v1/payments/${created.json().payment_id}`);
    expect(response.statusCode).toBe(404);
    expect(response.json().error).toBe('not_found');
    const list = await getJson(testApp, other.key, '/v1/payments?order_id=secret');
    expect(list.json().data).toEqual([]);
  });

  it.each(['not-a-uuid', '00000000-0000-4000-8000-000000000000', "1' or '1'='1"])(
    'payment id %j is 404 not_found',
    async (id) => {
      const response = await getJson(testApp, shop.key, `/v1/payments/${encodeURIComponent(id)}`);
      expect(response.statusCode).toBe(404);
      expect(response.json().error).toBe('not_found');
    },
  );

  it('lists newest first in pages joined by next_cursor, with filters', async () => {
    const own = await sandboxShop(testApp);
    const ids: string[] = [];
    for (let index = 0; index < 5; index++) {
      testApp.clock.advance(1_000);
      ids.push(
        (
          await postPayment(testApp, own.key, {
            amount: 10 + index,
            currency: 'RUB',
            order_id: index % 2 ? 'odd' : 'even',
          })
        ).json().payment_id,
      );
    }
    const first = (await getJson(testApp, own.key, '/v1/payments?limit=2')).json();
    expect(first.data.map((payment: { payment_id: string }) => payment.payment_id)).toEqual([ids[4], ids[3]]);
    const second = (await getJson(testApp, own.key, `/v1/payments?limit=2&cursor=${first.next_cursor}`)).json();
    expect(second.data.map((payment: { payment_id: string }) => payment.payment_id)).toEqual([ids[2], ids[1]]);
    const third = (await getJson(testApp, own.key, `/v1/payments?limit=2&cursor=${second.next_cursor}`)).json();
    expect(third.data.map((payment: { payment_id: string }) => payment.payment_id)).toEqual([ids[0]]);
    expect(third.next_cursor).toBeNull();

    const odd = (await getJson(testApp, own.key, '/v1/payments?order_id=odd')).json();
    expect(odd.data.map((payment: { payment_id: string }) => payment.payment_id)).toEqual([ids[3], ids[1]]);
    const pending = (await getJson(testApp, own.key, '/v1/payments?status=pending')).json();
    expect(pending.data).toHaveLength(5);
    const paid = (await getJson(testApp, own.key, '/v1/payments?status=paid')).json();
    expect(paid.data).toHaveLength(0);
  });

  it.each(['limit=0', 'limit=101', 'status=done', 'cursor=garbage', 'color=red'])(
    'refuses the query %s with 400 invalid_request',
    async (query) => {
      const response = await getJson(testApp, shop.key, `/v1/payments?${query}`);
      expect(response.statusCode).toBe(400);
      expect(response.json().error).toBe('invalid_request');
    },
  );
});

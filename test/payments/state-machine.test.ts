// The payment state machine driven through the sandbox test helpers and the
// expiry worker: guarded transitions, and one outbox event per transition.
import { sql } from 'kysely';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createExpiryWorker } from '../../src/payments/expiry-worker.ts';
import { backends } from '../support/databases.ts';
import { createTestApp, type TestApp } from '../support/app.ts';
import { getJson, postHelper, postPayment, sandboxShop, type ShopWithKey } from './payment-test-support.ts';

const CALLBACK = 'https://merchant.example/hooks/payments';

async function eventsOf(testApp: TestApp, shopId: string) {
  const rows = await testApp.context.db
    .selectFrom('webhook_events')
    .selectAll()
    .where('shop_id', '=', shopId)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
  return rows.map((row) => ({ type: row.type, destination: row.destination_url, payload: JSON.parse(row.payload) }));
}

describe.each(backends)('payment state machine on %s', (backend) => {
  let testApp: TestApp;
  let shop: ShopWithKey;

  beforeAll(async () => {
    testApp = await createTestApp(backend);
  });
  beforeEach(async () => {
    shop = await sandboxShop(testApp);
  });
  afterAll(async () => testApp.close());

  async function create(body: Record<string, unknown> = {}) {
    return (
      await postPayment(testApp, shop.key, { amount: 100, currency: 'RUB', callback_url: CALLBACK, ...body })
    ).json();
  }

  it('pay sets paid and paid_at, keeps method, and emits payment.paid with the full payment to callback_url', async () => {
    const payment = await create({ method: 'sbp' });
    testApp.clock.advance(5_000);
    const response = await postHelper(testApp, shop.key, payment.payment_id, 'pay');
    expect(response.statusCode).toBe(200);
    const paid = response.json();
    expect(paid).toMatchObject({ status: 'paid', method: 'sbp', paid_at: testApp.clock.now().toISOString() });
    const fetched = (await getJson(testApp, shop.key, `/v1/payments/${payment.payment_id}`)).json();
    expect(fetched).toEqual(paid);
    const events = await eventsOf(testApp, shop.shopId);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ type: 'payment.paid', destination: CALLBACK });
    expect(events[0]!.payload).toMatchObject({ type: 'payment.paid', data: paid });
    expect(events[0]!.payload.id).toMatch(/^evt_/);
  });

  it('a payment is paid at most once: a second pay is 409 invalid_state and emits nothing more', async () => {
    const payment = await create();
    await postHelper(testApp, shop.key, payment.payment_id, 'pay');
    const again = await postHelper(testApp, shop.key, payment.payment_id, 'pay');
    expect(again.statusCode).toBe(409);
    expect(again.json().error).toBe('invalid_state');
    expect(await eventsOf(testApp, shop.shopId)).toHaveLength(1);
  });

  it('fail moves pending to failed and emits payment.failed; a failed payment cannot be paid', async () => {
    const payment = await create();
    const failed = await postHelper(testApp, shop.key, payment.payment_id, 'fail');
    expect(failed.json()).toMatchObject({ status: 'failed', paid_at: null });
    expect((await postHelper(testApp, shop.key, payment.payment_id, 'pay')).json().error).toBe('invalid_state');
    expect((await eventsOf(testApp, shop.shopId)).map((event) => event.type)).toEqual(['payment.failed']);
  });

  it('expire moves pending to expired; paying an expired payment and expiring a paid one are 409 invalid_state', async () => {
    const first = await create();
    expect((await postHelper(testApp, shop.key, first.payment_id, 'expire')).json().status).toBe('expired');
    const payExpired = await postHelper(testApp, shop.key, first.payment_id, 'pay');
    expect(payExpired.statusCode).toBe(409);
    expect(payExpired.json().error).toBe('invalid_state');
    const second = await create();
    await postHelper(testApp, shop.key, second.payment_id, 'pay');
    const expirePaid = await postHelper(testApp, shop.key, second.payment_id, 'expire');
    expect(expirePaid.statusCode).toBe(409);
    expect(expirePaid.json().error).toBe('invalid_state');
  });

  it('a payment is never paid at or after expires_at, even before the expiry worker ran', async () => {
    const payment = await create();
    testApp.clock.advance(3_600_000);
    const response = await postHelper(testApp, shop.key, payment.payment_id, 'pay');
    expect(response.statusCode).toBe(409);
    expect(response.json().error).toBe('invalid_state');
  });

  it('no event is written for a payment without callback_url', async () => {
    const payment = (await postPayment(testApp, shop.key, { amount: 100, currency: 'RUB' })).json();
    await postHelper(testApp, shop.key, payment.payment_id, 'pay');
    expect(await eventsOf(testApp, shop.shopId)).toEqual([]);
  });

  it('test helpers are 404 on a live shop, for another shop, and for an unknown id', async () => {
    // A live shop's payment (live payments need a live acquirer connector, which tests lack:
    // the payment is made while the shop is a sandbox one, then the shop goes live).
    const live = await sandboxShop(testApp);
    const livePayment = (await postPayment(testApp, live.key, { amount: 100, currency: 'RUB' })).json();
    await sql`update shops set mode = 'live' where id = ${live.shopId}`.execute(testApp.context.db);
    const onLive = await postHelper(testApp, live.key, livePayment.payment_id, 'pay');
    expect(onLive.statusCode).toBe(404);
    expect(onLive.json().error).toBe('not_found');
    const mine = await create();
    const other = await sandboxShop(testApp);
    expect((await postHelper(testApp, other.key, mine.payment_id, 'pay')).statusCode).toBe(404);
    expect((await postHelper(testApp, shop.key, 'nope', 'pay')).statusCode).toBe(404);
    expect((await getJson(testApp, shop.key, `/v1/payments/${mine.payment_id}`)).json().status).toBe('pending');
  });

  it('the expiry worker expires due payments only, each once, and emits payment.expired with the full payment', async () => {
    const worker = createExpiryWorker(testApp.context);
    const due = await create({ method: 'card', order_id: 'exp-1' });
    testApp.clock.advance(30 * 60_000);
    const later = await create();
    testApp.clock.advance(30 * 60_000 - 1);
    await worker.runOnce();
    expect((await getJson(testApp, shop.key, `/v1/payments/${due.payment_id}`)).json().status).toBe('pending');
    testApp.clock.advance(1);
    await worker.runOnce();
    const expired = (await getJson(testApp, shop.key, `/v1/payments/${due.payment_id}`)).json();
    expect(expired).toMatchObject({ status: 'expired', method: 'card', order_id: 'exp-1', paid_at: null });
    expect((await getJson(testApp, shop.key, `/v1/payments/${later.payment_id}`)).json().status).toBe('pending');
    await worker.runOnce();
    const events = await eventsOf(testApp, shop.shopId);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ type: 'payment.expired', destination: CALLBACK, payload: { data: expired } });
  });
});

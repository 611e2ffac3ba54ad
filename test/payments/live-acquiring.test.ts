// A live shop charging through its own acquirer connection, end to end over
// loopback HTTP: the payer is sent to the acquirer's page, the attempt remembers
// the acquirer's id, and the outcome arrives by a notification (checked and
// confirmed by the connector) or by the reconciliation worker's look-up.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  listConnections,
  removeConnection,
  saveConnection,
} from '../../src/payments/connectors/acquirer-connections.ts';
import { createAcquirerDailyReconciliation } from '../../src/payments/acquirer-daily-reconciliation.ts';
import { createReconciliationWorker } from '../../src/payments/reconciliation-worker.ts';
import { backends } from '../support/databases.ts';
import { createTestApp, type TestApp } from '../support/app.ts';
import { loopbackProvider, startLoopbackAcquirer, type LoopbackAcquirer } from './loopback-acquirer.ts';
import { getJson, postPayment, sandboxShop, type ShopWithKey } from './payment-test-support.ts';

const providers = new Map([[loopbackProvider.name, loopbackProvider]]);
const SECRET = 'notify-secret-1';

function field(html: string, name: string): string | undefined {
  return new RegExp(`name="${name}" value="([^"]*)"`).exec(html)?.[1];
}

describe.each(backends)('live acquiring through a shop connection on %s', (backend) => {
  let testApp: TestApp;
  let acquirer: LoopbackAcquirer;
  let live: ShopWithKey;
  let connectionId: string;

  beforeAll(async () => {
    acquirer = await startLoopbackAcquirer();
    testApp = await createTestApp(backend, { acquirerProviders: providers });
    live = await sandboxShop(testApp, 'live');
    const saved = await saveConnection(testApp.context, providers, {
      shopId: live.shopId,
      provider: 'loopback',
      apiUrl: acquirer.url,
      credentials: { api_key: acquirer.apiKey, notify_secret: SECRET },
    });
    connectionId = saved.id;
  });
  afterAll(async () => {
    await testApp.close();
    await acquirer.close();
  });

  /** Creates a card payment and submits the page's card form (crafted with card fields, which are never read). */
  async function payAtAcquirer(shop: ShopWithKey = live) {
    const payment = (await postPayment(testApp, shop.key, { amount: 120, currency: 'RUB', method: 'card' })).json();
    const page = await testApp.app.inject({ method: 'GET', url: `/pay/${payment.order_code}?lang=en` });
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
    const attempt = await testApp.context.db
      .selectFrom('payment_attempts')
      .selectAll()
      .where('payment_id', '=', payment.payment_id)
      .executeTakeFirstOrThrow();
    return { payment, page, submitted, attempt };
  }

  function notify(chargeId: string, secret: string, connection = connectionId) {
    return testApp.app.inject({
      method: 'POST',
      url: `/acquirers/loopback/notifications/${connection}`,
      headers: { 'content-type': 'application/json', 'x-loopback-secret': secret },
      payload: JSON.stringify({ charge_id: chargeId }),
    });
  }

  /** The attempt's outcome and its payment's state, to see that a repeat changes neither. */
  async function attemptAndPayment(attemptId: string) {
    return testApp.context.db
      .selectFrom('payment_attempts')
      .innerJoin('payments', 'payments.id', 'payment_attempts.payment_id')
      .select([
        'payment_attempts.status',
        'payment_attempts.applied_as',
        'payment_attempts.updated_at',
        'payments.status as payment_status',
        'payments.paid_at',
      ])
      .where('payment_attempts.id', '=', attemptId)
      .executeTakeFirstOrThrow();
  }

  it('credentials the acquirer refuses are not saved, with a clear message', async () => {
    await expect(
      saveConnection(testApp.context, providers, {
        shopId: live.shopId,
        provider: 'loopback',
        apiUrl: acquirer.url,
        credentials: { api_key: 'wrong', notify_secret: SECRET },
      }),
    ).rejects.toThrow('loopback refused the credentials: the acquirer does not know this api_key');
    expect((await listConnections(testApp.context, live.shopId)).map((view) => view.id)).toEqual([connectionId]);
  });

  it('the payer is sent to the acquirer page; the attempt waits there with the acquirer id', async () => {
    const { payment, page, submitted, attempt } = await payAtAcquirer();
    // Card data never reaches Paygate in live mode: the page has a button, not card fields.
    expect(page.body).toContain('id="card-form"');
    expect(page.body).not.toContain('cc-number');
    expect(submitted.statusCode).toBe(303);
    // Through our own page: a form's redirect may not leave our origin (CSP form-action).
    expect(submitted.headers.location).toBe(`/pay/${payment.order_code}?lang=en&to_bank=1`);
    const acquirerPage = `${acquirer.url}/page/${attempt.provider_reference}`;
    expect(attempt).toMatchObject({
      status: 'requires_action',
      connector: `loopback:${connectionId}`,
      payer_action_kind: 'redirect',
      payer_action_url: acquirerPage,
    });
    const onward = await testApp.app.inject({ method: 'GET', url: submitted.headers.location! });
    expect(onward.body).toContain(`id="to-bank" href="${acquirerPage}"`);
    expect(onward.body).toContain(`location.replace("${acquirerPage}")`);
    expect(onward.body).toContain(`<noscript><meta http-equiv="refresh" content="0;url=${acquirerPage}"></noscript>`);
    const charge = acquirer.charges.get(attempt.provider_reference!)!;
    expect(charge.amountKopecks).toBe(12_000n);
    expect(charge.returnUrl).toBe(`${testApp.context.config.publicUrl}/pay/${payment.order_code}/return`);
    expect((await getJson(testApp, live.key, `/v1/payments/${payment.payment_id}`)).json().status).toBe('pending');
  });

  it('a confirmed notification pays the payment once; a repeat changes nothing', async () => {
    const { attempt } = await payAtAcquirer();
    acquirer.settle(attempt.provider_reference!, 'succeeded');
    const first = await notify(attempt.provider_reference!, SECRET);
    expect([first.statusCode, first.body]).toEqual([200, 'OK']);
    const paid = await attemptAndPayment(attempt.id);
    expect(paid).toMatchObject({ status: 'succeeded', applied_as: 'payment', payment_status: 'paid' });
    testApp.clock.advance(1_000);
    const second = await notify(attempt.provider_reference!, SECRET);
    expect([second.statusCode, second.body]).toEqual([200, 'OK']);
    expect(await attemptAndPayment(attempt.id)).toEqual(paid);
  });

  it('a forged notification (wrong secret) changes nothing, even for a charge that succeeded', async () => {
    const { payment, attempt } = await payAtAcquirer();
    acquirer.settle(attempt.provider_reference!, 'succeeded');
    const forged = await notify(attempt.provider_reference!, 'guess');
    expect(forged.statusCode).toBe(401);
    const after = await testApp.context.db
      .selectFrom('payment_attempts')
      .select('status')
      .where('id', '=', attempt.id)
      .executeTakeFirstOrThrow();
    expect(after.status).toBe('requires_action');
    expect((await getJson(testApp, live.key, `/v1/payments/${payment.payment_id}`)).json().status).toBe('pending');
  });

  it('a notification for an unknown connection or another provider is 404', async () => {
    expect((await notify('ch_1', SECRET, 'acq_nope')).statusCode).toBe(404);
    const other = await testApp.app.inject({
      method: 'POST',
      url: `/acquirers/yookassa/notifications/${connectionId}`,
      headers: { 'content-type': 'application/json' },
      payload: '{}',
    });
    expect(other.statusCode).toBe(404);
  });

  it('without a notification, the reconciliation worker asks on schedule and applies the outcome', async () => {
    const { payment, attempt } = await payAtAcquirer();
    const reconciler = createReconciliationWorker({ ...testApp.context, acquirerProviders: providers });
    testApp.clock.advance(61_000);
    const statusNow = async () =>
      await testApp.context.db
        .selectFrom('payment_attempts')
        .select(['status', 'lookups'])
        .where('id', '=', attempt.id)
        .executeTakeFirstOrThrow();
    // Still at the acquirer's page: asked, not resolved, asked again later.
    await reconciler.runOnce();
    expect(await statusNow()).toEqual({ status: 'requires_action', lookups: 1 });
    acquirer.settle(attempt.provider_reference!, 'succeeded');
    testApp.clock.advance(10 * 60_000);
    await reconciler.runOnce();
    expect((await statusNow()).status).toBe('succeeded');
    expect((await getJson(testApp, live.key, `/v1/payments/${payment.payment_id}`)).json().status).toBe('paid');
  });

  it('a removed connection routes no new payment, but its charges still end by notification', async () => {
    const { payment, attempt } = await payAtAcquirer();
    await removeConnection(testApp.context, live.shopId, connectionId);
    const refused = await postPayment(testApp, live.key, { amount: 100, currency: 'RUB', method: 'card' });
    expect(refused.json()).toMatchObject({
      error: 'method_unavailable',
      message: expect.stringContaining('no live acquirer connector is configured yet'),
    });
    acquirer.settle(attempt.provider_reference!, 'succeeded');
    expect((await notify(attempt.provider_reference!, SECRET)).statusCode).toBe(200);
    expect((await getJson(testApp, live.key, `/v1/payments/${payment.payment_id}`)).json().status).toBe('paid');
  });

  it('back from the acquirer, the return page asks the acquirer once and never trusts the query string', async () => {
    // A shop of its own: the first shop's connection is removed by the test before.
    const shop = await sandboxShop(testApp, 'live');
    await saveConnection(testApp.context, providers, {
      shopId: shop.shopId,
      provider: 'loopback',
      apiUrl: acquirer.url,
      credentials: { api_key: acquirer.apiKey, notify_secret: SECRET },
    });
    const { payment, attempt } = await payAtAcquirer(shop);
    const back = () =>
      testApp.app.inject({ method: 'GET', url: `/pay/${payment.order_code}/return?status=succeeded&paid=1&lang=en` });
    const first = await back();
    expect(first.statusCode).toBe(303);
    expect(first.headers.location).toBe(`/pay/${payment.order_code}?lang=en&returned=1`);
    // The query said "succeeded"; the acquirer says the payer is still on its page.
    expect((await getJson(testApp, shop.key, `/v1/payments/${payment.payment_id}`)).json().status).toBe('pending');
    acquirer.settle(attempt.provider_reference!, 'succeeded');
    // Asked at most every 10 s per attempt: at once again, nothing is asked.
    await back();
    expect((await getJson(testApp, shop.key, `/v1/payments/${payment.payment_id}`)).json().status).toBe('pending');
    testApp.clock.advance(10_000);
    await back();
    expect((await getJson(testApp, shop.key, `/v1/payments/${payment.payment_id}`)).json().status).toBe('paid');
  });

  it('SBP in a live shop: the page asks the acquirer for its QR, shows it with the bank-app link, and ends by notification', async () => {
    const shop = await sandboxShop(testApp, 'live');
    await saveConnection(testApp.context, providers, {
      shopId: shop.shopId,
      provider: 'loopback',
      apiUrl: acquirer.url,
      credentials: { api_key: acquirer.apiKey, notify_secret: SECRET },
      methods: ['sbp'],
    });
    const payment = (await postPayment(testApp, shop.key, { amount: 75, currency: 'RUB', method: 'sbp' })).json();
    const before = await testApp.app.inject({ method: 'GET', url: `/pay/${payment.order_code}?lang=en` });
    expect(before.body).toContain(`action="/pay/${payment.order_code}/qr"`);
    expect(before.body).not.toContain('<svg');
    const cookie = String(before.headers['set-cookie']).split(';')[0]!;
    const started = await testApp.app.inject({
      method: 'POST',
      url: `/pay/${payment.order_code}/qr`,
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie },
      payload: new URLSearchParams({
        csrf: field(before.body, 'csrf')!,
        attempt: field(before.body, 'attempt')!,
        method: 'sbp',
        lang: 'en',
      }).toString(),
    });
    expect(started.statusCode).toBe(303);
    const attempt = await testApp.context.db
      .selectFrom('payment_attempts')
      .selectAll()
      .where('payment_id', '=', payment.payment_id)
      .executeTakeFirstOrThrow();
    expect(attempt).toMatchObject({ status: 'requires_action', payer_action_kind: 'qr' });
    const waiting = await testApp.app.inject({
      method: 'GET',
      url: `/pay/${payment.order_code}?lang=en`,
      headers: { cookie },
    });
    expect(waiting.body).toContain('<svg');
    expect(waiting.body).toContain(`href="bank://pay/${attempt.provider_reference}"`);
    acquirer.settle(attempt.provider_reference!, 'succeeded');
    const connectionId = attempt.connector.split(':')[1]!;
    expect((await notify(attempt.provider_reference!, SECRET, connectionId)).statusCode).toBe(200);
    expect((await getJson(testApp, shop.key, `/v1/payments/${payment.payment_id}`)).json().status).toBe('paid');
  });

  it("the daily comparison counts yesterday's captures we never applied, once a day", async () => {
    const other = await startLoopbackAcquirer();
    try {
      const shop = await sandboxShop(testApp, 'live');
      const connection = await saveConnection(testApp.context, providers, {
        shopId: shop.shopId,
        provider: 'loopback',
        apiUrl: other.url,
        credentials: { api_key: other.apiKey, notify_secret: SECRET },
      });
      const applied = await payAtAcquirer(shop);
      other.settle(applied.attempt.provider_reference!, 'succeeded');
      expect((await notify(applied.attempt.provider_reference!, SECRET, connection.id)).statusCode).toBe(200);
      const missed = await payAtAcquirer(shop);
      other.settle(missed.attempt.provider_reference!, 'succeeded');
      testApp.clock.advance(24 * 60 * 60_000);
      const daily = createAcquirerDailyReconciliation({ ...testApp.context, acquirerProviders: providers });
      expect(await daily.runOnce()).toBeGreaterThanOrEqual(1);
      const metric = await testApp.context.metrics
        .getSingleMetric('paygate_acquirer_reconciliation_differences')!
        .get();
      const ofConnection = Object.fromEntries(
        metric.values
          .filter((value) => value.labels.connection === connection.id)
          .map((value) => [value.labels.kind, value.value]),
      );
      expect(ofConnection).toEqual({ missing_success: 1, unconfirmed_success: 0, amount_mismatch: 0 });
      // Compared once for that day: the next pass leaves it alone.
      expect(await daily.runOnce()).toBe(0);
    } finally {
      await other.close();
    }
  });
});

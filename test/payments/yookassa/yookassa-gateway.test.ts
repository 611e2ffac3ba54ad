// A live shop charging through a YooKassa connection, end to end: the gateway
// (real database, real routes) against the YooKassa simulator over loopback.
// The payer is sent to YooKassa's confirmation page; the outcome arrives by a
// notification on our route (confirmed by the API before anything changes) or
// by the reconciliation worker; a merchant's refund goes to YooKassa and its
// refund.succeeded notification is applied to it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AcquirerProvider } from '../../../src/payments/connectors/acquirer-provider.ts';
import { saveConnection } from '../../../src/payments/connectors/acquirer-connections.ts';
import { yookassaProvider } from '../../../src/payments/connectors/yookassa/yookassa-provider.ts';
import {
  SIMULATOR_SHOP,
  startYooKassaSimulator,
  type YooKassaSimulator,
} from '../../../src/payments/connectors/yookassa/simulator/index.ts';
import { createReconciliationWorker } from '../../../src/payments/reconciliation-worker.ts';
import { createTestApp, type TestApp } from '../../support/app.ts';
import { backends } from '../../support/databases.ts';
import { eventually } from '../../support/eventually.ts';
import { createDeliveryWorker } from '../../../src/webhooks/delivery-worker.ts';
import { startReceiver, type Receiver } from '../../webhooks/receiver.ts';
import { acquirerPageOf, getJson, postPayment, sandboxShop, type ShopWithKey } from '../payment-test-support.ts';

// Notifications reach the route from loopback here; production uses YooKassa's published networks.
const loopbackYooKassa: AcquirerProvider = {
  ...yookassaProvider,
  connect: (connection, deps) =>
    yookassaProvider.connect(connection, { ...deps, notificationSources: ['127.0.0.1/32', '::1/128'] }),
};
const providers = new Map([[loopbackYooKassa.name, loopbackYooKassa]]);

function field(html: string, name: string): string | undefined {
  return new RegExp(`name="${name}" value="([^"]*)"`).exec(html)?.[1];
}

describe.each(backends)('a live shop charging through YooKassa on %s', (backend) => {
  let testApp: TestApp;
  let simulator: YooKassaSimulator;
  let live: ShopWithKey;
  let connectionId: string;
  let receiver: Receiver;

  beforeAll(async () => {
    simulator = await startYooKassaSimulator({ port: 0, notify: false });
    receiver = await startReceiver();
    testApp = await createTestApp(backend, { acquirerProviders: providers });
    live = await sandboxShop(testApp, 'live');
    const saved = await saveConnection(testApp.context, providers, {
      shopId: live.shopId,
      provider: 'yookassa',
      apiUrl: simulator.url,
      credentials: { shop_id: SIMULATOR_SHOP.shopId, secret_key: SIMULATOR_SHOP.secretKey },
    });
    connectionId = saved.id;
  });
  afterAll(async () => {
    await testApp.close();
    await simulator.close();
    await receiver.close();
  });

  async function payAtYooKassa() {
    const payment = (
      await postPayment(testApp, live.key, {
        amount: 120.5,
        currency: 'RUB',
        method: 'card',
        callback_url: receiver.url,
      })
    ).json();
    return { payment, ...(await submitPage(payment, 'card')) };
  }

  async function eventTypes(paymentId: string): Promise<string[]> {
    const rows = await testApp.context.db
      .selectFrom('webhook_events')
      .select('type')
      .where('payload', 'like', `%${paymentId}%`)
      .orderBy('created_at')
      .orderBy('id')
      .execute();
    return rows.map((row) => row.type);
  }

  /** Every webhook due now goes out to the receiver; returns the types it received about the payment. */
  async function deliveredEvents(paymentId: string): Promise<string[]> {
    const worker = createDeliveryWorker(testApp.context);
    try {
      await worker.drain();
    } finally {
      await worker.stop();
    }
    return receiver.requests
      .map((request) => JSON.parse(request.body) as { type: string; data: { payment_id: string } })
      .filter((event) => event.data.payment_id === paymentId)
      .map((event) => event.type);
  }

  /** Submits the page's form of `method` (live: a button, no card fields) and reads the attempt it made. */
  async function submitPage(payment: { order_code: string; payment_id: string }, method: 'card' | 'sbp') {
    const page = await testApp.app.inject({ method: 'GET', url: `/pay/${payment.order_code}?lang=en` });
    const submitted = await testApp.app.inject({
      method: 'POST',
      url: `/pay/${payment.order_code}/${method === 'card' ? 'card' : 'qr'}`,
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        cookie: String(page.headers['set-cookie']).split(';')[0]!,
      },
      payload: new URLSearchParams({
        csrf: field(page.body, 'csrf')!,
        attempt: field(page.body, 'attempt')!,
        lang: 'en',
        ...(method === 'card' ? {} : { method }),
      }).toString(),
    });
    const attempt = await testApp.context.db
      .selectFrom('payment_attempts')
      .selectAll()
      .where('payment_id', '=', payment.payment_id)
      .executeTakeFirstOrThrow();
    // A card payment leaves through our own `to_bank` step (CSP form-action 'self'), which links to YooKassa.
    const location = String(submitted.headers.location ?? '');
    const acquirerUrl = location.includes('to_bank=1')
      ? acquirerPageOf((await testApp.app.inject({ method: 'GET', url: location })).body)
      : location;
    return { submitted, attempt, acquirerUrl };
  }

  function notify(event: string, id: string, remoteAddress = '127.0.0.1') {
    return testApp.app.inject({
      method: 'POST',
      remoteAddress,
      url: `/acquirers/yookassa/notifications/${connectionId}`,
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({ type: 'notification', event, object: { id, status: event.split('.')[1] } }),
    });
  }

  async function state(attemptId: string) {
    return testApp.context.db
      .selectFrom('payment_attempts')
      .innerJoin('payments', 'payments.id', 'payment_attempts.payment_id')
      .select(['payment_attempts.status', 'payment_attempts.decline_code', 'payments.status as payment_status'])
      .where('payment_attempts.id', '=', attemptId)
      .executeTakeFirstOrThrow();
  }

  async function payer(url: string, action: string): Promise<void> {
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ action }).toString(),
      redirect: 'manual',
    });
    expect(response.status).toBe(303);
  }

  it('sends the payer to YooKassa with the exact amount; a confirmed notification pays once, a repeat changes nothing', async () => {
    const { payment, submitted, attempt, acquirerUrl } = await payAtYooKassa();
    expect(submitted.statusCode).toBe(303);
    const yookassaPayment = simulator.payments.get(attempt.provider_reference!)!;
    expect(acquirerUrl).toContain(`orderId=${yookassaPayment.id}`);
    expect(yookassaPayment).toMatchObject({
      amountKopecks: BigInt(Math.round(payment.amount_total * 100)),
      returnUrl: `${testApp.context.config.publicUrl}/pay/${payment.order_code}/return`,
      metadata: { paygate_payment_id: payment.payment_id, paygate_charge_key: attempt.charge_key },
    });
    expect(attempt).toMatchObject({ status: 'requires_action', connector: `yookassa:${connectionId}` });

    // Before the payer pays, a notification claiming success is not believed.
    const early = await notify('payment.succeeded', yookassaPayment.id);
    expect(early.statusCode).not.toBe(200);
    expect(await state(attempt.id)).toMatchObject({ status: 'requires_action', payment_status: 'pending' });

    await payer(acquirerUrl, 'pay');
    const first = await notify('payment.succeeded', yookassaPayment.id);
    expect(first.statusCode).toBe(200);
    const paid = await state(attempt.id);
    expect(paid).toMatchObject({ status: 'succeeded', payment_status: 'paid' });
    testApp.clock.advance(1_000);
    expect((await notify('payment.succeeded', yookassaPayment.id)).statusCode).toBe(200);
    expect(await state(attempt.id)).toEqual(paid);
    expect(await eventTypes(payment.payment_id)).toEqual(['payment.paid']);
    expect(await deliveredEvents(payment.payment_id)).toEqual(['payment.paid']);
  });

  it('duplicated notifications and a late payment.canceled after payment.succeeded change the payment once, one payment.paid', async () => {
    // This case needs YooKassa's own notifications: a second shop whose connection goes to a notifying simulator.
    const notifying = await startYooKassaSimulator({ port: 0, notificationRetryDelaysMs: [10, 20, 50] });
    try {
      await testApp.app.listen({ port: 0, host: '127.0.0.1' });
      const { port } = testApp.app.server.address() as { port: number };
      const shop = await sandboxShop(testApp, 'live');
      const saved = await saveConnection(testApp.context, providers, {
        shopId: shop.shopId,
        provider: 'yookassa',
        apiUrl: notifying.url,
        credentials: { shop_id: SIMULATOR_SHOP.shopId, secret_key: SIMULATOR_SHOP.secretKey },
      });
      notifying.setNotificationUrl(
        SIMULATOR_SHOP.shopId,
        `http://127.0.0.1:${port}/acquirers/yookassa/notifications/${saved.id}`,
      );
      const payment = (
        await postPayment(testApp, shop.key, {
          amount: 77,
          currency: 'RUB',
          method: 'card',
          callback_url: receiver.url,
        })
      ).json();
      const { attempt, acquirerUrl } = await submitPage(payment, 'card');
      // YooKassa sends one notification per change, so `reverse` has nothing to reorder alone;
      // the out-of-order case is the stale payment.canceled below.
      notifying.faults.notifications.duplicate = true;
      notifying.faults.notifications.reverse = true;
      await payer(acquirerUrl, 'pay');
      const sent = await eventually(
        () =>
          notifying.deliveries.filter((delivery) =>
            JSON.stringify(delivery.body).includes(attempt.provider_reference!),
          ),
        (deliveries) => deliveries.length === 2 && deliveries.every((delivery) => delivery.delivered),
      );
      expect(sent.map((delivery) => delivery.body['event'])).toEqual(['payment.succeeded', 'payment.succeeded']);
      const paid = await state(attempt.id);
      expect(paid).toMatchObject({ status: 'succeeded', payment_status: 'paid' });

      // A payment.canceled arriving after payment.succeeded: the API still says succeeded; nothing moves.
      testApp.clock.advance(1_000);
      const late = await testApp.app.inject({
        method: 'POST',
        remoteAddress: '127.0.0.1',
        url: `/acquirers/yookassa/notifications/${saved.id}`,
        headers: { 'content-type': 'application/json' },
        payload: JSON.stringify({
          type: 'notification',
          event: 'payment.canceled',
          object: { id: attempt.provider_reference, status: 'canceled' },
        }),
      });
      expect(late.statusCode).toBe(200);
      expect(await state(attempt.id)).toEqual(paid);
      const credits = await testApp.context.db
        .selectFrom('ledger_transfers')
        .select(['type', 'amount'])
        .where('reference_id', '=', payment.payment_id)
        .execute();
      expect(credits).toEqual([{ type: 'payment', amount: 7_700n }]);
      expect(await eventTypes(payment.payment_id)).toEqual(['payment.paid']);
      expect(await deliveredEvents(payment.payment_id)).toEqual(['payment.paid']);
    } finally {
      await notifying.close();
    }
  });

  it('a declined card ends the attempt with YooKassa’s reason and leaves the payment open for another try', async () => {
    const { attempt, acquirerUrl } = await payAtYooKassa();
    await payer(acquirerUrl, 'decline_funds');
    expect((await notify('payment.canceled', attempt.provider_reference!)).statusCode).toBe(200);
    expect(await state(attempt.id)).toEqual({
      status: 'declined',
      decline_code: 'insufficient_funds',
      payment_status: 'pending',
    });
  });

  it('without a notification, the reconciliation worker asks YooKassa and applies the outcome', async () => {
    const { attempt, acquirerUrl } = await payAtYooKassa();
    await payer(acquirerUrl, 'pay');
    const reconciler = createReconciliationWorker({ ...testApp.context, acquirerProviders: providers });
    testApp.clock.advance(61_000);
    await reconciler.runOnce();
    expect(await state(attempt.id)).toMatchObject({ status: 'succeeded', payment_status: 'paid' });
  });

  it('a merchant’s partial refund goes to YooKassa under our refund key, and its refund.succeeded notification is confirmed and accepted', async () => {
    const { payment, attempt, acquirerUrl } = await payAtYooKassa();
    await payer(acquirerUrl, 'pay');
    expect((await notify('payment.succeeded', attempt.provider_reference!)).statusCode).toBe(200);
    const created = await testApp.app.inject({
      method: 'POST',
      url: `/v1/payments/${payment.payment_id}/refunds`,
      headers: {
        authorization: `Bearer ${live.key}`,
        'content-type': 'application/json',
        'idempotency-key': `refund-${attempt.id}`,
      },
      payload: JSON.stringify({ amount: 20.5 }),
    });
    expect(created.statusCode, created.body).toBe(201);
    const refundId = created.json().refund_id as string;
    const atYooKassa = [...simulator.refunds.values()].find(
      (refund) => refund.metadata?.['paygate_refund_key'] === refundId,
    );
    expect(atYooKassa).toMatchObject({ paymentId: attempt.provider_reference, amountKopecks: 2_050n });
    expect((await notify('refund.succeeded', atYooKassa!.id)).statusCode).toBe(200);
    const refund = await getJson(testApp, live.key, `/v1/payments/${payment.payment_id}/refunds/${refundId}`);
    expect(refund.json()).toMatchObject({ refund_id: refundId, status: 'succeeded', amount: 20.5 });
  });

  it('SBP: the page shows YooKassa’s QR link; paid in the bank app, the confirmed notification pays', async () => {
    const payment = (await postPayment(testApp, live.key, { amount: 99, currency: 'RUB', method: 'sbp' })).json();
    const { attempt } = await submitPage(payment, 'sbp');
    expect(attempt).toMatchObject({ status: 'requires_action', payer_action_kind: 'qr' });
    expect(simulator.payments.get(attempt.provider_reference!)).toMatchObject({ methodType: 'sbp' });
    const bankApp = attempt.payer_action_qr!.split('?')[0]!;
    const paid = await fetch(bankApp, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'action=pay',
    });
    expect(paid.status).toBe(200);
    expect((await notify('payment.succeeded', attempt.provider_reference!)).statusCode).toBe(200);
    expect(await state(attempt.id)).toMatchObject({ status: 'succeeded', payment_status: 'paid' });
  });

  it('a notification from outside YooKassa’s ranges is refused and changes nothing, even for a paid charge', async () => {
    const { attempt, acquirerUrl } = await payAtYooKassa();
    await payer(acquirerUrl, 'pay');
    const foreign = await notify('payment.succeeded', attempt.provider_reference!, '203.0.113.7');
    expect(foreign.statusCode).toBe(403);
    expect(await state(attempt.id)).toMatchObject({ status: 'requires_action', payment_status: 'pending' });
  });

  it('a partial then a full refund reach YooKassa, and a third is refused', async () => {
    const { payment, attempt, acquirerUrl } = await payAtYooKassa();
    await payer(acquirerUrl, 'pay');
    expect((await notify('payment.succeeded', attempt.provider_reference!)).statusCode).toBe(200);
    const refund = (amount: number, key: string) =>
      testApp.app.inject({
        method: 'POST',
        url: `/v1/payments/${payment.payment_id}/refunds`,
        headers: { authorization: `Bearer ${live.key}`, 'content-type': 'application/json', 'idempotency-key': key },
        payload: JSON.stringify({ amount }),
      });
    const partial = await refund(20, `partial-${attempt.id}`);
    expect(partial.statusCode, partial.body).toBe(201);
    const rest = await refund(payment.amount_total - 20, `rest-${attempt.id}`);
    expect(rest.statusCode, rest.body).toBe(201);
    expect(simulator.payments.get(attempt.provider_reference!)).toMatchObject({
      refundedKopecks: BigInt(Math.round(payment.amount_total * 100)),
    });
    const listed = await getJson(testApp, live.key, `/v1/payments/${payment.payment_id}/refunds`);
    expect(listed.json().data.map((entry: { status: string }) => entry.status)).toEqual(['succeeded', 'succeeded']);
    const third = await refund(1, `third-${attempt.id}`);
    expect(third.statusCode).toBe(409);
    expect(third.json()).toMatchObject({ error: 'already_refunded' });
    // YooKassa was not asked for a third refund.
    expect(
      [...simulator.refunds.values()].filter((entry) => entry.paymentId === attempt.provider_reference),
    ).toHaveLength(2);
  });
});

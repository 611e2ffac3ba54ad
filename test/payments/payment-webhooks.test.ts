// Payment events reach the merchant's receiver signed: payment.expired from the
// expiry worker, payment.paid from the test helper, through the real webhook worker.
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createExpiryWorker } from '../../src/payments/expiry-worker.ts';
import { createDeliveryWorker } from '../../src/webhooks/delivery-worker.ts';
import { backends } from '../support/databases.ts';
import { createTestApp, type TestApp } from '../support/app.ts';
import { startReceiver, type Receiver } from '../webhooks/receiver.ts';
import { postHelper, postPayment } from './payment-test-support.ts';

describe.each(backends)('payment webhooks on %s', (backend) => {
  let testApp: TestApp;
  let receiver: Receiver;

  beforeAll(async () => {
    testApp = await createTestApp(backend);
    receiver = await startReceiver();
  });
  afterAll(async () => {
    await receiver.close();
    await testApp.close();
  });

  it('expiry sends a signed payment.expired with the full payment to callback_url', async () => {
    // Signatures carry the clock's time and the verifier checks it against real time:
    // create an hour in the past, so the expiry happens "now".
    testApp.clock.set(new Date(Date.now() - 3_600_000));
    const merchant = await testApp.createMerchant();
    const created = (
      await postPayment(testApp, merchant.api_key, {
        amount: 99.99,
        currency: 'RUB',
        method: 'sbp',
        order_id: 'E-1',
        callback_url: receiver.url,
      })
    ).json();
    const noCallback = (await postPayment(testApp, merchant.api_key, { amount: 5, currency: 'RUB' })).json();
    testApp.clock.set(new Date());
    await createExpiryWorker(testApp.context).runOnce();
    await createDeliveryWorker(testApp.context, { concurrency: 2 }).drain();

    const received = receiver.requests.filter((request) => request.body.includes(created.payment_id));
    expect(received).toHaveLength(1);
    const event = new Webhook(merchant.webhook_secret).verify(
      received[0]!.body,
      received[0]!.headers as Record<string, string>,
    ) as {
      type: string;
      data: Record<string, unknown>;
    };
    expect(event.type).toBe('payment.expired');
    expect(event.data).toEqual({ ...created, status: 'expired' });
    expect(receiver.requests.some((request) => request.body.includes(noCallback.payment_id))).toBe(false);
  });

  it('the pay test helper sends a signed payment.paid like the acquirer would', async () => {
    testApp.clock.set(new Date());
    const merchant = await testApp.createMerchant();
    const created = (
      await postPayment(testApp, merchant.api_key, { amount: 10, currency: 'RUB', callback_url: receiver.url })
    ).json();
    const paid = (await postHelper(testApp, merchant.api_key, created.payment_id, 'pay')).json();
    await createDeliveryWorker(testApp.context, { concurrency: 2 }).drain();
    const received = receiver.requests.filter((request) => request.body.includes(created.payment_id));
    expect(received).toHaveLength(1);
    const event = new Webhook(merchant.webhook_secret).verify(
      received[0]!.body,
      received[0]!.headers as Record<string, string>,
    ) as {
      type: string;
      data: unknown;
    };
    expect(event).toMatchObject({ type: 'payment.paid', data: paid });
  });
});

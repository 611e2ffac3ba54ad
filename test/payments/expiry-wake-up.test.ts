// The payment expiry worker sleeps until the next expires_at (or its backstop). A
// payment past its expires_at is held off expiry while a card attempt on it is
// unresolved; when that attempt resolves, the payment is due at once, and
// migration 0014's trigger wakes the sleeping worker. The worker here sleeps an
// hour, so its sleep ending at all, and the payment expiring, is the wake-up.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Notifications } from '../../src/db/notifications.ts';
import { startAttempt } from '../../src/payments/attempt-service.ts';
import { createSandboxConnector } from '../../src/payments/connectors/sandbox/sandbox-connector.ts';
import { createExpiryWorker, type ExpiryWorker } from '../../src/payments/expiry-worker.ts';
import { findPaymentById } from '../../src/payments/payment-repository.ts';
import { ABANDON_AFTER_MS, createReconciliationWorker } from '../../src/payments/reconciliation-worker.ts';
import { backends } from '../support/databases.ts';
import { createTestApp, type TestApp } from '../support/app.ts';
import { watchSleeps } from '../support/worker-sleeps.ts';
import { postPayment, sandboxShop, type ShopWithKey } from './payment-test-support.ts';

/** A sleep the test never waits out: only a wake-up ends it. */
const BACKSTOP_MS = 3_600_000;

describe.each(backends)('an idle payment expiry worker on %s', (backend) => {
  let testApp: TestApp;
  let shop: ShopWithKey;
  let notifications: Notifications;
  let worker: ExpiryWorker;

  beforeAll(async () => {
    testApp = await createTestApp(backend);
    shop = await sandboxShop(testApp);
    notifications = await testApp.database.listen();
  });
  afterAll(async () => {
    await worker?.stop();
    await notifications.close();
    await testApp.close();
  });

  it('a payment past expires_at whose last card attempt is abandoned is expired by a worker woken from its sleep', async () => {
    const created = await postPayment(testApp, shop.key, { amount: 1000, currency: 'RUB', method: 'card' });
    expect(created.statusCode).toBe(201);
    const payment = (await findPaymentById(testApp.context.db, created.json().payment_id))!;
    const attempt = await startAttempt(testApp.context, {
      payment,
      connector: createSandboxConnector(testApp.context),
      chargeKey: `${payment.id}:never-reached-acquirer`,
      method: 'card',
      amountKopecks: payment.amount_total_kopecks,
    });
    expect(attempt).toBeDefined();

    // Past expires_at and past the point where the acquirer's silence means "never charged".
    testApp.clock.set(new Date(payment.expires_at.getTime() + ABANDON_AFTER_MS));
    const sleeps = watchSleeps();
    worker = createExpiryWorker(
      { ...testApp.context, notifications },
      { backstopMs: BACKSTOP_MS, sleepObserver: sleeps.observer },
    );
    worker.start();
    // Its first pass could not expire the payment (the attempt holds it) and nothing else is due.
    expect(await sleeps.asleep()).toBe(BACKSTOP_MS);
    expect((await findPaymentById(testApp.context.db, payment.id))!.status).toBe('pending');

    const asleepSince = sleeps.sleeps;
    expect(await createReconciliationWorker(testApp.context).runOnce()).toBe(1);
    await sleeps.sleepsEnded(asleepSince);
    expect(sleeps.woken).toBe(1);
    // The pass it was woken for has expired the payment before the worker sleeps again.
    await sleeps.asleep();
    expect((await findPaymentById(testApp.context.db, payment.id))!.status).toBe('expired');
  });
});

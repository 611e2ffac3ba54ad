// Issue 12, point 4: the payment expiry worker sleeps until the next expires_at
// (or its 30 s backstop). A payment past its expires_at is held off expiry while
// a card attempt on it is unresolved; when that attempt resolves, the payment is
// due at once, and migration 0014's trigger wakes the sleeping worker: it is
// expired within a second, not at the next backstop pass.
import { performance } from 'node:perf_hooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Notifications } from '../../src/db/notifications.ts';
import { startAttempt } from '../../src/payments/attempt-service.ts';
import { createSandboxConnector } from '../../src/payments/connectors/sandbox/sandbox-connector.ts';
import { createExpiryWorker, type ExpiryWorker } from '../../src/payments/expiry-worker.ts';
import { findPaymentById } from '../../src/payments/payment-repository.ts';
import { ABANDON_AFTER_MS, createReconciliationWorker } from '../../src/payments/reconciliation-worker.ts';
import { backends } from '../support/databases.ts';
import { createTestApp, type TestApp } from '../support/app.ts';
import { postPayment, sandboxShop, type ShopWithKey } from './payment-test-support.ts';

const EXPIRY_LATENCY_MS_MAX = 1_000;

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

  it('a payment past expires_at whose last card attempt is abandoned is expired within a second, by a worker asleep until then', async () => {
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
    worker = createExpiryWorker({ ...testApp.context, notifications });
    worker.start();
    await new Promise((resolve) => setTimeout(resolve, 300));
    // The worker's first pass could not expire it: the attempt holds it.
    expect((await findPaymentById(testApp.context.db, payment.id))!.status).toBe('pending');

    expect(await createReconciliationWorker(testApp.context).runOnce()).toBe(1);
    const abandoned = performance.now();
    while ((await findPaymentById(testApp.context.db, payment.id))!.status !== 'expired') {
      if (performance.now() - abandoned > EXPIRY_LATENCY_MS_MAX)
        throw new Error(`payment not expired within ${EXPIRY_LATENCY_MS_MAX} ms of its attempt's abandonment`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect(performance.now() - abandoned).toBeLessThan(EXPIRY_LATENCY_MS_MAX);
  });
});

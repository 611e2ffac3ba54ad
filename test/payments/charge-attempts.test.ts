// Durable charges (docs/payments.md, "Charging durably"): an attempt is recorded
// before every acquirer call; an attempt of unknown outcome holds expiry off and
// is resolved by the reconciliation worker through the connector's lookup;
// captures no payment can take go to suspense, are reported and refundable.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { checkLedgerInvariants } from '../../src/ledger/ledger-check.ts';
import { systemAccountKey } from '../../src/ledger/ledger-accounts.ts';
import { findAccountsByKeys } from '../../src/ledger/ledger-repository.ts';
import {
  applyAttemptOutcome,
  chargeAttempt,
  RECONCILE_AFTER_MS,
  startAttempt,
} from '../../src/payments/attempt-service.ts';
import { findAttemptByChargeKey } from '../../src/payments/attempt-repository.ts';
import { createSandboxConnector } from '../../src/payments/connectors/sandbox/sandbox-connector.ts';
import { createExpiryWorker } from '../../src/payments/expiry-worker.ts';
import { findPaymentById } from '../../src/payments/payment-repository.ts';
import { ABANDON_AFTER_MS, createReconciliationWorker } from '../../src/payments/reconciliation-worker.ts';
import { refundSuspenseCapture } from '../../src/payments/suspense-service.ts';
import { backends } from '../support/databases.ts';
import { createTestApp, type TestApp } from '../support/app.ts';
import { postHelper, postPayment, sandboxShop, type ShopWithKey } from './payment-test-support.ts';

const CARD = { number: '4242424242424242', expiryMonth: 12, expiryYear: 2034, securityCode: '123' };
const CONFIRM_CARD = { ...CARD, number: '4000000000003220' };
const PAYER = { returnUrl: 'http://127.0.0.1/pay/return', description: 'Test shop: order' };
/** The sandbox finds a charge by its key alone. */
const refOf = (chargeKey: string) => ({
  chargeKey,
  paymentId: chargeKey.split(':')[0]!,
  method: 'card' as const,
  amountKopecks: 0n,
});

function field(html: string, name: string): string | undefined {
  return new RegExp(`name="${name}" value="([^"]*)"`).exec(html)?.[1];
}

describe.each(backends)('charge attempts on %s', (backend) => {
  let testApp: TestApp;
  let shop: ShopWithKey;

  // A fresh database per test: the workers' pass counts below are exact.
  beforeEach(async () => {
    testApp = await createTestApp(backend);
    shop = await sandboxShop(testApp);
  });
  afterEach(async () => {
    expect((await checkLedgerInvariants(testApp.context.db)).violations).toEqual([]);
    await testApp.close();
  });

  const sandbox = () => createSandboxConnector(testApp.context);
  const reconciler = () => createReconciliationWorker(testApp.context);
  const expiry = () => createExpiryWorker(testApp.context);

  async function create(method: string | null = 'card') {
    const response = await postPayment(testApp, shop.key, {
      amount: 1000,
      currency: 'RUB',
      method,
      callback_url: 'https://merchant.example/hook',
    });
    expect(response.statusCode).toBe(201);
    const id = response.json().payment_id as string;
    return (await findPaymentById(testApp.context.db, id))!;
  }

  async function eventsOf(paymentId: string) {
    const rows = await testApp.context.db
      .selectFrom('webhook_events')
      .select(['type', 'payload'])
      .where('payload', 'like', `%${paymentId}%`)
      .orderBy('created_at')
      .orderBy('id')
      .execute();
    return rows.map((row) => ({ type: row.type, data: JSON.parse(row.payload).data }));
  }

  async function transfersOf(referenceId: string) {
    return testApp.context.db
      .selectFrom('ledger_transfers')
      .select(['type', 'amount', 'idempotency_key'])
      .where('reference_id', '=', referenceId)
      .orderBy('created_at')
      .execute();
  }

  const metric = (name: string) => testApp.context.metrics.getSingleMetricAsString(name);

  async function suspenseBalance(): Promise<bigint> {
    const [account] = await findAccountsByKeys(testApp.context.db, [systemAccountKey('sandbox', 'suspense', 'RUB')]);
    return account ? account.credits_posted - account.debits_posted : 0n;
  }

  async function start(payment: Awaited<ReturnType<typeof create>>, nonce: string, method: 'card' | 'sbp' = 'card') {
    const attempt = await startAttempt(testApp.context, {
      payment,
      connector: sandbox(),
      chargeKey: `${payment.id}:${nonce}`,
      method,
      amountKopecks: payment.amount_total_kopecks,
    });
    expect(attempt).toBeDefined();
    return attempt!;
  }

  it('a page charge is recorded as an attempt, with the charge key the acquirer got, before the acquirer is called', async () => {
    const payment = await create();
    const attempt = await start(payment, 'first-attempt-0001');
    // Recorded, and the acquirer has not heard of it yet.
    expect(attempt).toMatchObject({
      status: 'pending',
      connector: 'sandbox',
      method: 'card',
      amount_kopecks: 100_000n,
      applied_as: null,
    });
    expect(await sandbox().lookup(refOf(attempt.charge_key))).toBeUndefined();

    const page = await testApp.app.inject({ method: 'GET', url: `/pay/${payment.order_code}` });
    const cookie = String(page.headers['set-cookie']).split(';')[0]!;
    const form = {
      csrf: field(page.body, 'csrf')!,
      attempt: field(page.body, 'attempt')!,
      'cc-number': '4242424242424242',
      'cc-exp': '12/34',
      'cc-csc': '123',
    };
    const submit = () =>
      testApp.app.inject({
        method: 'POST',
        url: `/pay/${payment.order_code}/card`,
        headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
        payload: new URLSearchParams(form).toString(),
      });
    // A double submit of one form is one attempt and one capture, never a suspense item.
    for (const response of await Promise.all([submit(), submit()])) expect(response.statusCode).toBe(303);
    const chargeKey = `${payment.id}:${form.attempt}`;
    const pageAttempt = await findAttemptByChargeKey(testApp.context.db, chargeKey);
    expect(pageAttempt).toMatchObject({ status: 'succeeded', applied_as: 'payment', suspense_reason: null });
    expect(await sandbox().lookup(refOf(chargeKey))).toEqual({ status: 'succeeded', chargeKey });
    expect((await findPaymentById(testApp.context.db, payment.id))!.status).toBe('paid');
    expect((await eventsOf(payment.id)).map((event) => event.type)).toEqual(['payment.paid']);
  });

  it('a charge whose outcome was never applied holds expiry off; the reconciliation worker looks it up and pays the payment once', async () => {
    const payment = await create();
    const attempt = await start(payment, 'crashed-attempt-01');
    // The acquirer takes the money and the gateway never hears back (the process died).
    expect((await chargeAttempt(sandbox(), attempt, { ...PAYER, card: CARD })).status).toBe('succeeded');

    testApp.clock.set(new Date(payment.expires_at.getTime() + 5_000));
    expect(await expiry().runOnce()).toBe(0);
    expect((await findPaymentById(testApp.context.db, payment.id))!.status).toBe('pending');

    expect(await reconciler().runOnce()).toBe(1);
    const paid = (await findPaymentById(testApp.context.db, payment.id))!;
    expect(paid).toMatchObject({ status: 'paid', paid_method: 'card', paid_total_kopecks: 100_000n });
    expect(await findAttemptByChargeKey(testApp.context.db, attempt.charge_key)).toMatchObject({
      status: 'succeeded',
      applied_as: 'payment',
    });

    // Nothing more happens, however often the workers run.
    expect(await reconciler().runOnce()).toBe(0);
    testApp.clock.advance(ABANDON_AFTER_MS);
    expect(await reconciler().runOnce()).toBe(0);
    expect(await expiry().runOnce()).toBe(0);
    expect((await eventsOf(payment.id)).map((event) => event.type)).toEqual(['payment.paid']);
    expect(await transfersOf(payment.id)).toEqual([
      { type: 'payment', amount: 100_000n, idempotency_key: `payment:${payment.id}` },
    ]);
    expect(await metric('paygate_payment_attempts_reconciled_total')).toMatch(
      /^paygate_payment_attempts_reconciled_total\{result="applied"\} 1$/m,
    );
  });

  it('an attempt the acquirer never received is looked up until it is abandoned, and then the payment expires', async () => {
    const payment = await create();
    const attempt = await start(payment, 'never-sent-attempt');
    // Not looked up while the charge call may still be running.
    testApp.clock.advance(RECONCILE_AFTER_MS - 1_000);
    expect(await reconciler().runOnce()).toBe(0);
    expect(await findAttemptByChargeKey(testApp.context.db, attempt.charge_key)).toMatchObject({
      status: 'pending',
      lookups: 0,
    });
    // First look-up: the acquirer does not know the key yet; the charge may still arrive.
    testApp.clock.advance(2_000);
    expect(await reconciler().runOnce()).toBe(0);
    expect(await findAttemptByChargeKey(testApp.context.db, attempt.charge_key)).toMatchObject({
      status: 'pending',
      lookups: 1,
    });
    // Due, but held: the outcome is still unknown.
    testApp.clock.set(new Date(payment.expires_at.getTime() + 1_000));
    expect(await expiry().runOnce()).toBe(0);
    expect(testApp.clock.now().getTime() - attempt.created_at.getTime()).toBeGreaterThan(ABANDON_AFTER_MS);
    expect(await reconciler().runOnce()).toBe(1);
    expect(await findAttemptByChargeKey(testApp.context.db, attempt.charge_key)).toMatchObject({
      status: 'abandoned',
      lookups: 2,
    });
    expect(await expiry().runOnce()).toBe(1);
    expect((await findPaymentById(testApp.context.db, payment.id))!.status).toBe('expired');
    expect((await eventsOf(payment.id)).map((event) => event.type)).toEqual(['payment.expired']);
  });

  it('a second successful capture of a paid payment goes to suspense, is reported as payment.capture_unapplied and is refunded through the connector once', async () => {
    const payment = await create(null);
    const suspenseBefore = await suspenseBalance();
    reconciler(); // registers the suspense gauge, as the worker does at start
    expect(await metric('paygate_payment_captures_in_suspense')).toMatch(/^paygate_payment_captures_in_suspense 0$/m);
    // Two tabs: card in one, SBP in the other, both started while the payment was pending.
    const card = await start(payment, 'tab-one-card-attempt', 'card');
    const sbp = await start(payment, 'tab-two-sbp-attempt', 'sbp');
    await applyAttemptOutcome(testApp.context, card, await chargeAttempt(sandbox(), card, { ...PAYER, card: CARD }));
    const held = await applyAttemptOutcome(testApp.context, sbp, await chargeAttempt(sandbox(), sbp, PAYER));

    expect(held).toMatchObject({
      status: 'succeeded',
      applied_as: 'suspense',
      suspense_reason: 'payment_already_paid',
      refund_status: null,
    });
    const paid = (await findPaymentById(testApp.context.db, payment.id))!;
    expect(paid).toMatchObject({ status: 'paid', paid_method: 'card' });
    expect(await suspenseBalance()).toBe(suspenseBefore + 100_000n);
    expect(await metric('paygate_payment_captures_in_suspense')).toMatch(/^paygate_payment_captures_in_suspense 1$/m);
    expect(await transfersOf(held.id)).toEqual([
      { type: 'capture_unapplied', amount: 100_000n, idempotency_key: `capture:${held.id}` },
    ]);
    const events = await eventsOf(payment.id);
    expect(events.map((event) => event.type)).toEqual(['payment.paid', 'payment.capture_unapplied']);
    expect(events[1]!.data).toMatchObject({
      payment_id: payment.id,
      status: 'paid',
      capture: {
        attempt_id: held.id,
        payment_id: payment.id,
        amount: 1000,
        currency: 'RUB',
        method: 'sbp',
        reason: 'payment_already_paid',
        refund_status: 'none',
        refunded_at: null,
      },
    });

    const refunded = await refundSuspenseCapture(testApp.context, held.id);
    expect(refunded).toMatchObject({
      attempt_id: held.id,
      refund_status: 'refunded',
      refunded_at: testApp.clock.now().toISOString(),
    });
    // The sandbox acquirer returned the whole capture under the suspense refund's key.
    const sandboxRefunds = await testApp.context.db
      .selectFrom('sandbox_acquirer_refunds')
      .select(['refund_key', 'amount_kopecks'])
      .where('charge_key', '=', sbp.charge_key)
      .execute();
    expect(sandboxRefunds).toEqual([{ refund_key: `${sbp.charge_key}:refund`, amount_kopecks: sbp.amount_kopecks }]);
    // A repeat answers the same and moves nothing again.
    expect(await refundSuspenseCapture(testApp.context, held.id)).toEqual(refunded);
    expect(await suspenseBalance()).toBe(suspenseBefore);
    expect(await metric('paygate_payment_captures_in_suspense')).toMatch(/^paygate_payment_captures_in_suspense 0$/m);
    expect((await transfersOf(held.id)).map((transfer) => transfer.type)).toEqual(['capture_unapplied', 'refund']);
    expect((await eventsOf(payment.id)).map((event) => event.type)).toEqual([
      'payment.paid',
      'payment.capture_unapplied',
      'payment.capture_refunded',
    ]);
    // The first capture is the payment's: it cannot be refunded as a suspense item.
    await expect(refundSuspenseCapture(testApp.context, card.id)).rejects.toMatchObject({ code: 'invalid_state' });
    await expect(refundSuspenseCapture(testApp.context, 'pat_unknown')).rejects.toMatchObject({ code: 'not_found' });
  });

  it('a capture confirmed at the acquirer after the payment expired goes to suspense; the payment stays expired', async () => {
    const payment = await create();
    const attempt = await start(payment, 'three-ds-attempt-01');
    const outcome = await chargeAttempt(sandbox(), attempt, { ...PAYER, card: CONFIRM_CARD });
    expect(outcome.status).toBe('requires_confirmation');
    expect(await applyAttemptOutcome(testApp.context, attempt, outcome)).toMatchObject({
      status: 'requires_confirmation',
    });
    // Waiting for the payer is not an unknown outcome: the payment expires on time.
    testApp.clock.set(new Date(payment.expires_at.getTime() + 1_000));
    expect(await expiry().runOnce()).toBe(1);
    // The payer confirms at the bank anyway; the gateway learns it by lookup.
    expect((await sandbox().confirm(attempt.charge_key, true)).status).toBe('succeeded');
    testApp.clock.advance(10 * 60_000);
    expect(await reconciler().runOnce()).toBe(1);
    expect(await findAttemptByChargeKey(testApp.context.db, attempt.charge_key)).toMatchObject({
      applied_as: 'suspense',
      suspense_reason: 'payment_expired',
    });
    expect((await findPaymentById(testApp.context.db, payment.id))!.status).toBe('expired');
    expect((await eventsOf(payment.id)).map((event) => event.type)).toEqual([
      'payment.expired',
      'payment.capture_unapplied',
    ]);
    expect(await transfersOf(payment.id)).toEqual([]);
  });

  it('the expire test helper refuses, with 409 invalid_state, a payment whose charge outcome is unknown', async () => {
    const payment = await create();
    await start(payment, 'helper-held-attempt');
    const refused = await postHelper(testApp, shop.key, payment.id, 'expire');
    expect(refused.statusCode).toBe(409);
    expect(refused.json()).toEqual({
      error: 'invalid_state',
      message: expect.stringContaining('still being confirmed with the acquirer'),
      request_id: expect.any(String),
    });
    expect((await findPaymentById(testApp.context.db, payment.id))!.status).toBe('pending');
    expect(await eventsOf(payment.id)).toEqual([]);
  });

  it('no attempt is recorded and nothing is charged for a payment that can no longer be paid', async () => {
    const payment = await create();
    testApp.clock.set(payment.expires_at);
    const attempt = await startAttempt(testApp.context, {
      payment,
      connector: sandbox(),
      chargeKey: `${payment.id}:too-late-attempt`,
      method: 'card',
      amountKopecks: 100_000n,
    });
    expect(attempt).toBeUndefined();
    expect(await findAttemptByChargeKey(testApp.context.db, `${payment.id}:too-late-attempt`)).toBeUndefined();
  });
});

// Merchants' refunds of RUB payments (docs/payments.md, "Refunds"): full and
// partial, never more than the payment's amount in total (also when requests
// race), debited from the merchant's RUB balance, `payment.refunded` once per
// refund, idempotent by Idempotency-Key; the sandbox acquirer's own book of
// partial refunds; refunds the acquirer answers later, resolved by the refund worker.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkLedgerInvariants } from '../../src/ledger/ledger-check.ts';
import type { AcquirerConnector, RefundOutcome } from '../../src/payments/connectors/acquirer-connector.ts';
import { saveConnection } from '../../src/payments/connectors/acquirer-connections.ts';
import type { AcquirerProvider } from '../../src/payments/connectors/acquirer-provider.ts';
import { REFUND_CHECK_AFTER_MS } from '../../src/payments/payment-refund-service.ts';
import { createRefundWorker } from '../../src/payments/refund-worker.ts';
import { createPaymentsModule } from '../../src/payments/payments-module.ts';
import { backends } from '../support/databases.ts';
import { createTestApp, type TestApp } from '../support/app.ts';
import { createFakeCardAcquirer } from './fake-card-acquirer.ts';
import { getJson, postHelper, postPayment, sandboxShop, type ShopWithKey } from './payment-test-support.ts';

const HOOK = 'https://merchant.example/hook';

function field(html: string, name: string): string | undefined {
  return new RegExp(`name="${name}" value="([^"]*)"`).exec(html)?.[1];
}

/**
 * A production acquirer whose refunds end later, as YooKassa's and T-Bank's may:
 * `refund` answers pending (or fails, while `down`), and `lookupRefund` answers
 * what the test settled. It charges through the fake card bank.
 */
function createLaterRefundingAcquirer() {
  const bank = createFakeCardAcquirer();
  const received = new Map<string, bigint>();
  const settled = new Map<string, RefundOutcome>();
  const state = { down: false, refundCalls: 0 };
  const connector: AcquirerConnector = {
    ...bank,
    name: 'later_bank',
    async refund(request) {
      state.refundCalls += 1;
      if (state.down) throw new Error('connect ECONNREFUSED (the bank is down)');
      received.set(request.refundKey, request.amountKopecks);
      return settled.get(request.refundKey) ?? { status: 'pending', refundKey: request.refundKey };
    },
    async lookupRefund(request) {
      if (!received.has(request.refundKey)) return undefined;
      return settled.get(request.refundKey) ?? { status: 'pending', refundKey: request.refundKey };
    },
  };
  // Live shops reach it through a stored connection, as they reach any provider.
  const provider: AcquirerProvider = {
    name: 'later_bank',
    methods: ['card'],
    defaultApiUrl: 'https://later-bank.invalid',
    credentialNames: ['key'],
    connect: (connection) => ({ ...connector, name: `later_bank:${connection.id}` }),
    async verifyCredentials() {},
  };
  const providers: ReadonlyMap<string, AcquirerProvider> = new Map([[provider.name, provider]]);
  return { connector, providers, received, settled, state };
}

describe.each(backends)('RUB refunds on %s', (backend) => {
  let testApp: TestApp;
  let shop: ShopWithKey;
  let live: ShopWithKey;
  const later = createLaterRefundingAcquirer();

  beforeAll(async () => {
    testApp = await createTestApp(backend, { acquirerProviders: later.providers });
    shop = await sandboxShop(testApp);
    live = await sandboxShop(testApp, 'live');
    await saveConnection(testApp.context, later.providers, {
      shopId: live.shopId,
      provider: 'later_bank',
      credentials: { key: 'any' },
    });
  });
  afterAll(async () => {
    expect((await checkLedgerInvariants(testApp.context.db)).violations).toEqual([]);
    await testApp.close();
  });

  function refund(key: string, paymentId: string, body: unknown, headers: Record<string, string> = {}) {
    return testApp.app.inject({
      method: 'POST',
      url: `/v1/payments/${paymentId}/refunds`,
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers },
      payload: typeof body === 'string' ? body : JSON.stringify(body),
    });
  }

  async function createPayment(key: string, amount: number, method: string | null = null) {
    const created = await postPayment(testApp, key, { amount, currency: 'RUB', method, callback_url: HOOK });
    expect(created.statusCode, created.body).toBe(201);
    return created.json() as { payment_id: string; order_code: string; amount_total: number };
  }

  /** A sandbox payment paid by the test helper (no charge at the sandbox acquirer). */
  async function helperPaid(amount: number): Promise<string> {
    const payment = await createPayment(shop.key, amount);
    expect((await postHelper(testApp, shop.key, payment.payment_id, 'pay')).statusCode).toBe(200);
    return payment.payment_id;
  }

  /** A payment paid by card on the hosted page: a real charge at the shop's acquirer. */
  async function cardPaid(key: string, amount: number): Promise<{ payment_id: string; amount_total: number }> {
    const payment = await createPayment(key, amount, 'card');
    const page = await testApp.app.inject({ method: 'GET', url: `/pay/${payment.order_code}` });
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
        'cc-number': '4242424242424242',
        'cc-exp': '12/34',
        'cc-csc': '123',
      }).toString(),
    });
    expect(submitted.statusCode).toBe(303);
    const paid = (await getJson(testApp, key, `/v1/payments/${payment.payment_id}`)).json();
    expect(paid.status).toBe('paid');
    return payment;
  }

  async function rubMain(key: string): Promise<{ available: string; pending: string }> {
    const balances = (await getJson(testApp, key, '/v1/crypto/balance')).json() as {
      accounts: { currency: string; kind: string; available: string; pending: string; account_id: string }[];
    };
    return balances.accounts.find((account) => account.currency === 'RUB' && account.kind === 'main')!;
  }

  async function refundEvents(paymentId: string) {
    const rows = await testApp.context.db
      .selectFrom('webhook_events')
      .select(['type', 'payload'])
      .where('type', '=', 'payment.refunded')
      .where('payload', 'like', `%${paymentId}%`)
      .orderBy('created_at')
      .orderBy('id')
      .execute();
    return rows.map((row) => JSON.parse(row.payload).data);
  }

  it('a partial then a full refund: payment.refunded twice, the balance right to the kopeck, a third refused', async () => {
    const before = await rubMain(shop.key);
    const paymentId = await helperPaid(1000.55);
    const partial = await refund(shop.key, paymentId, { amount: 300.01, reason: 'one item returned' });
    expect(partial.statusCode, partial.body).toBe(201);
    expect(partial.json()).toMatchObject({
      payment_id: paymentId,
      amount: 300.01,
      currency: 'RUB',
      status: 'succeeded',
      reason: 'one item returned',
      failure_reason: null,
    });
    expect(partial.json().refund_id).toMatch(/^prf_/);
    const kopecks = (text: string) => BigInt(text.replace('.', ''));
    expect(kopecks((await rubMain(shop.key)).available) - kopecks(before.available)).toBe(100_055n - 30_001n);
    const full = await refund(shop.key, paymentId, {});
    expect(full.statusCode, full.body).toBe(201);
    expect(full.json()).toMatchObject({ amount: 700.54, status: 'succeeded', reason: null });

    const after = await rubMain(shop.key);
    expect(kopecks(after.available) - kopecks(before.available)).toBe(0n);
    expect(after.pending).toBe(before.pending);

    const events = await refundEvents(paymentId);
    expect(events).toHaveLength(2);
    expect(events.map((event) => [event.refund.refund_id, event.amount_refunded, event.status])).toEqual([
      [partial.json().refund_id, 300.01, 'paid'],
      [full.json().refund_id, 1000.55, 'paid'],
    ]);
    expect(events[1]).toMatchObject({ payment_id: paymentId, amount: 1000.55, refund: full.json() });
    // Each event is found by the payment's id and by its refund's id.
    const subjects = await testApp.context.db
      .selectFrom('webhook_events')
      .select('subject_ids')
      .where('type', '=', 'payment.refunded')
      .where('payload', 'like', `%${full.json().refund_id}%`)
      .executeTakeFirstOrThrow();
    expect([...subjects.subject_ids].sort()).toEqual([full.json().refund_id, paymentId].sort());

    const third = await refund(shop.key, paymentId, { amount: 0.01 });
    expect(third.statusCode).toBe(409);
    expect(third.json()).toMatchObject({ error: 'already_refunded' });
    const list = await getJson(testApp, shop.key, `/v1/payments/${paymentId}/refunds`);
    expect(list.statusCode).toBe(200);
    expect(list.json()).toEqual({
      data: [partial.json(), full.json()],
      amount_refunded: 1000.55,
      amount_refundable: 0,
    });
    const one = await getJson(testApp, shop.key, `/v1/payments/${paymentId}/refunds/${partial.json().refund_id}`);
    expect(one.json()).toEqual(partial.json());
  });

  it('a refund of more than is left of the payment is 400 and changes nothing', async () => {
    const paymentId = await helperPaid(500);
    expect((await refund(shop.key, paymentId, { amount: 200 })).statusCode).toBe(201);
    const balance = await rubMain(shop.key);
    const over = await refund(shop.key, paymentId, { amount: 300.01 });
    expect(over.statusCode).toBe(400);
    expect(over.json()).toMatchObject({
      error: 'invalid_request',
      message: expect.stringContaining('at most 300 RUB'),
    });
    for (const amount of [0, -1, 1.001, '10']) {
      expect((await refund(shop.key, paymentId, { amount })).statusCode).toBe(400);
    }
    expect(await rubMain(shop.key)).toEqual(balance);
    expect((await getJson(testApp, shop.key, `/v1/payments/${paymentId}/refunds`)).json().data).toHaveLength(1);
  });

  it('racing refunds never refund more than the payment: only those that fit succeed', async () => {
    const paymentId = await helperPaid(1000);
    const responses = await Promise.all(
      Array.from({ length: 8 }, (_, index) =>
        refund(shop.key, paymentId, { amount: 300 }, { 'idempotency-key': `race-${paymentId}-${index}` }),
      ),
    );
    const statuses = responses.map((response) => response.statusCode).sort();
    expect(statuses).toEqual([201, 201, 201, 400, 400, 400, 400, 400]);
    const list = (await getJson(testApp, shop.key, `/v1/payments/${paymentId}/refunds`)).json();
    expect(list.amount_refunded).toBe(900);
    expect(list.amount_refundable).toBe(100);
    expect(await refundEvents(paymentId)).toHaveLength(3);
  });

  it('the same Idempotency-Key and body is the same refund; another body under it is 409', async () => {
    const paymentId = await helperPaid(100);
    const key = `refund-key-${paymentId}`;
    const first = await refund(shop.key, paymentId, { amount: 10 }, { 'idempotency-key': key });
    expect(first.statusCode).toBe(201);
    const concurrent = await Promise.all(
      [1, 2, 3].map(() => refund(shop.key, paymentId, { amount: 10.0 }, { 'idempotency-key': key })),
    );
    for (const replay of concurrent) {
      expect(replay.statusCode).toBe(200);
      expect(replay.json()).toEqual(first.json());
    }
    const other = await refund(shop.key, paymentId, { amount: 11 }, { 'idempotency-key': key });
    expect(other.statusCode).toBe(409);
    expect(other.json()).toMatchObject({ error: 'duplicate_external_id' });
    expect((await getJson(testApp, shop.key, `/v1/payments/${paymentId}/refunds`)).json().data).toHaveLength(1);
    expect(await refundEvents(paymentId)).toHaveLength(1);
  });

  it('a refund beyond the merchant’s available RUB balance is 400 insufficient_funds and records nothing', async () => {
    const poor = await sandboxShop(testApp);
    const created = await createPayment(poor.key, 1000);
    await postHelper(testApp, poor.key, created.payment_id, 'pay');
    const balances = (await getJson(testApp, poor.key, '/v1/crypto/balance')).json().accounts as {
      account_id: string;
      currency: string;
      kind: string;
    }[];
    const account = (kind: string) => balances.find((entry) => entry.currency === 'RUB' && entry.kind === kind)!;
    const moved = await testApp.app.inject({
      method: 'POST',
      url: '/v1/crypto/balance/transfers',
      headers: { authorization: `Bearer ${poor.key}`, 'content-type': 'application/json' },
      payload: JSON.stringify({
        external_id: 'move-most',
        from_account_id: account('main').account_id,
        to_account_id: account('payout').account_id,
        amount: '900.00',
      }),
    });
    expect(moved.statusCode, moved.body).toBe(201);
    const refused = await refund(poor.key, created.payment_id, { amount: 100.01 }, { 'idempotency-key': 'poor-1' });
    expect(refused.statusCode).toBe(400);
    expect(refused.json()).toMatchObject({ error: 'insufficient_funds' });
    expect(await rubMain(poor.key)).toMatchObject({ available: '100.00', pending: '0.00' });
    expect((await getJson(testApp, poor.key, `/v1/payments/${created.payment_id}/refunds`)).json().data).toEqual([]);
    // The refused request stored nothing under its key: the corrected repeat is a first request.
    const fits = await refund(poor.key, created.payment_id, { amount: 100.01 }, { 'idempotency-key': 'poor-1' });
    expect(fits.statusCode).toBe(400);
    expect(
      (await refund(poor.key, created.payment_id, { amount: 100 }, { 'idempotency-key': 'poor-2' })).statusCode,
    ).toBe(201);
  });

  it('only a paid payment of the shop can be refunded: pending is 409, another shop’s or unknown is 404', async () => {
    const pending = await createPayment(shop.key, 100);
    const refused = await refund(shop.key, pending.payment_id, {});
    expect(refused.statusCode).toBe(409);
    expect(refused.json()).toMatchObject({ error: 'invalid_state', message: expect.stringContaining('pending') });
    const failed = await createPayment(shop.key, 100);
    await postHelper(testApp, shop.key, failed.payment_id, 'fail');
    expect((await refund(shop.key, failed.payment_id, {})).statusCode).toBe(409);

    const paymentId = await helperPaid(100);
    const stranger = await sandboxShop(testApp);
    expect((await refund(stranger.key, paymentId, {})).statusCode).toBe(404);
    expect((await getJson(testApp, stranger.key, `/v1/payments/${paymentId}/refunds`)).statusCode).toBe(404);
    expect((await refund(shop.key, 'not-a-payment', {})).statusCode).toBe(404);
    expect((await getJson(testApp, shop.key, `/v1/payments/${paymentId}/refunds/prf_nope`)).statusCode).toBe(404);
  });

  it('a card payment is refunded at the sandbox acquirer in parts, each under its refund id, never past the capture', async () => {
    const payment = await cardPaid(shop.key, 1000);
    const first = (await refund(shop.key, payment.payment_id, { amount: 400 })).json();
    const second = (await refund(shop.key, payment.payment_id, {})).json();
    expect([first.status, second.status, second.amount]).toEqual(['succeeded', 'succeeded', 600]);
    const book = await testApp.context.db
      .selectFrom('sandbox_acquirer_refunds')
      .innerJoin(
        'sandbox_acquirer_charges',
        'sandbox_acquirer_charges.charge_key',
        'sandbox_acquirer_refunds.charge_key',
      )
      .select(['sandbox_acquirer_refunds.refund_key', 'sandbox_acquirer_refunds.amount_kopecks'])
      .where('sandbox_acquirer_charges.payment_id', '=', payment.payment_id)
      .orderBy('sandbox_acquirer_refunds.amount_kopecks')
      .execute();
    expect(book).toEqual([
      { refund_key: first.refund_id, amount_kopecks: 40_000n },
      { refund_key: second.refund_id, amount_kopecks: 60_000n },
    ]);
  });

  it('the sandbox acquirer: partial refunds up to the capture, idempotent by refund key, and looked up', async () => {
    const payment = await cardPaid(shop.key, 100);
    const { createSandboxConnector } = await import('../../src/payments/connectors/sandbox/sandbox-connector.ts');
    const sandbox = createSandboxConnector(testApp.context);
    const attempt = await testApp.context.db
      .selectFrom('payment_attempts')
      .select(['charge_key', 'amount_kopecks'])
      .where('payment_id', '=', payment.payment_id)
      .where('applied_as', '=', 'payment')
      .executeTakeFirstOrThrow();
    const request = (refundKey: string, amountKopecks: bigint) => ({
      refundKey,
      chargeKey: attempt.charge_key,
      paymentId: payment.payment_id,
      amountKopecks,
    });
    // The capture is the payer's total (amount plus the payer fee).
    const captured = attempt.amount_kopecks;
    expect(captured).toBe(BigInt(Math.round(payment.amount_total * 100)));
    expect(await sandbox.refund(request('a', 1000n))).toEqual({ status: 'succeeded', refundKey: 'a' });
    expect(await sandbox.refund(request('a', 1000n))).toEqual({ status: 'succeeded', refundKey: 'a' });
    expect(await sandbox.refund(request('a', 999n))).toMatchObject({ status: 'refused', reason: 'refund_key_reused' });
    expect(await sandbox.refund(request('b', captured - 999n))).toMatchObject({
      status: 'refused',
      reason: 'exceeds_captured',
    });
    const racing = await Promise.all(['c', 'd', 'e'].map((key) => sandbox.refund(request(key, captured - 1000n))));
    expect(racing.filter((outcome) => outcome.status === 'succeeded')).toHaveLength(1);
    expect(await sandbox.refund(request('f', 1n))).toMatchObject({ status: 'refused', reason: 'already_refunded' });
    expect(await sandbox.lookupRefund(request('a', 1000n))).toEqual({ status: 'succeeded', refundKey: 'a' });
    expect(await sandbox.lookupRefund(request('f', 1n))).toBeUndefined();
    expect(await sandbox.refund({ ...request('g', 1n), chargeKey: 'no-such-charge' })).toMatchObject({
      status: 'refused',
      reason: 'unknown_charge',
    });
  });

  it('a refund the acquirer confirms later stays pending, reserved, until the refund worker learns the outcome', async () => {
    const worker = createRefundWorker({ ...testApp.context, acquirerProviders: later.providers });
    const payment = await cardPaid(live.key, 1000);
    const before = await rubMain(live.key);
    const accepted = await refund(live.key, payment.payment_id, { amount: 250 });
    expect(accepted.statusCode).toBe(201);
    const refundId = accepted.json().refund_id as string;
    expect(accepted.json()).toMatchObject({ status: 'pending', resolved_at: null });
    // Reserved: no longer available, shown as pending.
    expect(await rubMain(live.key)).toMatchObject({ available: '750.00', pending: '250.00' });
    expect(before.available).toBe('1000.00');

    const gauge = () => testApp.context.metrics.getSingleMetricAsString('paygate_payment_refunds_pending');
    expect(await gauge()).toMatch(/^paygate_payment_refunds_pending 1$/m);
    // Not due yet; then due, still pending at the bank: asked again later.
    expect(await worker.runOnce()).toBe(0);
    testApp.clock.advance(REFUND_CHECK_AFTER_MS);
    expect(await worker.runOnce()).toBe(0);
    expect(await refundEvents(payment.payment_id)).toHaveLength(0);

    later.settled.set(refundId, { status: 'succeeded', refundKey: refundId });
    testApp.clock.advance(2 * REFUND_CHECK_AFTER_MS);
    expect(await worker.runOnce()).toBe(1);
    expect(await rubMain(live.key)).toMatchObject({ available: '750.00', pending: '0.00' });
    expect(await gauge()).toMatch(/^paygate_payment_refunds_pending 0$/m);
    const events = await refundEvents(payment.payment_id);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ amount_refunded: 250, refund: { refund_id: refundId, status: 'succeeded' } });
    testApp.clock.advance(60 * 60_000);
    expect(await worker.runOnce()).toBe(0);
  });

  it('a refund whose call failed is sent again by the worker under the same key; a refusal gives the money back', async () => {
    const worker = createRefundWorker({ ...testApp.context, acquirerProviders: later.providers });
    const payment = await cardPaid(live.key, 100);
    const before = await rubMain(live.key);
    later.state.down = true;
    const accepted = await refund(live.key, payment.payment_id, { amount: 100 });
    expect(accepted.statusCode).toBe(201);
    const refundId = accepted.json().refund_id as string;
    expect(accepted.json().status).toBe('pending');
    expect(later.received.has(refundId)).toBe(false);
    // The whole payment is held by the pending refund: a second refund is refused.
    expect((await refund(live.key, payment.payment_id, { amount: 1 })).statusCode).toBe(409);

    later.state.down = false;
    later.settled.set(refundId, { status: 'refused', refundKey: refundId, reason: 'card_closed' });
    testApp.clock.advance(REFUND_CHECK_AFTER_MS);
    expect(await worker.runOnce()).toBe(1);
    expect(later.received.get(refundId)).toBe(10_000n);
    const failed = (await getJson(testApp, live.key, `/v1/payments/${payment.payment_id}/refunds/${refundId}`)).json();
    expect(failed).toMatchObject({ status: 'failed', failure_reason: 'card_closed' });
    expect(await rubMain(live.key)).toEqual(before);
    expect(await refundEvents(payment.payment_id)).toHaveLength(0);
    // The amount is refundable again.
    const list = (await getJson(testApp, live.key, `/v1/payments/${payment.payment_id}/refunds`)).json();
    expect(list).toMatchObject({ amount_refunded: 0, amount_refundable: 100 });
  });

  it('an acquirer’s notified refund outcome moves a pending refund once; a repeat or an unknown key changes nothing', async () => {
    const payments = createPaymentsModule({ ...testApp.context, acquirerProviders: later.providers });
    try {
      const payment = await cardPaid(live.key, 300);
      const refundId = (await refund(live.key, payment.payment_id, { amount: 300 })).json().refund_id as string;
      const succeeded: RefundOutcome = { status: 'succeeded', refundKey: refundId };
      await payments.service.applyRefundOutcome(refundId, succeeded);
      await payments.service.applyRefundOutcome(refundId, succeeded);
      await payments.service.applyRefundOutcome(refundId, { status: 'refused', refundKey: refundId, reason: 'late' });
      await payments.service.applyRefundOutcome('prf_unknown', succeeded);
      const shown = (await getJson(testApp, live.key, `/v1/payments/${payment.payment_id}/refunds/${refundId}`)).json();
      expect(shown).toMatchObject({ status: 'succeeded', failure_reason: null });
      expect(await refundEvents(payment.payment_id)).toHaveLength(1);
    } finally {
      await payments.module.close?.();
    }
  });
});

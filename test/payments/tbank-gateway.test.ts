// The whole gateway charging through T-Bank: the real HTTP server on a loopback
// port, the real database, a live shop whose saved tbank connection points at
// the in-process T-Bank simulator, and the simulator notifying the gateway's
// real route `POST /acquirers/tbank/notifications/{connection_id}`. The payer's
// steps are plain HTTP (the gateway's page, the simulator's form and bank app);
// outcomes are awaited by polling state, never by the wall clock.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { saveConnection } from '../../src/payments/connectors/acquirer-connections.ts';
import {
  startTBankSimulator,
  SIMULATOR_TERMINAL,
  type TBankSimulator,
} from '../../src/payments/connectors/tbank/simulator/index.ts';
import { tbankProvider } from '../../src/payments/connectors/tbank/tbank-provider.ts';
import { tbankToken } from '../../src/payments/connectors/tbank/tbank-token.ts';
import { createExpiryWorker } from '../../src/payments/expiry-worker.ts';
import { createRefundWorker } from '../../src/payments/refund-worker.ts';
import { createReconciliationWorker } from '../../src/payments/reconciliation-worker.ts';
import { createDeliveryWorker } from '../../src/webhooks/delivery-worker.ts';
import { createTestApp, type TestApp } from '../support/app.ts';
import { backends } from '../support/databases.ts';
import { eventually } from '../support/eventually.ts';
import { freePort } from '../support/free-port.ts';
import { startReceiver, type Receiver } from '../webhooks/receiver.ts';
import { acquirerPageOf } from './payment-test-support.ts';

const providers = new Map([[tbankProvider.name, tbankProvider]]);
/** The only sender the gateway takes T-Bank notifications from here: the simulator on loopback. */
const SIMULATOR_SOURCES = ['127.0.0.1/32'];
/** An address outside the allowed sources, as a trusted proxy in front of the gateway would report it. */
const OUTSIDE_ADDRESS = '203.0.113.9';

function field(html: string, name: string): string {
  const value = new RegExp(`name="${name}" value="([^"]*)"`).exec(html)?.[1];
  if (value === undefined) throw new Error(`the page has no field ${name}`);
  return value;
}

function form(fields: Record<string, string>, cookie?: string): RequestInit {
  return {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...(cookie ? { cookie } : {}) },
    body: new URLSearchParams(fields).toString(),
  };
}

describe.each(backends)('the gateway charging through the T-Bank simulator on %s', (backend) => {
  let testApp: TestApp;
  let simulator: TBankSimulator;
  let receiver: Receiver;
  let gateway: string;
  let shopKey: string;
  let connectionId: string;

  beforeAll(async () => {
    simulator = await startTBankSimulator({ port: 0 });
    receiver = await startReceiver();
    const port = await freePort();
    gateway = `http://127.0.0.1:${port}`;
    testApp = await createTestApp(backend, {
      acquirerProviders: providers,
      config: {
        publicUrl: gateway,
        // One proxy on loopback may name the client; the simulator itself sends no X-Forwarded-For.
        trustProxy: ['127.0.0.1'],
        acquirerNotificationSources: { tbank: SIMULATOR_SOURCES },
      },
    });
    await testApp.app.listen({ port, host: '127.0.0.1' });
    const merchant = await testApp.createMerchant({ mode: 'live' });
    shopKey = merchant.api_key;
    const saved = await saveConnection(testApp.context, providers, {
      shopId: merchant.shop_id,
      provider: 'tbank',
      apiUrl: simulator.url,
      credentials: { terminal_key: SIMULATOR_TERMINAL.terminalKey, password: SIMULATOR_TERMINAL.password },
    });
    connectionId = saved.id;
  });
  afterAll(async () => {
    await testApp?.close();
    await simulator?.close();
    await receiver?.close();
  });

  async function api(method: 'GET' | 'POST', path: string, body?: unknown) {
    const response = await fetch(`${gateway}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${shopKey}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: response.status, json: (await response.json()) as Record<string, unknown> };
  }

  async function createPayment(amount: number, method: 'card' | 'sbp') {
    const created = await api('POST', '/v1/payments', { amount, currency: 'RUB', method, callback_url: receiver.url });
    expect(created.status, JSON.stringify(created.json)).toBe(201);
    return created.json as { payment_id: string; order_code: string };
  }

  async function paymentStatus(paymentId: string): Promise<string> {
    return String((await api('GET', `/v1/payments/${paymentId}`)).json['status']);
  }

  /** The payer opens the page: its form fields and the session cookie. */
  async function openPage(orderCode: string, cookie?: string) {
    const page = await fetch(`${gateway}/pay/${orderCode}?lang=en`, { headers: cookie ? { cookie } : {} });
    expect(page.status).toBe(200);
    const html = await page.text();
    return { html, cookie: cookie ?? page.headers.getSetCookie()[0]!.split(';')[0]! };
  }

  async function attemptsOf(paymentId: string) {
    return testApp.context.db
      .selectFrom('payment_attempts')
      .selectAll()
      .where('payment_id', '=', paymentId)
      .orderBy('created_at')
      .orderBy('id')
      .execute();
  }

  /** A card payment whose payer pressed "pay": the gateway's 303 to T-Bank's form, and the session behind it. */
  async function cardAtTBank(amount: number) {
    const payment = await createPayment(amount, 'card');
    const { html, cookie } = await openPage(payment.order_code);
    // Card data never reaches the gateway in live mode: a button to T-Bank's form, no card fields.
    expect(html).not.toContain('cc-number');
    const submitted = await fetch(
      `${gateway}/pay/${payment.order_code}/card`,
      form({ csrf: field(html, 'csrf'), attempt: field(html, 'attempt'), lang: 'en' }, cookie),
    );
    expect(submitted.status).toBe(303);
    const formUrl = await onToBank(submitted);
    const [attempt] = await attemptsOf(payment.payment_id);
    expect(attempt).toMatchObject({
      status: 'requires_action',
      connector: `tbank:${connectionId}`,
      payer_action_kind: 'redirect',
      payer_action_url: formUrl,
    });
    const session = simulator.sessions.get(attempt!.provider_reference!)!;
    expect(formUrl).toBe(`${simulator.url.replace(/\/v2$/, '')}/new/${session.formCode}`);
    return { payment, cookie, attempt: attempt!, session, formUrl };
  }

  /** The card form's 303 leads through our own `to_bank` step (CSP form-action 'self'); its link is T-Bank's form. */
  async function onToBank(submitted: Response): Promise<string> {
    const location = submitted.headers.get('location')!;
    expect(location).toMatch(/^\/pay\/[A-Za-z0-9]+\?lang=en&to_bank=1$/);
    return acquirerPageOf(await (await fetch(`${gateway}${location}`)).text());
  }

  /** The payer on T-Bank's form presses a button; the simulator sends them back with a 303. */
  async function pressOnForm(formUrl: string, action: 'pay' | 'decline' | 'decline_funds'): Promise<string> {
    expect((await fetch(formUrl)).status).toBe(200);
    const answered = await fetch(formUrl, form({ action }));
    expect(answered.status).toBe(303);
    return answered.headers.get('location')!;
  }

  function deliveriesOf(paymentId: string) {
    return simulator.deliveries.filter((delivery) => String(delivery.body['PaymentId']) === paymentId);
  }

  /** Waits until every notification the simulator sent about a session has been answered `OK`. */
  async function allNotificationsAccepted(paymentId: string, count: number): Promise<void> {
    await eventually(
      () => deliveriesOf(paymentId),
      (sent) => sent.length === count && sent.every((delivery) => delivery.delivered),
    );
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

  async function transfersOf(referenceId: string) {
    return testApp.context.db
      .selectFrom('ledger_transfers')
      .select(['type', 'amount'])
      .where('reference_id', '=', referenceId)
      .orderBy('created_at')
      .execute();
  }

  /** Every webhook due now goes out to the receiver; returns what it received about the payment. */
  async function deliveredEvents(paymentId: string) {
    const worker = createDeliveryWorker(testApp.context);
    try {
      await worker.drain();
    } finally {
      await worker.stop();
    }
    return receiver.requests
      .map((request) => JSON.parse(request.body) as { type: string; data: { payment_id: string; status: string } })
      .filter((event) => event.data.payment_id === paymentId);
  }

  /** A notification signed with the terminal's password, as T-Bank sends them. */
  function signedNotification(session: { paymentId: string; orderId: string; amount: number }, status: string) {
    const unsigned = {
      TerminalKey: SIMULATOR_TERMINAL.terminalKey,
      OrderId: session.orderId,
      Success: status !== 'REJECTED',
      Status: status,
      PaymentId: Number(session.paymentId),
      ErrorCode: status === 'REJECTED' ? '1051' : '0',
      Amount: session.amount,
    };
    return { ...unsigned, Token: tbankToken(unsigned, SIMULATOR_TERMINAL.password) };
  }

  async function notifyGateway(body: Record<string, unknown>, headers: Record<string, string> = {}) {
    const response = await fetch(`${gateway}/acquirers/tbank/notifications/${connectionId}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    });
    return { status: response.status, body: await response.text() };
  }

  /** What must not move when a notification changes nothing. */
  async function snapshot(paymentId: string) {
    const payment = await api('GET', `/v1/payments/${paymentId}`);
    return {
      payment: payment.json,
      attempts: (await attemptsOf(paymentId)).map(({ status, decline_code, applied_as, updated_at }) => ({
        status,
        decline_code,
        applied_as,
        updated_at,
      })),
      events: await eventTypes(paymentId),
      transfers: await transfersOf(paymentId),
    };
  }

  it('card by redirect: approved on T-Bank’s form, the notification pays it once, one payment.paid, the balance credited once', async () => {
    const { payment, cookie, attempt, formUrl } = await cardAtTBank(1234.5);
    expect(simulator.sessions.get(attempt.provider_reference!)).toMatchObject({
      orderId: payment.payment_id,
      amount: 123_450,
      notificationUrl: `${gateway}/acquirers/tbank/notifications/${connectionId}`,
    });
    const back = await pressOnForm(formUrl, 'pay');
    expect(back).toBe(`${gateway}/pay/${payment.order_code}/return`);
    await eventually(
      () => paymentStatus(payment.payment_id),
      (status) => status === 'paid',
    );
    // AUTHORIZED then CONFIRMED, both answered OK.
    await allNotificationsAccepted(attempt.provider_reference!, 2);
    // Back on our return page, the payer sees the payment paid.
    const returned = await fetch(back, { redirect: 'manual', headers: { cookie } });
    expect(returned.status).toBe(303);
    const shown = await openPage(payment.order_code, cookie);
    expect(shown.html).toContain('data-status="paid"');

    expect((await attemptsOf(payment.payment_id)).map((row) => [row.status, row.applied_as])).toEqual([
      ['succeeded', 'payment'],
    ]);
    expect(await transfersOf(payment.payment_id)).toEqual([{ type: 'payment', amount: 123_450n }]);
    expect(await eventTypes(payment.payment_id)).toEqual(['payment.paid']);
    const delivered = await deliveredEvents(payment.payment_id);
    expect(delivered.map((event) => [event.type, event.data.status])).toEqual([['payment.paid', 'paid']]);
  });

  it('declined on T-Bank’s form: the payment stays payable (T-Bank’s decline is not final), the payer retries and pays', async () => {
    const { payment, attempt, formUrl } = await cardAtTBank(300);
    await pressOnForm(formUrl, 'decline_funds');
    await eventually(
      () => attemptsOf(payment.payment_id),
      (rows) => rows[0]?.status === 'declined',
    );
    await allNotificationsAccepted(attempt.provider_reference!, 1);
    expect((await attemptsOf(payment.payment_id))[0]).toMatchObject({ decline_code: 'insufficient_funds' });
    expect(await paymentStatus(payment.payment_id)).toBe('pending');
    expect(await eventTypes(payment.payment_id)).toEqual([]);

    // The page offers the card again: a new attempt opens a second session of the same order.
    const { html, cookie } = await openPage(payment.order_code);
    const retried = await fetch(
      `${gateway}/pay/${payment.order_code}/card`,
      form({ csrf: field(html, 'csrf'), attempt: field(html, 'attempt'), lang: 'en' }, cookie),
    );
    expect(retried.status).toBe(303);
    const second = (await attemptsOf(payment.payment_id))[1]!;
    expect(second.provider_reference).not.toBe(attempt.provider_reference);
    expect(simulator.sessions.get(second.provider_reference!)!.orderId).toBe(payment.payment_id);
    await pressOnForm(await onToBank(retried), 'pay');
    await eventually(
      () => paymentStatus(payment.payment_id),
      (status) => status === 'paid',
    );
    await allNotificationsAccepted(second.provider_reference!, 2);
    expect(await eventTypes(payment.payment_id)).toEqual(['payment.paid']);
    expect(await transfersOf(payment.payment_id)).toEqual([{ type: 'payment', amount: 30_000n }]);
  });

  it('a double-submitted form sends the payer to one T-Bank session, the one the attempt records; paying it pays', async () => {
    const payment = await createPayment(420, 'card');
    const { html, cookie } = await openPage(payment.order_code);
    const fields = { csrf: field(html, 'csrf'), attempt: field(html, 'attempt'), lang: 'en' };
    const submit = () => fetch(`${gateway}/pay/${payment.order_code}/card`, form(fields, cookie));
    // Two at once (a double click), then one more (back and submit again).
    const [first, second] = await Promise.all([submit(), submit()]);
    const third = await submit();
    const locations = await Promise.all([first, second, third].map(onToBank));
    const attempts = await attemptsOf(payment.payment_id);
    expect(attempts).toHaveLength(1);
    const recorded = simulator.sessions.get(attempts[0]!.provider_reference!)!;
    const formUrl = `${simulator.url.replace(/\/v2$/, '')}/new/${recorded.formCode}`;
    expect(locations).toEqual([formUrl, formUrl, formUrl]);
    expect(attempts[0]!.payer_action_url).toBe(formUrl);

    await pressOnForm(formUrl, 'pay');
    await eventually(
      () => paymentStatus(payment.payment_id),
      (status) => status === 'paid',
    );
    expect(await transfersOf(payment.payment_id)).toEqual([{ type: 'payment', amount: 42_000n }]);
  });

  it('SBP: the page shows GetQr’s link as a QR and a bank-app link; the bank app pays it and the notification pays the payment', async () => {
    const payment = await createPayment(75, 'sbp');
    const { html, cookie } = await openPage(payment.order_code);
    const started = await fetch(
      `${gateway}/pay/${payment.order_code}/qr`,
      form({ csrf: field(html, 'csrf'), attempt: field(html, 'attempt'), method: 'sbp', lang: 'en' }, cookie),
    );
    expect(started.status).toBe(303);
    const [attempt] = await attemptsOf(payment.payment_id);
    const base = simulator.url.replace(/\/v2$/, '');
    const link = `${base}/sbp/${attempt!.provider_reference}?type=02&sum=7500&cur=RUB`;
    expect(attempt).toMatchObject({
      status: 'requires_action',
      payer_action_kind: 'qr',
      payer_action_qr: link,
      payer_action_deep_link: link,
    });
    expect(simulator.sessions.get(attempt!.provider_reference!)!.rail).toBe('sbp');
    const waiting = await openPage(payment.order_code, cookie);
    expect(waiting.html).toContain('<svg');
    expect(waiting.html).toContain(`href="${link.replaceAll('&', '&#38;')}"`);

    // The payer's bank app opens the link and pays.
    const bankApp = `${base}/sbp/${attempt!.provider_reference}`;
    expect((await fetch(bankApp)).status).toBe(200);
    expect((await fetch(bankApp, form({ action: 'pay' }))).status).toBe(200);
    await eventually(
      () => paymentStatus(payment.payment_id),
      (status) => status === 'paid',
    );
    await allNotificationsAccepted(attempt!.provider_reference!, 2);
    expect(await transfersOf(payment.payment_id)).toEqual([{ type: 'payment', amount: 7_500n }]);
    expect(await eventTypes(payment.payment_id)).toEqual(['payment.paid']);
  });

  it('lost notifications: the reconciliation worker’s GetState finds the payment paid and applies it once', async () => {
    const { payment, attempt, formUrl } = await cardAtTBank(500);
    simulator.faults.notifications.lose = 2;
    await pressOnForm(formUrl, 'pay');
    expect(simulator.sessions.get(attempt.provider_reference!)!.visibleStatus).toBe('CONFIRMED');
    expect(deliveriesOf(attempt.provider_reference!)).toEqual([]);
    expect(await paymentStatus(payment.payment_id)).toBe('pending');

    const reconciler = createReconciliationWorker({ ...testApp.context, acquirerProviders: providers });
    testApp.clock.advance(61_000);
    await reconciler.runOnce();
    expect(await paymentStatus(payment.payment_id)).toBe('paid');
    expect((await attemptsOf(payment.payment_id))[0]).toMatchObject({ status: 'succeeded', applied_as: 'payment' });
    // Asked again later, nothing more happens.
    testApp.clock.advance(61_000);
    await reconciler.runOnce();
    expect(await transfersOf(payment.payment_id)).toEqual([{ type: 'payment', amount: 50_000n }]);
    expect(await eventTypes(payment.payment_id)).toEqual(['payment.paid']);
  });

  it('a payer still on T-Bank’s form: look-ups keep the attempt waiting with its link; an hour on it is abandoned and the payment expires', async () => {
    const { payment, formUrl, cookie } = await cardAtTBank(150);
    expect((await fetch(formUrl)).status).toBe(200);
    const reconciler = createReconciliationWorker({ ...testApp.context, acquirerProviders: providers });
    testApp.clock.advance(61_000);
    await reconciler.runOnce();
    const looked = (await attemptsOf(payment.payment_id))[0]!;
    expect(looked).toMatchObject({
      status: 'requires_action',
      payer_action_kind: 'redirect',
      payer_action_url: formUrl,
      lookups: 1,
    });
    // The page still sends the payer to the same form.
    const { html } = await openPage(payment.order_code, cookie);
    expect(html).not.toContain('data-status');

    testApp.clock.advance(60 * 60_000);
    await reconciler.runOnce();
    expect((await attemptsOf(payment.payment_id))[0]!.status).toBe('abandoned');
    await createExpiryWorker(testApp.context).runOnce();
    expect(await paymentStatus(payment.payment_id)).toBe('expired');
    expect(await eventTypes(payment.payment_id)).toEqual(['payment.expired']);
  });

  it('duplicated and reversed notifications (CONFIRMED before AUTHORIZED, each twice) change the payment once', async () => {
    const { payment, attempt, formUrl } = await cardAtTBank(210);
    simulator.faults.notifications.duplicate = true;
    simulator.faults.notifications.reverse = true;
    try {
      await pressOnForm(formUrl, 'pay');
      await allNotificationsAccepted(attempt.provider_reference!, 4);
    } finally {
      simulator.faults.notifications.duplicate = false;
      simulator.faults.notifications.reverse = false;
    }
    expect(deliveriesOf(attempt.provider_reference!).map((delivery) => delivery.body['Status'])).toEqual([
      'CONFIRMED',
      'CONFIRMED',
      'AUTHORIZED',
      'AUTHORIZED',
    ]);
    expect(await paymentStatus(payment.payment_id)).toBe('paid');
    expect(await transfersOf(payment.payment_id)).toEqual([{ type: 'payment', amount: 21_000n }]);
    expect(await eventTypes(payment.payment_id)).toEqual(['payment.paid']);

    // A genuine, signed REJECTED arriving after CONFIRMED: GetState still says CONFIRMED; nothing moves.
    const before = await snapshot(payment.payment_id);
    testApp.clock.advance(1_000);
    const late = await notifyGateway(
      signedNotification(simulator.sessions.get(attempt.provider_reference!)!, 'REJECTED'),
    );
    expect(late).toEqual({ status: 200, body: 'OK' });
    expect(await snapshot(payment.payment_id)).toEqual(before);
    const delivered = await deliveredEvents(payment.payment_id);
    expect(delivered.map((event) => event.type)).toEqual(['payment.paid']);
  });

  it('a notification ahead of GetState changes nothing (answered 503); its repeat, once GetState agrees, pays', async () => {
    const { payment, attempt, formUrl } = await cardAtTBank(90);
    simulator.faults.notifyBeforeState = true;
    try {
      await pressOnForm(formUrl, 'pay');
      // Both notifications tried once, each while GetState still showed the form.
      await eventually(
        () => deliveriesOf(attempt.provider_reference!),
        (sent) => sent.length === 2 && sent.every((delivery) => delivery.attempts === 1),
      );
      await eventually(
        () => simulator.sessions.get(attempt.provider_reference!)!.visibleStatus,
        (status) => status === 'CONFIRMED',
      );
    } finally {
      simulator.faults.notifyBeforeState = false;
    }
    const sent = deliveriesOf(attempt.provider_reference!);
    expect(sent.map((delivery) => delivery.delivered)).toEqual([false, false]);
    expect(await paymentStatus(payment.payment_id)).toBe('pending');
    expect((await attemptsOf(payment.payment_id))[0]!.status).toBe('requires_action');
    expect(await eventTypes(payment.payment_id)).toEqual([]);

    // T-Bank repeats a notification not answered OK: the same signed body, now confirmed by GetState.
    const repeated = await notifyGateway(sent[1]!.body);
    expect(repeated).toEqual({ status: 200, body: 'OK' });
    expect(await paymentStatus(payment.payment_id)).toBe('paid');
    expect(await notifyGateway(sent[0]!.body)).toEqual({ status: 200, body: 'OK' });
    expect(await transfersOf(payment.payment_id)).toEqual([{ type: 'payment', amount: 9_000n }]);
    expect(await eventTypes(payment.payment_id)).toEqual(['payment.paid']);
  });

  it('forged notifications change nothing: a wrong Token, and a right Token from outside the allowed sources', async () => {
    const { payment, attempt, formUrl } = await cardAtTBank(640);
    simulator.faults.notifications.lose = 2;
    await pressOnForm(formUrl, 'pay');
    const session = simulator.sessions.get(attempt.provider_reference!)!;
    expect(session.visibleStatus).toBe('CONFIRMED');
    const genuine = signedNotification(session, 'CONFIRMED');
    const before = await snapshot(payment.payment_id);

    const wrongToken = await notifyGateway({ ...genuine, Token: tbankToken(genuine, 'guessed-password') });
    expect(wrongToken).toEqual({ status: 400, body: 'REJECTED' });
    const wrongTerminal = await notifyGateway({ ...genuine, TerminalKey: 'OtherTerminal' });
    expect(wrongTerminal).toEqual({ status: 400, body: 'REJECTED' });
    // Through the trusted proxy, from an address T-Bank does not send from.
    const outside = await notifyGateway(genuine, { 'x-forwarded-for': OUTSIDE_ADDRESS });
    expect(outside).toEqual({ status: 400, body: 'REJECTED' });
    expect(await snapshot(payment.payment_id)).toEqual(before);

    // The same body from an allowed source is accepted.
    expect(await notifyGateway(genuine)).toEqual({ status: 200, body: 'OK' });
    expect(await paymentStatus(payment.payment_id)).toBe('paid');
  });

  it('a partial then a full refund through Cancel: payment.refunded twice, the ledger debited each time, a third refused', async () => {
    const { payment, attempt, formUrl } = await cardAtTBank(1000);
    await pressOnForm(formUrl, 'pay');
    await eventually(
      () => paymentStatus(payment.payment_id),
      (status) => status === 'paid',
    );
    await allNotificationsAccepted(attempt.provider_reference!, 2);
    const refund = (body: Record<string, unknown>) => api('POST', `/v1/payments/${payment.payment_id}/refunds`, body);

    const partial = await refund({ amount: 300.25, reason: 'one item returned' });
    expect(partial.status, JSON.stringify(partial.json)).toBe(201);
    expect(partial.json).toMatchObject({ amount: 300.25, status: 'succeeded' });
    const session = simulator.sessions.get(attempt.provider_reference!)!;
    expect(session).toMatchObject({ status: 'PARTIAL_REFUNDED', refundedAmount: 30_025 });
    const over = await refund({ amount: 700 });
    expect(over.status).toBe(400);
    expect(over.json).toMatchObject({
      error: 'invalid_request',
      message: expect.stringContaining('at most 699.75 RUB'),
    });
    expect(session.refundedAmount).toBe(30_025);

    const full = await refund({});
    expect(full.status, JSON.stringify(full.json)).toBe(201);
    expect(full.json).toMatchObject({ amount: 699.75, status: 'succeeded' });
    expect(session).toMatchObject({ status: 'REFUNDED', refundedAmount: 100_000 });
    const third = await refund({ amount: 0.01 });
    expect(third.status).toBe(409);
    expect(third.json).toMatchObject({ error: 'already_refunded' });

    // T-Bank notifies PARTIAL_REFUNDED and REFUNDED too: answered OK, nothing more moves.
    await allNotificationsAccepted(attempt.provider_reference!, 4);
    // The payment's credit; each refund reserved against it, then posted (the merchant debited once each).
    const transfers = await testApp.context.db
      .selectFrom('ledger_transfers')
      .select(['type', 'amount', 'status'])
      .where('reference_id', '=', payment.payment_id)
      .execute();
    const byAmount = (a: { amount: bigint }, b: { amount: bigint }) => (a.amount < b.amount ? -1 : 1);
    expect(transfers.filter((transfer) => transfer.type === 'payment')).toEqual([
      { type: 'payment', amount: 100_000n, status: 'posted' },
    ]);
    expect(
      transfers
        .filter((transfer) => transfer.type === 'refund' && transfer.status !== 'pending')
        .map(({ amount, status }) => ({ amount, status }))
        .sort(byAmount),
    ).toEqual([
      { amount: 30_025n, status: 'posted' },
      { amount: 69_975n, status: 'posted' },
    ]);
    const refunded = (await deliveredEvents(payment.payment_id)).filter((event) => event.type === 'payment.refunded');
    expect(refunded).toHaveLength(2);
    const list = await api('GET', `/v1/payments/${payment.payment_id}/refunds`);
    expect(list.json).toMatchObject({ amount_refunded: 1000, amount_refundable: 0 });
  });

  it('a refund whose Cancel failed is sent by the refund worker, not taken as done because an earlier refund was', async () => {
    const { payment, attempt, formUrl } = await cardAtTBank(800);
    await pressOnForm(formUrl, 'pay');
    await eventually(
      () => paymentStatus(payment.payment_id),
      (status) => status === 'paid',
    );
    const refund = (body: Record<string, unknown>) => api('POST', `/v1/payments/${payment.payment_id}/refunds`, body);
    expect((await refund({ amount: 100 })).json).toMatchObject({ status: 'succeeded' });
    const session = simulator.sessions.get(attempt.provider_reference!)!;
    expect(session).toMatchObject({ status: 'PARTIAL_REFUNDED', refundedAmount: 10_000 });

    // Every try of the second Cancel fails: the refund waits, pending.
    simulator.faults.api.push({ method: 'Cancel', kind: 'http500', count: 3 });
    const second = await refund({ amount: 250 });
    expect(second.status).toBe(201);
    expect(second.json).toMatchObject({ status: 'pending' });
    expect(session.refundedAmount).toBe(10_000);

    // GetState says PARTIAL_REFUNDED, which the first refund explains; the worker sends the Cancel.
    testApp.clock.advance(10 * 60_000);
    await createRefundWorker({ ...testApp.context, acquirerProviders: providers }).runOnce();
    expect(session).toMatchObject({ status: 'PARTIAL_REFUNDED', refundedAmount: 35_000 });
    const read = await api('GET', `/v1/payments/${payment.payment_id}/refunds/${String(second.json['refund_id'])}`);
    expect(read.json).toMatchObject({ status: 'succeeded', amount: 250 });
    expect((await api('GET', `/v1/payments/${payment.payment_id}/refunds`)).json).toMatchObject({
      amount_refunded: 350,
      amount_refundable: 450,
    });
  });
  /** A card payment paid on T-Bank's form, its AUTHORIZED and CONFIRMED notifications answered. */
  async function paidByCard(amount: number) {
    const { payment, attempt, formUrl } = await cardAtTBank(amount);
    await pressOnForm(formUrl, 'pay');
    await eventually(
      () => paymentStatus(payment.payment_id),
      (status) => status === 'paid',
    );
    await allNotificationsAccepted(attempt.provider_reference!, 2);
    const session = simulator.sessions.get(attempt.provider_reference!)!;
    const refund = (body: Record<string, unknown>) => api('POST', `/v1/payments/${payment.payment_id}/refunds`, body);
    const refundStatus = async (refundId: unknown) =>
      String((await api('GET', `/v1/payments/${payment.payment_id}/refunds/${String(refundId)}`)).json['status']);
    return { payment, session, refund, refundStatus };
  }

  async function refundTransfers(paymentId: string) {
    const rows = await testApp.context.db
      .selectFrom('ledger_transfers')
      .select(['amount', 'status'])
      .where('reference_id', '=', paymentId)
      .where('type', '=', 'refund')
      .where('status', '!=', 'pending')
      .orderBy('amount')
      .execute();
    return rows.map(({ amount, status }) => ({ amount, status }));
  }

  it('a full refund whose Cancel answer was lost is settled by T-Bank’s REFUNDED notification: one payment.refunded, one debit; a repeat changes nothing', async () => {
    const { payment, session, refund, refundStatus } = await paidByCard(500);
    // T-Bank refunds, then every answer to Cancel (and to its retries under the same ExternalRequestId) is lost.
    simulator.faults.api.push({ method: 'Cancel', kind: 'lose_answer', count: 3 });
    const created = await refund({});
    expect(created.status, JSON.stringify(created.json)).toBe(201);
    // The request may or may not have learnt the outcome; the notification (confirmed by GetState) settles it.
    await eventually(
      () => refundStatus(created.json['refund_id']),
      (status) => status === 'succeeded',
    );
    await allNotificationsAccepted(session.paymentId, 3);
    expect(session).toMatchObject({ status: 'REFUNDED', refundedAmount: 50_000 });
    expect(session.cancels.size).toBe(1);
    expect(await refundTransfers(payment.payment_id)).toEqual([{ amount: 50_000n, status: 'posted' }]);
    const refunded = (await deliveredEvents(payment.payment_id)).filter((event) => event.type === 'payment.refunded');
    expect(refunded).toHaveLength(1);

    // T-Bank repeats the notification: answered OK, nothing more moves.
    const before = await snapshot(payment.payment_id);
    expect(await notifyGateway(signedNotification(session, 'REFUNDED'))).toEqual({ status: 200, body: 'OK' });
    expect(await snapshot(payment.payment_id)).toEqual(before);
    expect(
      (await deliveredEvents(payment.payment_id)).filter((event) => event.type === 'payment.refunded'),
    ).toHaveLength(1);
  });

  it('a refund notification settles only what T-Bank refunded: forged ones, and one GetState does not confirm, leave a Cancel that never arrived pending', async () => {
    const { payment, session, refund, refundStatus } = await paidByCard(700);
    simulator.faults.api.push({ method: 'Cancel', kind: 'http500', count: 3 });
    const created = await refund({ amount: 200 });
    expect(created.json).toMatchObject({ status: 'pending' });
    expect(session.refundedAmount).toBe(0);
    const before = await snapshot(payment.payment_id);

    const genuine = signedNotification({ ...session, amount: 20_000 }, 'PARTIAL_REFUNDED');
    const forged = { ...genuine, Token: tbankToken(genuine, 'guessed-password') };
    expect(await notifyGateway(forged)).toEqual({ status: 400, body: 'REJECTED' });
    expect(await notifyGateway(genuine, { 'x-forwarded-for': OUTSIDE_ADDRESS })).toEqual({
      status: 400,
      body: 'REJECTED',
    });
    // Correctly signed (a leaked password) but GetState still says CONFIRMED: T-Bank is asked to send it again.
    expect(await notifyGateway(genuine)).toEqual({ status: 503, body: 'RETRY' });
    expect(await refundStatus(created.json['refund_id'])).toBe('pending');
    expect(await snapshot(payment.payment_id)).toEqual(before);
    expect(await refundTransfers(payment.payment_id)).toEqual([]);
  });

  it('PARTIAL_REFUNDED names no refund: a lost partial refund waits while its Cancel may be in flight, then the notification’s repeat settles it under the same ExternalRequestId, never refunding twice', async () => {
    const { payment, session, refund, refundStatus } = await paidByCard(900);
    expect((await refund({ amount: 100 })).json).toMatchObject({ status: 'succeeded' });
    simulator.faults.api.push({ method: 'Cancel', kind: 'lose_answer', count: 3 });
    const second = await refund({ amount: 250 });
    expect(second.json).toMatchObject({ status: 'pending' });
    // Both refunds' notifications were answered OK; GetState's PARTIAL_REFUNDED may be the first refund only.
    await allNotificationsAccepted(session.paymentId, 4);
    expect(await refundStatus(second.json['refund_id'])).toBe('pending');
    expect(session).toMatchObject({ status: 'PARTIAL_REFUNDED', refundedAmount: 35_000 });

    // Past the time its own request may still be calling, a repeated notification takes the refund
    // worker's step now: Cancel again under the refund's ExternalRequestId, which answers the first one.
    testApp.clock.advance(2 * 60_000);
    expect(await notifyGateway(signedNotification({ ...session, amount: 25_000 }, 'PARTIAL_REFUNDED'))).toEqual({
      status: 200,
      body: 'OK',
    });
    expect(await refundStatus(second.json['refund_id'])).toBe('succeeded');
    expect(session).toMatchObject({ status: 'PARTIAL_REFUNDED', refundedAmount: 35_000 });
    expect(session.cancels.size).toBe(2);
    expect(await refundTransfers(payment.payment_id)).toEqual([
      { amount: 10_000n, status: 'posted' },
      { amount: 25_000n, status: 'posted' },
    ]);
    const after = await snapshot(payment.payment_id);
    expect(await notifyGateway(signedNotification({ ...session, amount: 25_000 }, 'PARTIAL_REFUNDED'))).toEqual({
      status: 200,
      body: 'OK',
    });
    expect(await snapshot(payment.payment_id)).toEqual(after);
    const refunded = (await deliveredEvents(payment.payment_id)).filter((event) => event.type === 'payment.refunded');
    expect(refunded).toHaveLength(2);
  });
});

// The T-Bank connector against the simulator over real HTTP, with a loopback
// notification receiver: card on the hosted form (approved, 3-D Secure,
// declined then retried), SBP and SberPay paid in the "bank app" and learnt by
// notification, forged notifications ignored, faults of notifications and of
// the API, refunds partial and full, and the credentials check.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/clock.ts';
import type { AcquirerConnector, ChargeRequest } from '../../../src/payments/connectors/acquirer-connector.ts';
import {
  AcquirerCredentialsError,
  type AcquirerConnection,
} from '../../../src/payments/connectors/acquirer-provider.ts';
import { createTBankClient, TBankUnavailableError } from '../../../src/payments/connectors/tbank/tbank-client.ts';
import { createTBankConnector } from '../../../src/payments/connectors/tbank/tbank-connector.ts';
import { tbankProvider } from '../../../src/payments/connectors/tbank/tbank-provider.ts';
import { tbankToken } from '../../../src/payments/connectors/tbank/tbank-token.ts';
import {
  SIMULATOR_3DS_PASSCODE,
  SIMULATOR_TERMINAL,
  startTBankSimulator,
  type TBankSimulator,
} from '../../../src/payments/connectors/tbank/simulator/index.ts';
import { eventually } from '../../support/eventually.ts';
import { silentLogger, startNotificationReceiver } from '../acquirer-test-support.ts';
import { docs } from './tbank-support.ts';

type Receiver = Awaited<ReturnType<typeof startNotificationReceiver>>;

let simulator: TBankSimulator;
let receiver: Receiver;
let sequence = 0;

function connection(overrides: Partial<AcquirerConnection> = {}): AcquirerConnection {
  return {
    id: 'acq_test',
    shopId: 'shop_test',
    provider: 'tbank',
    apiUrl: simulator.url,
    credentials: { terminal_key: SIMULATOR_TERMINAL.terminalKey, password: SIMULATOR_TERMINAL.password },
    methods: ['card', 'sbp', 'sberpay'],
    notificationUrl: receiver.url,
    ...overrides,
  };
}

const deps = { clock: new ManualClock(), logger: silentLogger, notificationSources: ['127.0.0.1/32', '::1/128'] };

function connect(): AcquirerConnector {
  const connector = tbankProvider.connect(connection(), deps);
  receiver.attach(connector);
  return connector;
}

function chargeRequest(method: ChargeRequest['method'], paymentId = `pay_test${++sequence}`): ChargeRequest {
  return {
    chargeKey: `${paymentId}:attempt${sequence}-${Date.now()}`,
    paymentId,
    method,
    amountKopecks: 125_000n,
    currency: 'RUB',
    returnUrl: `https://gateway.example/pay/ord_${sequence}/return`,
    description: 'Shop: order 42',
  };
}

async function submitForm(url: string, fields: Record<string, string>): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(fields).toString(),
    redirect: 'manual',
  });
}

function actionOf(outcome: Awaited<ReturnType<AcquirerConnector['charge']>>) {
  if (outcome.status !== 'requires_action') throw new Error(`expected requires_action, got ${outcome.status}`);
  return outcome.action;
}

async function resultsFor(providerReference: string, count = 1) {
  return eventually(
    () =>
      receiver.results.filter(
        (result) =>
          result.kind === 'charge' &&
          'providerReference' in result.reference &&
          result.reference.providerReference === providerReference,
      ),
    (found) => found.length >= count,
  );
}

beforeAll(async () => {
  receiver = await startNotificationReceiver('tbank');
  simulator = await startTBankSimulator({ port: 0, notificationRetryDelaysMs: [20, 20, 20, 20, 20] });
});
afterAll(async () => {
  await simulator.close();
  await receiver.close();
});
afterEach(() => {
  simulator.faults.api.length = 0;
  simulator.faults.notifyBeforeState = false;
  Object.assign(simulator.faults.notifications, { lose: 0, duplicate: false, reverse: false });
});

describe('card on T-Bank’s hosted form', () => {
  it('redirects the payer, approval comes back to the return URL and the notification says succeeded', async () => {
    const tbank = connect();
    const request = chargeRequest('card');
    const outcome = await tbank.charge(request);
    const action = actionOf(outcome);
    expect(action.kind).toBe('redirect');
    if (action.kind !== 'redirect') return;
    expect((await fetch(action.url)).status).toBe(200);
    const back = await submitForm(action.url, { action: 'pay' });
    expect(back.status).toBe(303);
    expect(back.headers.get('location')).toBe(request.returnUrl);

    const [notified] = await resultsFor(outcome.providerReference!);
    expect(notified).toMatchObject({ kind: 'charge', outcome: { status: 'succeeded', chargeKey: request.chargeKey } });
    expect(notified!.reply).toEqual({ statusCode: 200, contentType: 'text/plain; charset=utf-8', body: 'OK' });
    expect(await tbank.lookup(request)).toMatchObject({
      status: 'succeeded',
      providerReference: outcome.providerReference,
    });
  });

  it('a double-submitted form charges through the same T-Bank session', async () => {
    const tbank = connect();
    const request = chargeRequest('card');
    const first = await tbank.charge(request);
    const second = await tbank.charge(request);
    expect(second).toEqual(first);
  });

  it('passes the 3-D Secure step with the passcode and fails it without', async () => {
    const tbank = connect();
    const passing = chargeRequest('card');
    const passingAction = actionOf(await tbank.charge(passing));
    if (passingAction.kind !== 'redirect') throw new Error('redirect expected');
    const challenge = await submitForm(passingAction.url, { action: '3ds' });
    expect(await challenge.text()).toContain('passcode');
    expect(await tbank.lookup(passing)).toMatchObject({ status: 'processing' });
    await submitForm(`${passingAction.url}/3ds`, { code: SIMULATOR_3DS_PASSCODE });
    expect(await tbank.lookup(passing)).toMatchObject({ status: 'succeeded' });

    const failing = chargeRequest('card');
    const failingAction = actionOf(await tbank.charge(failing));
    if (failingAction.kind !== 'redirect') throw new Error('redirect expected');
    await submitForm(failingAction.url, { action: '3ds' });
    const back = await submitForm(`${failingAction.url}/3ds`, { code: 'wrong' });
    expect(back.headers.get('location')).toBe(failing.returnUrl);
    const failed = await tbank.lookup(failing);
    expect(failed).toMatchObject({ status: 'declined', final: false });
    // GetState says REJECTED; the reason is in T-Bank's (signed) notification.
    expect((await resultsFor(failed!.providerReference!))[0]).toMatchObject({
      outcome: { status: 'declined', declineCode: 'authentication_failed' },
    });
  });

  it('a declined card lets the payer retry: a second session of the same order, then paid', async () => {
    const tbank = connect();
    const declined = chargeRequest('card');
    const declinedAction = actionOf(await tbank.charge(declined));
    if (declinedAction.kind !== 'redirect') throw new Error('redirect expected');
    await submitForm(declinedAction.url, { action: 'decline_funds' });
    const declinedOutcome = await tbank.lookup(declined);
    expect(declinedOutcome).toMatchObject({ status: 'declined', final: false });
    expect((await resultsFor(declinedOutcome!.providerReference!))[0]).toMatchObject({
      outcome: { status: 'declined', declineCode: 'insufficient_funds' },
    });

    const retry = { ...chargeRequest('card', declined.paymentId), chargeKey: `${declined.paymentId}:retry` };
    const retryOutcome = await tbank.charge(retry);
    expect(retryOutcome.providerReference).not.toBe(declinedOutcome!.providerReference);
    const retryAction = actionOf(retryOutcome);
    if (retryAction.kind !== 'redirect') throw new Error('redirect expected');
    await submitForm(retryAction.url, { action: 'pay' });
    expect(await tbank.lookup(retry)).toMatchObject({ status: 'succeeded' });
    const sessions = [...simulator.sessions.values()].filter((session) => session.orderId === declined.paymentId);
    expect(sessions.map((session) => session.status).sort()).toEqual(['CONFIRMED', 'REJECTED']);
  });

  it('finds a charge whose PaymentId was never recorded through CheckOrder of the payment id', async () => {
    const request = chargeRequest('card');
    const outcome = await connect().charge(request);
    // A fresh connector, as after a restart: it remembers no session.
    const restarted = connect();
    expect(await restarted.lookup({ ...request })).toMatchObject({
      status: 'processing',
      providerReference: outcome.providerReference,
    });
    expect(await restarted.lookup({ ...request, paymentId: 'pay_never_charged' })).toBeUndefined();
  });
});

describe('SBP and SberPay', () => {
  it('SBP: GetQr payload, paid in the bank app, learnt by notification', async () => {
    const tbank = connect();
    const request = chargeRequest('sbp');
    const outcome = await tbank.charge(request);
    const action = actionOf(outcome);
    expect(action).toMatchObject({ kind: 'qr' });
    if (action.kind !== 'qr') return;
    expect(action.deepLink).toBe(action.payload);
    await submitForm(action.payload.split('?')[0]!, { action: 'pay' });
    const [notified] = await resultsFor(outcome.providerReference!);
    expect(notified).toMatchObject({ kind: 'charge', outcome: { status: 'succeeded' }, reply: { body: 'OK' } });
  });

  it('SberPay: the SberPay link as QR and deep link, paid in the bank app', async () => {
    const tbank = connect();
    const request = chargeRequest('sberpay');
    const outcome = await tbank.charge(request);
    const action = actionOf(outcome);
    if (action.kind !== 'qr') throw new Error('qr expected');
    expect(action.payload).toContain(`/sberpay/${outcome.providerReference}`);
    await submitForm(action.payload, { action: 'pay' });
    expect(await tbank.lookup(request)).toMatchObject({ status: 'succeeded' });
  });
});

describe('notifications', () => {
  it('a forged Token changes nothing and is refused', async () => {
    const tbank = connect();
    const request = chargeRequest('card');
    const outcome = await tbank.charge(request);
    const forged = {
      TerminalKey: SIMULATOR_TERMINAL.terminalKey,
      OrderId: request.paymentId,
      Success: true,
      Status: 'CONFIRMED',
      PaymentId: Number(outcome.providerReference),
      ErrorCode: '0',
      Amount: 125_000,
    };
    const result = await tbank.handleNotification!({
      headers: {},
      rawBody: JSON.stringify({ ...forged, Token: tbankToken(forged, 'not-the-password') }),
      remoteAddress: '127.0.0.1',
    });
    expect(result).toMatchObject({ kind: 'ignored', reason: 'wrong TerminalKey or Token' });
    expect(result.reply.body).not.toBe('OK');
    expect(await tbank.lookup(request)).toMatchObject({ status: 'requires_action' });
  });

  it('a rightly signed notification from outside the allowed networks is ignored', async () => {
    const tbank = connect();
    const body = { TerminalKey: SIMULATOR_TERMINAL.terminalKey, PaymentId: 1, Status: 'CONFIRMED' };
    const result = await tbank.handleNotification!({
      headers: {},
      rawBody: JSON.stringify({ ...body, Token: tbankToken(body, SIMULATOR_TERMINAL.password) }),
      remoteAddress: '203.0.113.9',
    });
    expect(result).toMatchObject({ kind: 'ignored', reason: expect.stringContaining('203.0.113.9') });
  });

  it("the docs' notification example passes the Token check and is then confirmed (or not) by GetState", async () => {
    const { password, notification } = docs.notificationTokenExample;
    const tbank = createTBankConnector({
      name: 'tbank:docs',
      methods: ['card'],
      client: createTBankClient({ apiUrl: simulator.url, terminalKey: String(notification['TerminalKey']), password }),
      password,
      notificationUrl: receiver.url,
      notificationSources: ['127.0.0.1/32'],
      logger: silentLogger,
    });
    const result = await tbank.handleNotification!({
      headers: {},
      rawBody: JSON.stringify(notification),
      remoteAddress: '127.0.0.1',
    });
    // The simulator has no such terminal: GetState is refused, so the notification proves nothing.
    expect(result).toMatchObject({ kind: 'ignored', reason: 'T-Bank does not know PaymentId 8742591' });
  });

  it('duplicated and out-of-order notifications all confirm the same single outcome', async () => {
    const tbank = connect();
    Object.assign(simulator.faults.notifications, { duplicate: true, reverse: true });
    const request = chargeRequest('card');
    const outcome = await tbank.charge(request);
    const action = actionOf(outcome);
    if (action.kind !== 'redirect') throw new Error('redirect expected');
    await submitForm(action.url, { action: 'pay' });
    const results = await resultsFor(outcome.providerReference!, 4);
    const statuses = simulator.deliveries
      .filter((delivery) => String(delivery.body['PaymentId']) === outcome.providerReference)
      .map((delivery) => delivery.body['Status']);
    expect(statuses).toEqual(['CONFIRMED', 'CONFIRMED', 'AUTHORIZED', 'AUTHORIZED']);
    expect(new Set(results.map((result) => JSON.stringify(result.kind === 'charge' && result.outcome)))).toEqual(
      new Set([
        JSON.stringify({
          status: 'succeeded',
          chargeKey: request.chargeKey,
          providerReference: outcome.providerReference,
        }),
      ]),
    );
  });

  it('a notification before GetState shows the change is answered "retry", and the repeat is OK', async () => {
    const tbank = connect();
    simulator.faults.notifyBeforeState = true;
    const request = chargeRequest('sbp');
    const outcome = await tbank.charge(request);
    const action = actionOf(outcome);
    if (action.kind !== 'qr') throw new Error('qr expected');
    await submitForm(action.payload.split('?')[0]!, { action: 'pay' });
    await resultsFor(outcome.providerReference!);
    const retried = receiver.results.filter(
      (result) => result.kind === 'ignored' && result.reason.startsWith('GetState still says'),
    );
    expect(retried.length).toBeGreaterThan(0);
    expect(retried[0]!.reply.body).not.toBe('OK');
    const deliveries = await eventually(
      () => simulator.deliveries.filter((delivery) => String(delivery.body['PaymentId']) === outcome.providerReference),
      (found) => found.every((delivery) => delivery.delivered),
    );
    expect(Math.max(...deliveries.map((delivery) => delivery.attempts))).toBeGreaterThan(1);
  });

  it('a lost notification leaves lookup to find the payment paid', async () => {
    const tbank = connect();
    simulator.faults.notifications.lose = 2;
    const request = chargeRequest('card');
    const outcome = await tbank.charge(request);
    const action = actionOf(outcome);
    if (action.kind !== 'redirect') throw new Error('redirect expected');
    await submitForm(action.url, { action: 'pay' });
    expect(await tbank.lookup(request)).toMatchObject({ status: 'succeeded' });
    expect(
      simulator.deliveries.some((delivery) => String(delivery.body['PaymentId']) === outcome.providerReference),
    ).toBe(false);
  });
});

describe('refunds', () => {
  it('a partial then a full refund succeed, a repeat of one refunds nothing more, and a third is refused', async () => {
    const tbank = connect();
    const request = chargeRequest('card');
    const outcome = await tbank.charge(request);
    const action = actionOf(outcome);
    if (action.kind !== 'redirect') throw new Error('redirect expected');
    await submitForm(action.url, { action: 'pay' });
    const refundOf = (refundKey: string, amountKopecks: bigint) => ({
      refundKey,
      chargeKey: request.chargeKey,
      paymentId: request.paymentId,
      providerReference: outcome.providerReference,
      amountKopecks,
    });
    expect(await tbank.refund(refundOf('rf_1', 25_000n))).toMatchObject({ status: 'succeeded' });
    expect(await tbank.refund(refundOf('rf_1', 25_000n))).toMatchObject({ status: 'succeeded' });
    expect(simulator.sessions.get(outcome.providerReference!)).toMatchObject({
      refundedAmount: 25_000,
      status: 'PARTIAL_REFUNDED',
    });
    // PARTIAL_REFUNDED tells no refund apart: a look-up proves none (the Cancel under its key answers).
    expect(await tbank.lookupRefund(refundOf('rf_1', 25_000n))).toBeUndefined();
    expect(await tbank.lookupRefund(refundOf('rf_2', 100_000n))).toBeUndefined();
    expect(await tbank.refund(refundOf('rf_2', 100_000n))).toMatchObject({ status: 'succeeded' });
    // Returned in full, no refund of it can still be owed.
    expect(await tbank.lookupRefund(refundOf('rf_2', 100_000n))).toMatchObject({ status: 'succeeded' });
    expect(simulator.sessions.get(outcome.providerReference!)).toMatchObject({
      refundedAmount: 125_000,
      status: 'REFUNDED',
    });
    const third = await tbank.refund(refundOf('rf_3', 1_000n));
    expect(third).toMatchObject({ status: 'refused', reason: expect.stringContaining('8') });
    // A captured charge stays captured for lookup, refunds or not.
    expect(await tbank.lookup(request)).toMatchObject({ status: 'succeeded' });

    // Each Cancel was notified (PARTIAL_REFUNDED, then REFUNDED); confirmed by GetState, each
    // names the charge whose pending refunds the gateway must look up, and no refund.
    const refundResults = await eventually(
      () =>
        receiver.results.filter(
          (result) =>
            result.kind === 'charge_refunds' && result.reference.providerReference === outcome.providerReference,
        ),
      (found) => found.length >= 2,
    );
    for (const result of refundResults) expect(result.reply.body).toBe('OK');
    const notified = simulator.deliveries
      .filter((delivery) => String(delivery.body['PaymentId']) === outcome.providerReference)
      .map((delivery) => delivery.body['Status']);
    expect(notified).toEqual(['AUTHORIZED', 'CONFIRMED', 'PARTIAL_REFUNDED', 'REFUNDED']);
  });

  it('a refund notification ahead of GetState is answered for a repeat; a signed one T-Bank never sent proves nothing', async () => {
    const tbank = connect();
    const request = chargeRequest('card');
    const outcome = await tbank.charge(request);
    const action = actionOf(outcome);
    if (action.kind !== 'redirect') throw new Error('redirect expected');
    await submitForm(action.url, { action: 'pay' });
    const unsigned = {
      TerminalKey: SIMULATOR_TERMINAL.terminalKey,
      OrderId: request.paymentId,
      Success: true,
      Status: 'REFUNDED',
      PaymentId: Number(outcome.providerReference),
      ErrorCode: '0',
      Amount: 125_000,
    };
    const result = await tbank.handleNotification!({
      headers: {},
      rawBody: JSON.stringify({ ...unsigned, Token: tbankToken(unsigned, SIMULATOR_TERMINAL.password) }),
      remoteAddress: '127.0.0.1',
    });
    // GetState says CONFIRMED: nothing was refunded, so nothing is proved, and T-Bank is asked again.
    expect(result).toMatchObject({ kind: 'ignored', reply: { statusCode: 503 } });
  });
});

describe('faults of the API', () => {
  it('retries Init after 500 and 429 and opens one session', async () => {
    const tbank = connect();
    simulator.faults.api.push(
      { method: 'Init', kind: 'http500', count: 1 },
      { method: 'Init', kind: 'http429', count: 1 },
    );
    const request = chargeRequest('card');
    const before = simulator.sessions.size;
    expect(await tbank.charge(request)).toMatchObject({ status: 'requires_action' });
    expect(simulator.sessions.size).toBe(before + 1);
  });

  it('gives up with TBankUnavailableError when every attempt times out', async () => {
    simulator.faults.api.push({ method: 'GetState', kind: 'hang', count: 2 });
    const client = createTBankClient({
      ...SIMULATOR_TERMINAL,
      apiUrl: simulator.url,
      timeoutMs: 200,
      maxAttempts: 2,
      retryBaseMs: 1,
    });
    await expect(client.post('GetState', { PaymentId: '1' })).rejects.toBeInstanceOf(TBankUnavailableError);
  });
});

describe('credentials check', () => {
  it('accepts the right terminal and password (the probe payment is merely unknown)', async () => {
    await expect(tbankProvider.verifyCredentials(connection(), deps)).resolves.toBeUndefined();
  });

  it('rejects a wrong password and an unknown terminal with a clear error', async () => {
    const wrongPassword = connection({
      credentials: { terminal_key: SIMULATOR_TERMINAL.terminalKey, password: 'nope' },
    });
    await expect(tbankProvider.verifyCredentials(wrongPassword, deps)).rejects.toBeInstanceOf(AcquirerCredentialsError);
    const unknownTerminal = connection({ credentials: { terminal_key: 'NoSuchTerminal', password: 'x' } });
    await expect(tbankProvider.verifyCredentials(unknownTerminal, deps)).rejects.toThrow(
      /rejects terminal NoSuchTerminal/,
    );
  });
});

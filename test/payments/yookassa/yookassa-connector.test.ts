// The YooKassa connector against the simulator over real HTTP, with a loopback
// notification receiver: card and SberPay on the confirmation page (approved,
// 3-D Secure, declined then retried), SBP by QR, retries under one
// Idempotence-Key, a lost answer found again by listing, forged and faulty
// notifications, refunds partial and full, the credentials check.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/clock.ts';
import type { AcquirerConnector, ChargeRequest } from '../../../src/payments/connectors/acquirer-connector.ts';
import {
  AcquirerCredentialsError,
  type AcquirerConnection,
} from '../../../src/payments/connectors/acquirer-provider.ts';
import {
  createYooKassaClient,
  YooKassaUnavailableError,
} from '../../../src/payments/connectors/yookassa/yookassa-client.ts';
import { createYooKassaConnector } from '../../../src/payments/connectors/yookassa/yookassa-connector.ts';
import { yookassaProvider } from '../../../src/payments/connectors/yookassa/yookassa-provider.ts';
import {
  SIMULATOR_3DS_PASSCODE,
  SIMULATOR_SHOP,
  startYooKassaSimulator,
  type YooKassaSimulator,
} from '../../../src/payments/connectors/yookassa/simulator/index.ts';
import { eventually } from '../../support/eventually.ts';
import { silentLogger, startNotificationReceiver } from '../acquirer-test-support.ts';

type Receiver = Awaited<ReturnType<typeof startNotificationReceiver>>;

let simulator: YooKassaSimulator;
let receiver: Receiver;
let sequence = 0;

function connection(overrides: Partial<AcquirerConnection> = {}): AcquirerConnection {
  return {
    id: 'acq_test',
    shopId: 'shop_test',
    provider: 'yookassa',
    apiUrl: simulator.url,
    credentials: { shop_id: SIMULATOR_SHOP.shopId, secret_key: SIMULATOR_SHOP.secretKey },
    methods: ['card', 'sbp', 'sberpay'],
    notificationUrl: receiver.url,
    ...overrides,
  };
}

const deps = { clock: new ManualClock(), logger: silentLogger, notificationSources: ['127.0.0.1/32', '::1/128'] };

function connect(): AcquirerConnector {
  const connector = yookassaProvider.connect(connection(), deps);
  receiver.attach(connector);
  return connector;
}

/** A connector whose calls give up quickly (one attempt), for answers that never come. */
function impatient(): AcquirerConnector {
  return createYooKassaConnector({
    name: 'yookassa:impatient',
    methods: ['card', 'sbp', 'sberpay'],
    client: createYooKassaClient({ apiUrl: simulator.url, ...SIMULATOR_SHOP, timeoutMs: 300, maxAttempts: 1 }),
    notificationSources: ['127.0.0.1/32'],
    logger: silentLogger,
  });
}

function chargeRequest(method: ChargeRequest['method'], paymentId = `pay_test${++sequence}`): ChargeRequest {
  return {
    chargeKey: `${paymentId}:attempt${sequence}`,
    paymentId,
    method,
    amountKopecks: 125_050n,
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

async function redirectUrl(connector: AcquirerConnector, request: ChargeRequest) {
  const outcome = await connector.charge(request);
  const action = actionOf(outcome);
  if (action.kind !== 'redirect') throw new Error('redirect expected');
  return { outcome, url: action.url, providerReference: outcome.providerReference! };
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
  receiver = await startNotificationReceiver('yookassa');
  simulator = await startYooKassaSimulator({
    port: 0,
    shops: [{ ...SIMULATOR_SHOP, notificationUrl: receiver.url }],
    notificationRetryDelaysMs: [20, 20, 20, 20, 20],
  });
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

describe('card on YooKassa’s confirmation page', () => {
  it('sends kopecks as an exact decimal string with our ids in metadata, and the approval arrives by notification', async () => {
    const yookassa = connect();
    const request = chargeRequest('card');
    const { url, providerReference } = await redirectUrl(yookassa, request);
    const created = simulator.payments.get(providerReference)!;
    expect(created).toMatchObject({
      amountKopecks: 125_050n,
      methodType: 'bank_card',
      confirmationType: 'redirect',
      returnUrl: request.returnUrl,
      description: request.description,
      metadata: { paygate_payment_id: request.paymentId, paygate_charge_key: request.chargeKey },
    });
    expect((await fetch(url)).status).toBe(200);
    const back = await submitForm(url, { action: 'pay' });
    expect(back.status).toBe(303);
    expect(back.headers.get('location')).toBe(request.returnUrl);

    const [notified] = await resultsFor(providerReference);
    expect(notified).toMatchObject({ kind: 'charge', outcome: { status: 'succeeded', chargeKey: request.chargeKey } });
    expect(notified!.reply.statusCode).toBe(200);
    expect(await yookassa.lookup(request)).toMatchObject({ status: 'succeeded', providerReference });
  });

  it('a double-submitted form gets the same YooKassa payment (same Idempotence-Key and body)', async () => {
    const yookassa = connect();
    const request = chargeRequest('card');
    const before = simulator.payments.size;
    const first = await yookassa.charge(request);
    const second = await yookassa.charge(request);
    expect(second).toEqual(first);
    expect(simulator.payments.size).toBe(before + 1);
  });

  it('passes the 3-D Secure step with the passcode and fails it without (authentication_failed)', async () => {
    const yookassa = connect();
    const passing = chargeRequest('card');
    const pass = await redirectUrl(yookassa, passing);
    expect(await (await submitForm(pass.url, { action: '3ds' })).text()).toContain('passcode');
    expect(await yookassa.lookup({ ...passing, providerReference: pass.providerReference })).toMatchObject({
      status: 'requires_action',
    });
    const threeDs = pass.url.replace('/checkout/payments/v2/contract', '/checkout/3ds');
    await submitForm(threeDs, { code: SIMULATOR_3DS_PASSCODE });
    expect(await yookassa.lookup({ ...passing, providerReference: pass.providerReference })).toMatchObject({
      status: 'succeeded',
    });

    const failing = chargeRequest('card');
    const fail = await redirectUrl(yookassa, failing);
    await submitForm(fail.url, { action: '3ds' });
    const back = await submitForm(fail.url.replace('/checkout/payments/v2/contract', '/checkout/3ds'), { code: 'x' });
    expect(back.headers.get('location')).toBe(failing.returnUrl);
    expect(await yookassa.lookup({ ...failing, providerReference: fail.providerReference })).toMatchObject({
      status: 'declined',
      declineCode: 'authentication_failed',
      final: false,
    });
  });

  it('a declined card (insufficient_funds) lets the payer retry under a new key, then paid', async () => {
    const yookassa = connect();
    const declined = chargeRequest('card');
    const first = await redirectUrl(yookassa, declined);
    await submitForm(first.url, { action: 'decline_funds' });
    const [notified] = await resultsFor(first.providerReference);
    expect(notified).toMatchObject({
      outcome: { status: 'declined', declineCode: 'insufficient_funds', final: false, chargeKey: declined.chargeKey },
    });

    const retry = { ...declined, chargeKey: `${declined.paymentId}:retry` };
    const second = await redirectUrl(yookassa, retry);
    expect(second.providerReference).not.toBe(first.providerReference);
    await submitForm(second.url, { action: 'pay' });
    expect(await yookassa.lookup({ ...retry, providerReference: second.providerReference })).toMatchObject({
      status: 'succeeded',
    });
  });

  it('a general decline maps to card_declined', async () => {
    const yookassa = connect();
    const request = chargeRequest('card');
    const { url, providerReference } = await redirectUrl(yookassa, request);
    await submitForm(url, { action: 'decline' });
    expect(await yookassa.lookup({ ...request, providerReference })).toMatchObject({
      status: 'declined',
      declineCode: 'card_declined',
    });
  });
});

describe('SBP and SberPay', () => {
  it('SBP: a qr confirmation, its link paid in the bank app, learnt by notification', async () => {
    const yookassa = connect();
    const request = chargeRequest('sbp');
    const outcome = await yookassa.charge(request);
    const action = actionOf(outcome);
    if (action.kind !== 'qr') throw new Error('qr expected');
    expect(action.deepLink).toBe(action.payload);
    expect(simulator.payments.get(outcome.providerReference!)).toMatchObject({
      methodType: 'sbp',
      confirmationType: 'qr',
    });
    await submitForm(action.payload.split('?')[0]!, { action: 'pay' });
    const [notified] = await resultsFor(outcome.providerReference!);
    expect(notified).toMatchObject({ kind: 'charge', outcome: { status: 'succeeded' }, reply: { statusCode: 200 } });
  });

  it('SberPay: payment_method_data sberbank with a redirect to the confirmation page', async () => {
    const yookassa = connect();
    const request = chargeRequest('sberpay');
    const { url, providerReference } = await redirectUrl(yookassa, request);
    expect(simulator.payments.get(providerReference)).toMatchObject({ methodType: 'sberbank' });
    expect(await (await fetch(url)).text()).toContain('SberPay');
    await submitForm(url, { action: 'pay' });
    expect(await yookassa.lookup({ ...request, providerReference })).toMatchObject({ status: 'succeeded' });
  });
});

describe('faults of the API', () => {
  it('retries a POST after 500, 429 and 202 with the same Idempotence-Key and makes one payment', async () => {
    const yookassa = connect();
    simulator.faults.api.push(
      { route: 'POST /payments', kind: 'http500', count: 1 },
      { route: 'POST /payments', kind: 'http429', count: 1 },
    );
    const before = simulator.payments.size;
    expect(await yookassa.charge(chargeRequest('card'))).toMatchObject({ status: 'requires_action' });
    simulator.faults.api.push({ route: 'POST /payments', kind: 'processing', count: 1 });
    expect(await yookassa.charge(chargeRequest('card'))).toMatchObject({ status: 'requires_action' });
    expect(simulator.payments.size).toBe(before + 2);
  });

  it('a retry after a lost answer gets the payment made by the first try (same key, same body)', async () => {
    const request = chargeRequest('card');
    simulator.faults.api.push({ route: 'POST /payments', kind: 'lose_answer', count: 1 });
    const before = simulator.payments.size;
    const patient = createYooKassaConnector({
      name: 'yookassa:retrying',
      methods: ['card'],
      client: createYooKassaClient({ apiUrl: simulator.url, ...SIMULATOR_SHOP, timeoutMs: 300, retryBaseMs: 1 }),
      notificationSources: [],
      logger: silentLogger,
    });
    const outcome = await patient.charge(request);
    expect(outcome).toMatchObject({ status: 'requires_action' });
    expect(simulator.payments.size).toBe(before + 1);
  });

  it('a charge whose answer is lost is found by lookup without YooKassa’s id, and nothing is created by looking', async () => {
    const request = chargeRequest('card');
    const createdAt = new Date();
    simulator.faults.api.push({ route: 'POST /payments', kind: 'lose_answer', count: 1 });
    await expect(impatient().charge(request)).rejects.toBeInstanceOf(YooKassaUnavailableError);
    const made = [...simulator.payments.values()].filter(
      (payment) => payment.metadata['paygate_charge_key'] === request.chargeKey,
    );
    expect(made).toHaveLength(1);
    const count = simulator.payments.size;

    const found = await connect().lookup({ ...request, createdAt });
    expect(found).toMatchObject({ status: 'requires_action', providerReference: made[0]!.id });
    expect(await connect().lookup({ ...chargeRequest('card'), createdAt })).toBeUndefined();
    expect(simulator.payments.size).toBe(count);

    // Its notification names our charge key (from the API's metadata), so the attempt is found without the id.
    if (found?.status !== 'requires_action' || found.action.kind !== 'redirect') throw new Error('redirect expected');
    await submitForm(found.action.url, { action: 'pay' });
    const [notified] = await resultsFor(made[0]!.id);
    expect(notified).toMatchObject({
      kind: 'charge',
      reference: {
        chargeKey: request.chargeKey,
        paymentId: request.paymentId,
        method: 'card',
        amountKopecks: request.amountKopecks,
      },
      outcome: { status: 'succeeded' },
    });
  });

  it('gives up with YooKassaUnavailableError when every attempt times out', async () => {
    simulator.faults.api.push({ route: 'GET /payments/{id}', kind: 'hang', count: 2 });
    const client = createYooKassaClient({
      ...SIMULATOR_SHOP,
      apiUrl: simulator.url,
      timeoutMs: 200,
      maxAttempts: 2,
      retryBaseMs: 1,
    });
    await expect(client.get('/payments/nope')).rejects.toBeInstanceOf(YooKassaUnavailableError);
  });

  it('a refusal (400 invalid_request) is a decline the payer may retry, named after YooKassa’s code', async () => {
    const outcome = await connect().charge({ ...chargeRequest('card'), returnUrl: 'not a url' });
    expect(outcome).toMatchObject({ status: 'declined', declineCode: 'yookassa_invalid_request', final: false });
  });
});

describe('notifications', () => {
  it('a forged payment.succeeded for a pending payment changes nothing: the API says pending', async () => {
    const yookassa = connect();
    const request = chargeRequest('card');
    const { providerReference } = await redirectUrl(yookassa, request);
    const forged = {
      type: 'notification',
      event: 'payment.succeeded',
      object: { id: providerReference, status: 'succeeded', paid: true, amount: { value: '1250.50', currency: 'RUB' } },
    };
    const result = await yookassa.handleNotification!({
      headers: {},
      rawBody: JSON.stringify(forged),
      remoteAddress: '127.0.0.1',
    });
    expect(result).toMatchObject({ kind: 'ignored', reason: 'the API still says pending' });
    expect(result.reply.statusCode).not.toBe(200);
    expect(simulator.payments.get(providerReference)).toMatchObject({ status: 'pending' });
    expect(await yookassa.lookup({ ...request, providerReference })).toMatchObject({ status: 'requires_action' });

    const unknown = await yookassa.handleNotification!({
      headers: {},
      rawBody: JSON.stringify({ ...forged, object: { ...forged.object, id: '2419a771-000f-5000-9000-1edaf29243f2' } }),
      remoteAddress: '127.0.0.1',
    });
    expect(unknown).toMatchObject({ kind: 'ignored', reason: expect.stringContaining('does not know payment') });
  });

  it('a notification from outside YooKassa’s networks is refused unread', async () => {
    const yookassa = yookassaProvider.connect(connection(), { ...deps, notificationSources: undefined });
    const body = { type: 'notification', event: 'payment.succeeded', object: { id: 'x' } };
    const outside = await yookassa.handleNotification!({
      headers: {},
      rawBody: JSON.stringify(body),
      remoteAddress: '203.0.113.9',
    });
    expect(outside).toMatchObject({ kind: 'ignored', reason: expect.stringContaining('203.0.113.9') });
    expect(outside.reply.statusCode).toBe(403);
    // One of YooKassa's published addresses passes the source check (and then asks the API).
    const inside = await yookassa.handleNotification!({
      headers: {},
      rawBody: JSON.stringify(body),
      remoteAddress: '::ffff:185.71.76.5',
    });
    expect(inside).toMatchObject({ kind: 'ignored', reason: 'YooKassa does not know payment x' });
  });

  it('duplicated notifications all confirm the same single outcome', async () => {
    const yookassa = connect();
    Object.assign(simulator.faults.notifications, { duplicate: true });
    const request = chargeRequest('card');
    const { url, providerReference } = await redirectUrl(yookassa, request);
    await submitForm(url, { action: 'pay' });
    const results = await resultsFor(providerReference, 2);
    expect(new Set(results.map((result) => JSON.stringify(result.kind === 'charge' && result.outcome)))).toEqual(
      new Set([JSON.stringify({ status: 'succeeded', chargeKey: request.chargeKey, providerReference })]),
    );
  });

  it('a notification before the API shows the change is answered non-200, and the repeat is accepted', async () => {
    const yookassa = connect();
    simulator.faults.notifyBeforeState = true;
    const request = chargeRequest('sbp');
    const outcome = await yookassa.charge(request);
    const action = actionOf(outcome);
    if (action.kind !== 'qr') throw new Error('qr expected');
    await submitForm(action.payload.split('?')[0]!, { action: 'pay' });
    await resultsFor(outcome.providerReference!);
    const deliveries = await eventually(
      () =>
        simulator.deliveries.filter(
          (delivery) => (delivery.body['object'] as { id: string }).id === outcome.providerReference,
        ),
      (found) => found.length > 0 && found.every((delivery) => delivery.delivered),
    );
    expect(Math.max(...deliveries.map((delivery) => delivery.attempts))).toBeGreaterThan(1);
  });

  it('a lost notification leaves lookup to find the payment paid', async () => {
    const yookassa = connect();
    simulator.faults.notifications.lose = 1;
    const request = chargeRequest('card');
    const { url, providerReference } = await redirectUrl(yookassa, request);
    await submitForm(url, { action: 'pay' });
    expect(await yookassa.lookup({ ...request, providerReference })).toMatchObject({ status: 'succeeded' });
    expect(
      simulator.deliveries.some((delivery) => (delivery.body['object'] as { id: string }).id === providerReference),
    ).toBe(false);
  });
});

describe('refunds', () => {
  it('partial then full refunds succeed, a repeat refunds nothing more, a third is refused, and each is notified', async () => {
    const yookassa = connect();
    const request = chargeRequest('card');
    const { url, providerReference } = await redirectUrl(yookassa, request);
    await submitForm(url, { action: 'pay' });
    const refundOf = (refundKey: string, amountKopecks: bigint) => ({
      refundKey,
      chargeKey: request.chargeKey,
      paymentId: request.paymentId,
      providerReference,
      amountKopecks,
    });
    const key = `prf_${sequence}_1`;
    const partial = await yookassa.refund(refundOf(key, 25_050n));
    expect(partial).toMatchObject({ status: 'succeeded', refundKey: key });
    expect(await yookassa.refund(refundOf(key, 25_050n))).toEqual(partial);
    expect(simulator.payments.get(providerReference)).toMatchObject({ refundedKopecks: 25_050n });
    // Found by its id, and by listing the payment's refunds when the id never came back.
    expect(
      await yookassa.lookupRefund({
        ...refundOf(key, 25_050n),
        providerRefundReference: partial.status === 'succeeded' ? partial.providerRefundReference : undefined,
      }),
    ).toEqual(partial);
    expect(await yookassa.lookupRefund(refundOf(key, 25_050n))).toEqual(partial);
    expect(await yookassa.lookupRefund(refundOf('prf_never', 1n))).toBeUndefined();

    expect(await yookassa.refund(refundOf(`prf_${sequence}_2`, 100_000n))).toMatchObject({ status: 'succeeded' });
    expect(simulator.payments.get(providerReference)).toMatchObject({ refundedKopecks: 125_050n });
    const third = await yookassa.refund(refundOf(`prf_${sequence}_3`, 1_00n));
    expect(third).toMatchObject({ status: 'refused', reason: expect.stringContaining('invalid_request') });

    const refundResults = await eventually(
      () =>
        receiver.results.filter(
          (result) => result.kind === 'refund' && result.refundKey.startsWith(`prf_${sequence}_`),
        ),
      (found) => found.length >= 2,
    );
    expect(refundResults.map((result) => result.kind === 'refund' && result.outcome.status)).toEqual([
      'succeeded',
      'succeeded',
    ]);
    expect(await yookassa.lookup(request)).toMatchObject({ status: 'succeeded' });
  });
});

describe('the daily list', () => {
  it('listCharges pages through every payment created in the range, with our keys from metadata', async () => {
    const yookassa = connect();
    const from = new Date(Date.now() - 1000);
    const requests = Array.from({ length: 3 }, () => chargeRequest('card'));
    for (const request of requests) await yookassa.charge(request);
    const { url, providerReference } = await redirectUrl(yookassa, chargeRequest('card'));
    await submitForm(url, { action: 'pay' });
    const to = new Date(Date.now() + 1000);
    const listed = [];
    for await (const charge of yookassa.listCharges!({ from, to })) listed.push(charge);
    for (const request of requests) {
      expect(listed).toContainEqual(
        expect.objectContaining({
          chargeKey: request.chargeKey,
          paymentId: request.paymentId,
          status: 'pending',
          amountKopecks: 125_050n,
        }),
      );
    }
    expect(listed).toContainEqual(expect.objectContaining({ providerReference, status: 'succeeded' }));
    let future = 0;
    for await (const charge of yookassa.listCharges!({ from: to, to: new Date(to.getTime() + 1000) }))
      future += charge ? 1 : 0;
    expect(future).toBe(0);
  });

  it('more than one page: 101 payments come back through next_cursor', async () => {
    const client = createYooKassaClient({ apiUrl: simulator.url, ...SIMULATOR_SHOP });
    const from = new Date(Date.now() - 1);
    const ids = new Set<string>();
    for (let index = 0; index < 101; index += 1) {
      const created = await client.post(
        '/payments',
        {
          amount: { value: '1.00', currency: 'RUB' },
          capture: true,
          confirmation: { type: 'qr' },
          payment_method_data: { type: 'sbp' },
        },
        `page-test-${sequence}-${index}`,
      );
      ids.add(String(created['id']));
    }
    const listed = new Set<string>();
    for await (const charge of connect().listCharges!({ from, to: new Date(Date.now() + 1000) })) {
      listed.add(charge.providerReference);
    }
    for (const id of ids) expect(listed.has(id)).toBe(true);
  });
});

describe('credentials check', () => {
  it('accepts the right shop id and secret key (GET /v3/me)', async () => {
    await expect(yookassaProvider.verifyCredentials(connection(), deps)).resolves.toBeUndefined();
  });

  it('rejects a wrong secret key and an unknown shop with a clear error', async () => {
    const wrongKey = connection({ credentials: { shop_id: SIMULATOR_SHOP.shopId, secret_key: 'test_nope' } });
    await expect(yookassaProvider.verifyCredentials(wrongKey, deps)).rejects.toBeInstanceOf(AcquirerCredentialsError);
    const unknownShop = connection({ credentials: { shop_id: '999', secret_key: 'x' } });
    await expect(yookassaProvider.verifyCredentials(unknownShop, deps)).rejects.toThrow(
      /rejects shop 999.*invalid_credentials/,
    );
  });
});

// YooKassa's own examples, copied from its official SDKs (fixtures/yookassa-sdk-examples.json,
// each with repository, path and commit), replayed: the connector reads the SDKs' payment
// and refund objects as the outcomes they show, takes their notification bodies through
// handleNotification (the body's claims never believed: the simulator's API decides), and
// the simulator answers objects of the same JSON kinds as the SDKs' for every field both have.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AcquirerConnector } from '../../../src/payments/connectors/acquirer-connector.ts';
import { createYooKassaClient } from '../../../src/payments/connectors/yookassa/yookassa-client.ts';
import {
  createYooKassaConnector,
  kopecksOf,
  outcomeOfPayment,
} from '../../../src/payments/connectors/yookassa/yookassa-connector.ts';
import {
  SIMULATOR_SHOP,
  startYooKassaSimulator,
  type YooKassaSimulator,
} from '../../../src/payments/connectors/yookassa/simulator/index.ts';
import { jsonKind, silentLogger } from '../acquirer-test-support.ts';

type Json = Record<string, unknown>;

interface SdkExamples {
  readonly paymentWaitingForCaptureNotification: { body: Json };
  readonly refundSucceededNotification: { body: Json };
  readonly pendingPayment: { object: Json };
  readonly succeededPayment: { object: Json };
  readonly succeededRefund: { object: Json };
  readonly listCursor: { field: string };
}

const sdk = JSON.parse(
  readFileSync(new URL('./fixtures/yookassa-sdk-examples.json', import.meta.url), 'utf8'),
) as SdkExamples;

let simulator: YooKassaSimulator;
let connector: AcquirerConnector;
const basic = `Basic ${Buffer.from(`${SIMULATOR_SHOP.shopId}:${SIMULATOR_SHOP.secretKey}`).toString('base64')}`;

beforeAll(async () => {
  simulator = await startYooKassaSimulator({ port: 0, notify: false });
  connector = createYooKassaConnector({
    name: 'yookassa:sdk',
    methods: ['card', 'sbp', 'sberpay'],
    client: createYooKassaClient({ apiUrl: simulator.url, ...SIMULATOR_SHOP }),
    notificationSources: ['127.0.0.1/32'],
    logger: silentLogger,
  });
});
afterAll(async () => {
  await simulator.close();
});

/** The SDK's body with the object's id replaced by one the simulator holds; nothing else changed. */
function notificationFor(body: Json, id: string) {
  return {
    headers: {},
    rawBody: JSON.stringify({ ...body, object: { ...(body['object'] as Json), id } }),
    remoteAddress: '127.0.0.1',
  };
}

async function getJson(path: string): Promise<Json> {
  const response = await fetch(`${simulator.url}${path}`, { headers: { authorization: basic } });
  expect(response.status).toBe(200);
  return (await response.json()) as Json;
}

/** For every field both objects have, the same JSON kind, nested objects compared field by field. */
function expectSameKinds(ours: Json, theirs: Json, path = ''): number {
  let compared = 0;
  for (const [name, value] of Object.entries(theirs)) {
    if (!(name in ours)) continue;
    const mine = ours[name];
    expect(jsonKind(mine), `${path}${name}`).toBe(jsonKind(value));
    compared += 1;
    if (jsonKind(value) === 'object') compared += expectSameKinds(mine as Json, value as Json, `${path}${name}.`);
  }
  return compared;
}

async function paidPayment(): Promise<{ id: string; chargeKey: string }> {
  const chargeKey = `pay_sdk:${Date.now()}`;
  const outcome = await connector.charge({
    chargeKey,
    paymentId: 'pay_sdk',
    method: 'card',
    amountKopecks: 20_000n,
    currency: 'RUB',
    returnUrl: 'https://gateway.example/pay/ord_sdk/return',
    description: 'Shop: SDK example',
  });
  if (outcome.status !== 'requires_action' || outcome.action.kind !== 'redirect') throw new Error('redirect expected');
  const approved = await fetch(outcome.action.url, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: 'action=pay',
    redirect: 'manual',
  });
  expect(approved.status).toBe(303);
  return { id: outcome.providerReference!, chargeKey };
}

describe("the SDKs' payment and refund objects read by the connector", () => {
  it('a pending payment with a redirect is the payer sent to its confirmation_url', () => {
    const payment = sdk.pendingPayment.object;
    expect(outcomeOfPayment(payment, 'pay_x:1')).toEqual({
      status: 'requires_action',
      chargeKey: 'pay_x:1',
      action: { kind: 'redirect', url: 'https://url' },
      providerReference: payment['id'],
    });
  });

  it('a succeeded payment (an "external" confirmation, an old "error" field) is succeeded, its amount exact', () => {
    const payment = sdk.succeededPayment.object;
    expect(outcomeOfPayment(payment, 'pay_x:2')).toEqual({
      status: 'succeeded',
      chargeKey: 'pay_x:2',
      providerReference: payment['id'],
    });
    expect(kopecksOf(payment['amount'])).toBe(1_000n);
  });

  it('a waiting_for_capture payment (a two-stage shop) decides nothing', () => {
    const payment = sdk.paymentWaitingForCaptureNotification.body['object'] as Json;
    expect(outcomeOfPayment(payment, 'pay_x:3')).toMatchObject({ status: 'processing' });
  });

  it('an amount is read from the decimal string the API reference prescribes, never from a JSON number', () => {
    expect(kopecksOf((sdk.succeededRefund.object['amount'] as Json) ?? {})).toBe(1_000n);
    // The Python SDK's refund example writes 250.0 as a number; the API reference says a string.
    const refund = sdk.refundSucceededNotification.body['object'] as Json;
    expect(kopecksOf(refund['amount'])).toBeUndefined();
  });
});

describe("the SDKs' notification bodies through handleNotification", () => {
  it('payment.waiting_for_capture: confirmed by the API, answered 200, nothing applied', async () => {
    const { id } = await paidPayment();
    const result = await connector.handleNotification!(
      notificationFor(sdk.paymentWaitingForCaptureNotification.body, id),
    );
    // The body says waiting_for_capture; the API says succeeded, and the API decides.
    expect(result).toMatchObject({ kind: 'charge', outcome: { status: 'succeeded' }, reply: { statusCode: 200 } });
    const pending = await connector.charge({
      chargeKey: 'pay_sdk2:1',
      paymentId: 'pay_sdk2',
      method: 'card',
      amountKopecks: 20_000n,
      currency: 'RUB',
      returnUrl: 'https://gateway.example/pay/ord_sdk2/return',
      description: 'Shop: SDK example',
    });
    const waiting = await connector.handleNotification!(
      notificationFor(sdk.paymentWaitingForCaptureNotification.body, pending.providerReference!),
    );
    expect(waiting).toMatchObject({ kind: 'ignored', reply: { statusCode: 200 } });
  });

  it("refund.succeeded whose body says pending (and a numeric amount): the API's succeeded refund decides", async () => {
    const { id, chargeKey } = await paidPayment();
    const refunded = await connector.refund({
      refundKey: 'rf_sdk_1',
      chargeKey,
      paymentId: 'pay_sdk',
      providerReference: id,
      amountKopecks: 5_000n,
    });
    expect(refunded).toMatchObject({ status: 'succeeded' });
    const refundId = refunded.status === 'succeeded' ? refunded.providerRefundReference! : '';
    const result = await connector.handleNotification!(notificationFor(sdk.refundSucceededNotification.body, refundId));
    expect(result).toMatchObject({
      kind: 'refund',
      refundKey: 'rf_sdk_1',
      outcome: { status: 'succeeded' },
      reply: { statusCode: 200 },
    });
  });

  it('the same bodies naming objects YooKassa does not have prove nothing', async () => {
    for (const body of [sdk.paymentWaitingForCaptureNotification.body, sdk.refundSucceededNotification.body]) {
      const result = await connector.handleNotification!({
        headers: {},
        rawBody: JSON.stringify(body),
        remoteAddress: '127.0.0.1',
      });
      expect(result).toMatchObject({ kind: 'ignored', reply: { statusCode: 200 } });
    }
  });
});

describe("the simulator's objects beside the SDKs'", () => {
  it('a succeeded payment and a refund carry the JSON kinds of the SDK examples for every field both have', async () => {
    const { id, chargeKey } = await paidPayment();
    const payment = await getJson(`/payments/${id}`);
    expect(expectSameKinds(payment, sdk.succeededPayment.object)).toBeGreaterThanOrEqual(10);
    expect(
      expectSameKinds(payment, sdk.paymentWaitingForCaptureNotification.body['object'] as Json),
    ).toBeGreaterThanOrEqual(10);
    // Every field of the SDK's card payment is there too, but expires_at (a two-stage payment's capture deadline).
    const sdkCard = sdk.paymentWaitingForCaptureNotification.body['object'] as Json;
    const missing = Object.keys(sdkCard).filter((name) => !(name in payment) && name !== 'expires_at');
    expect(missing).toEqual([]);
    const sdkCardDetails = (sdkCard['payment_method'] as Json)['card'] as Json;
    const card = (payment['payment_method'] as Json)['card'] as Json;
    // issuer_name is optional in the reference ("if known"); the rest of the card is there.
    expect(Object.keys(sdkCardDetails).filter((name) => !(name in card) && name !== 'issuer_name')).toEqual([]);
    const refunded = await connector.refund({
      refundKey: 'rf_sdk_2',
      chargeKey,
      paymentId: 'pay_sdk',
      providerReference: id,
      amountKopecks: 1_000n,
    });
    const refundId = refunded.status === 'succeeded' ? refunded.providerRefundReference! : '';
    const refund = await getJson(`/refunds/${refundId}`);
    expect(expectSameKinds(refund, sdk.succeededRefund.object)).toBeGreaterThanOrEqual(6);
  });

  it('lists page with the next_cursor the SDK clients read', async () => {
    await paidPayment();
    await paidPayment();
    const page = await getJson('/payments?limit=1');
    expect(typeof page[sdk.listCursor.field]).toBe('string');
    expect(page['type']).toBe('list');
  });
});

// The request and response examples of T-Bank's API reference
// (fixtures/tbank-docs-examples.json, from https://www.tbank.ru/kassa/dev/payments/index.html)
// replayed both ways: the documented requests against the simulator (its
// answers carry the documented fields with the documented JSON types), and
// the documented answers to the client and connector (they read them right).
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTBankClient } from '../../../src/payments/connectors/tbank/tbank-client.ts';
import { createTBankConnector } from '../../../src/payments/connectors/tbank/tbank-connector.ts';
import { hasValidTbankToken, tbankToken } from '../../../src/payments/connectors/tbank/tbank-token.ts';
import { startTBankSimulator, type TBankSimulator } from '../../../src/payments/connectors/tbank/simulator/index.ts';
import { closeServer, jsonKind, listen, silentLogger } from '../acquirer-test-support.ts';
import { docs } from './tbank-support.ts';

const TEST_TERMINAL = { terminalKey: 'TinkoffBankTest', password: 'fixture-password' };
const DOCS_TERMINAL = { terminalKey: 'MerchantTerminalKey', password: docs.tokenExample.password };

function expectDocumentedShape(
  answer: Record<string, unknown>,
  documented: Record<string, unknown>,
  notSimulated: Record<string, string> = {},
): void {
  for (const [key, value] of Object.entries(documented)) {
    if (key in notSimulated) continue;
    expect({ key, kind: jsonKind(answer[key]) }).toEqual({ key, kind: jsonKind(value) });
  }
}

function resigned(request: Record<string, unknown>, changes: Record<string, unknown>): Record<string, unknown> {
  const body: Record<string, unknown> = { ...request, ...changes };
  body['Token'] = tbankToken(body, TEST_TERMINAL.password);
  return body;
}

describe('the simulator answers the documented requests as documented', () => {
  let simulator: TBankSimulator;
  const post = async (method: string, body: unknown): Promise<Record<string, unknown>> => {
    const response = await fetch(`${simulator.url}/${method}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    expect(response.status).toBe(200);
    return (await response.json()) as Record<string, unknown>;
  };

  beforeAll(async () => {
    simulator = await startTBankSimulator({ port: 0, notify: false, terminals: [TEST_TERMINAL, DOCS_TERMINAL] });
  });
  afterAll(() => simulator.close());

  it("accepts the token section's Init example byte for byte, signed with the documented password", async () => {
    const answer = await post('Init', docs.tokenExample.request);
    expect(answer).toMatchObject({ Success: true, ErrorCode: '0', Status: 'NEW', Amount: 19200, OrderId: '21090' });
    expectDocumentedShape(answer, docs.methods.Init.response);
  });

  it('refuses the same example with a changed amount: ErrorCode 204, wrong token', async () => {
    const answer = await post('Init', { ...docs.tokenExample.request, Amount: 19300 });
    expect(answer).toMatchObject({ Success: false, ErrorCode: '204' });
  });

  it('refuses an unknown terminal with ErrorCode 205', async () => {
    const answer = await post('GetState', { ...docs.methods.GetState.request, TerminalKey: 'NoSuchTerminal' });
    expect(answer).toMatchObject({ Success: false, ErrorCode: '205' });
  });

  it('answers Init, GetQr, GetState, CheckOrder and Cancel with the documented fields and types', async () => {
    const init = await post('Init', resigned(docs.methods.Init.request, {}));
    expectDocumentedShape(init, docs.methods.Init.response);
    const paymentId = String(init['PaymentId']);

    const qr = await post('GetQr', resigned(docs.methods.GetQr.request, { PaymentId: Number(paymentId) }));
    expectDocumentedShape(qr, docs.methods.GetQr.response, docs.methods.GetQr.notSimulated);

    const state = await post('GetState', resigned(docs.methods.GetState.request, { PaymentId: paymentId }));
    expectDocumentedShape(state, docs.methods.GetState.response);
    expect(state).toMatchObject({ Status: 'NEW', Amount: 140000 });

    const order = await post('CheckOrder', resigned(docs.methods.CheckOrder.request, { OrderId: '21090' }));
    expectDocumentedShape(order, docs.methods.CheckOrder.response);
    const documentedPayment = (docs.methods.CheckOrder.response['Payments'] as Record<string, unknown>[])[0]!;
    const payments = order['Payments'] as Record<string, unknown>[];
    expect(payments.map((payment) => payment['PaymentId'])).toContain(paymentId);
    for (const payment of payments) {
      expectDocumentedShape(payment, documentedPayment, docs.methods.CheckOrder.notSimulatedInPayments);
    }

    const form = await fetch(String(init['PaymentURL']));
    expect(form.status).toBe(200);
    const paid = await fetch(String(init['PaymentURL']), {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'action=pay',
      redirect: 'manual',
    });
    expect(paid.status).toBe(303);

    const cancel = await post('Cancel', resigned(docs.methods.Cancel.request, { PaymentId: paymentId }));
    expectDocumentedShape(cancel, docs.methods.Cancel.response);
    expect(cancel).toMatchObject({ Status: 'PARTIAL_REFUNDED', OriginalAmount: 140000, NewAmount: 120800 });
  });
});

describe('the client and connector read the documented answers', () => {
  let server: Server;
  let url: string;
  const received: { method: string; body: Record<string, unknown> }[] = [];

  beforeAll(async () => {
    server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const method = (request.url ?? '').split('/').pop() as keyof typeof docs.methods;
        received.push({ method, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown> });
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end(JSON.stringify(docs.methods[method].response));
      });
    });
    url = `${await listen(server)}/v2`;
  });
  afterAll(() => closeServer(server));

  function connector() {
    return createTBankConnector({
      name: 'tbank:docs',
      methods: ['card', 'sbp', 'sberpay'],
      client: createTBankClient({ apiUrl: url, ...TEST_TERMINAL }),
      password: TEST_TERMINAL.password,
      notificationUrl: 'https://gateway.example/acquirers/tbank/notifications',
      notificationSources: ['127.0.0.1/32'],
      logger: silentLogger,
    });
  }
  const request = {
    chargeKey: 'pay_docs:attempt-0001',
    paymentId: 'pay_docs',
    amountKopecks: 140000n,
    currency: 'RUB' as const,
    returnUrl: 'https://gateway.example/pay/ord_1/return',
    description: 'Подарочная карта на 1400.00 рублей',
  };

  it("turns Init's PaymentURL into a redirect, with T-Bank's PaymentId as the reference", async () => {
    const outcome = await connector().charge({ ...request, method: 'card' });
    expect(outcome).toEqual({
      status: 'requires_action',
      chargeKey: request.chargeKey,
      action: { kind: 'redirect', url: 'https://securepay.tinkoff.ru/new/fU1ppgqa' },
      providerReference: '3093639567',
    });
  });

  it("turns GetQr's Data into the QR payload for SBP", async () => {
    const outcome = await connector().charge({ ...request, chargeKey: 'pay_docs:attempt-0002', method: 'sbp' });
    const payload =
      'https://qr.nspk.ru/AS1000670LSS7DN18SJQDNP4B05KLJL2?type=01&bank=100000000001&sum=10000&cur=RUB&crc=C08B';
    expect(outcome).toMatchObject({ status: 'requires_action', action: { kind: 'qr', payload, deepLink: payload } });
  });

  it('reads GetState AUTHORIZED as still processing, and CheckOrder NEW as waiting', async () => {
    const tbank = connector();
    expect(await tbank.lookup({ ...request, method: 'card', providerReference: '13660' })).toEqual({
      status: 'processing',
      chargeKey: request.chargeKey,
      providerReference: '13660',
    });
    expect(await tbank.lookup({ ...request, method: 'card', amountKopecks: 13660n })).toEqual({
      status: 'processing',
      chargeKey: request.chargeKey,
      providerReference: '124671934',
    });
  });

  it('reads the Cancel answer REVERSED as a refund done', async () => {
    const outcome = await connector().refund({
      refundKey: 'pay_docs:attempt-0001:refund',
      chargeKey: request.chargeKey,
      paymentId: request.paymentId,
      providerReference: '2304882',
      amountKopecks: 8000n,
    });
    expect(outcome).toEqual({
      status: 'succeeded',
      refundKey: 'pay_docs:attempt-0001:refund',
      providerRefundReference: '2304882',
    });
  });

  it('signed every request it sent with the terminal password, DATA left out of the Token', () => {
    expect(received.length).toBeGreaterThan(0);
    for (const { body } of received) {
      expect(body['TerminalKey']).toBe(TEST_TERMINAL.terminalKey);
      expect(hasValidTbankToken(body, TEST_TERMINAL.password)).toBe(true);
    }
    const init = received.find(({ method }) => method === 'Init')!.body;
    expect(init).toMatchObject({
      OrderId: 'pay_docs',
      Amount: 140000,
      PayType: 'O',
      DATA: { PaygateChargeKey: request.chargeKey },
    });
  });
});

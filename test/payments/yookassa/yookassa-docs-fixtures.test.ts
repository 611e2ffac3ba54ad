// YooKassa's documented examples (fixtures/yookassa-docs-examples.json, each
// with its source page) replayed: the docs' create-payment request against the
// simulator answers an object of the documented shape; our connector reads the
// docs' payment object; the simulator's errors have the documented fields and
// the code the HTTP-codes table gives each status; and its idempotence follows
// the rules of "Формат взаимодействия" / the response-handling page.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { outcomeOfPayment } from '../../../src/payments/connectors/yookassa/yookassa-connector.ts';
import {
  SIMULATOR_SHOP,
  startYooKassaSimulator,
  type YooKassaSimulator,
} from '../../../src/payments/connectors/yookassa/simulator/index.ts';
import { jsonKind } from '../acquirer-test-support.ts';

interface DocsExamples {
  readonly createPayment: { request: Record<string, unknown> };
  readonly paymentObject: { response: Record<string, unknown> };
  readonly errorObject: { required: string[]; optional: string[]; type: string };
  readonly httpCodes: { codes: Record<string, string> };
}

const docs = JSON.parse(
  readFileSync(new URL('./fixtures/yookassa-docs-examples.json', import.meta.url), 'utf8'),
) as DocsExamples;

let simulator: YooKassaSimulator;
const basic = `Basic ${Buffer.from(`${SIMULATOR_SHOP.shopId}:${SIMULATOR_SHOP.secretKey}`).toString('base64')}`;

function post(path: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${simulator.url}${path}`, {
    method: 'POST',
    headers: { authorization: basic, 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
}

function expectErrorObject(body: Record<string, unknown>, statusCode: number): void {
  for (const name of docs.errorObject.required) expect(typeof body[name], name).toBe('string');
  for (const name of Object.keys(body)) {
    expect([...docs.errorObject.required, ...docs.errorObject.optional]).toContain(name);
  }
  expect(body['type']).toBe(docs.errorObject.type);
  expect(body['code']).toBe(docs.httpCodes.codes[String(statusCode)]);
}

beforeAll(async () => {
  simulator = await startYooKassaSimulator({ port: 0, notify: false });
});
afterAll(async () => {
  await simulator.close();
});

describe("the docs' create-payment example", () => {
  it('answers a pending payment with every field of the documented object, of the same JSON kind', async () => {
    const response = await post('/payments', docs.createPayment.request, { 'idempotence-key': 'docs-example-1' });
    expect(response.status).toBe(200);
    const body = (await response.json()) as Record<string, unknown>;
    const documented = docs.paymentObject.response;
    for (const [name, value] of Object.entries(documented)) {
      expect(jsonKind(body[name]), name).toBe(jsonKind(value));
    }
    expect(body).toMatchObject({
      status: 'pending',
      paid: false,
      amount: docs.createPayment.request['amount'],
      description: docs.createPayment.request['description'],
      confirmation: { type: 'redirect' },
      refundable: false,
    });
    expect(String(body['id'])).toMatch(/^[0-9a-f]{8}-000f-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(new Date(String(body['created_at'])).toISOString()).toBe(body['created_at']);
  });

  it("our connector reads the docs' payment object as a redirect to its confirmation_url", () => {
    const payment = docs.paymentObject.response;
    expect(outcomeOfPayment(payment, 'pay_docs:attempt')).toEqual({
      status: 'requires_action',
      chargeKey: 'pay_docs:attempt',
      action: {
        kind: 'redirect',
        url: (payment['confirmation'] as { confirmation_url: string }).confirmation_url,
      },
      providerReference: payment['id'],
    });
  });
});

describe('errors as documented', () => {
  it('401 invalid_credentials for a wrong secret key', async () => {
    const response = await fetch(`${simulator.url}/payments/x`, {
      headers: { authorization: `Basic ${Buffer.from(`${SIMULATOR_SHOP.shopId}:wrong`).toString('base64')}` },
    });
    expect(response.status).toBe(401);
    expectErrorObject((await response.json()) as Record<string, unknown>, 401);
  });

  it('400 invalid_request naming the parameter, 404 not_found, 429 and 500 from the fault knobs', async () => {
    const bad = await post(
      '/payments',
      { ...docs.createPayment.request, amount: { value: '1.005', currency: 'RUB' } },
      { 'idempotence-key': 'docs-bad-amount' },
    );
    expect(bad.status).toBe(400);
    const badBody = (await bad.json()) as Record<string, unknown>;
    expectErrorObject(badBody, 400);
    expect(badBody['parameter']).toBe('amount.value');

    const missing = await fetch(`${simulator.url}/payments/23d93cac-000f-5000-8000-126628f15141`, {
      headers: { authorization: basic },
    });
    expect(missing.status).toBe(404);
    expectErrorObject((await missing.json()) as Record<string, unknown>, 404);

    simulator.faults.api.push(
      { route: 'GET /me', kind: 'http429', count: 1 },
      { route: 'GET /me', kind: 'http500', count: 1 },
    );
    for (const statusCode of [429, 500]) {
      const faulty = await fetch(`${simulator.url}/me`, { headers: { authorization: basic } });
      expect(faulty.status).toBe(statusCode);
      expectErrorObject((await faulty.json()) as Record<string, unknown>, statusCode);
    }
  });
});

describe('idempotence', () => {
  it('same key and body answer the same payment; same key with another body is 400 on Idempotence-Key', async () => {
    const headers = { 'idempotence-key': 'docs-idempotence-1' };
    const first = (await (await post('/payments', docs.createPayment.request, headers)).json()) as { id: string };
    const again = (await (await post('/payments', docs.createPayment.request, headers)).json()) as { id: string };
    expect(again.id).toBe(first.id);
    const other = await post('/payments', { ...docs.createPayment.request, description: 'Заказ №2' }, headers);
    expect(other.status).toBe(400);
    const body = (await other.json()) as Record<string, unknown>;
    expectErrorObject(body, 400);
    expect(body).toMatchObject({ description: 'Idempotence key duplicated', parameter: 'Idempotence-Key' });
  });

  it('a POST without an Idempotence-Key is 400 naming the header', async () => {
    const response = await post('/payments', docs.createPayment.request);
    expect(response.status).toBe(400);
    const body = (await response.json()) as Record<string, unknown>;
    expectErrorObject(body, 400);
    expect(body['parameter']).toBe('Idempotence-Key');
  });
});

// The proof that a merchant can generate a client from /openapi.json: openapi-fetch
// with the types openapi-typescript generates from the live document (the SDK's
// committed openapi.ts; test/sdk/sdk-types.test.ts fails when they drift) creates,
// reads, pays and lists payments against the real app on a real port.
import type { AddressInfo } from 'node:net';
import createClient from 'openapi-fetch';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/app.ts';
import { backends } from '../support/databases.ts';
import type { paths } from '../../packages/paygate-node/src/openapi.ts';

describe.each(backends)('a client generated from /openapi.json, against the app on a real port, on %s', (backend) => {
  let testApp: TestApp;
  let client: ReturnType<typeof createClient<paths>>;
  beforeAll(async () => {
    testApp = await createTestApp(backend);
    await testApp.app.listen({ host: '127.0.0.1', port: 0 });
    const { port } = testApp.app.server.address() as AddressInfo;
    const merchant = await testApp.createMerchant();
    client = createClient<paths>({
      baseUrl: `http://127.0.0.1:${port}`,
      headers: { authorization: `Bearer ${merchant.api_key}` },
    });
  });
  afterAll(() => testApp.close());

  it('creates a payment idempotently, reads it, pays it in the sandbox and lists it, with typed fields', async () => {
    const body = { amount: 1500.5, currency: 'RUB', order_id: 'sdk-order-1' };
    const created = await client.POST('/v1/payments', { params: { header: { 'idempotency-key': 'sdk-key-1' } }, body });
    expect(created.response.status).toBe(201);
    const payment = created.data!;
    expect(payment).toMatchObject({ status: 'pending', amount: 1500.5, currency: 'RUB', order_id: 'sdk-order-1' });

    const replayed = await client.POST('/v1/payments', {
      params: { header: { 'idempotency-key': 'sdk-key-1' } },
      body,
    });
    expect(replayed.data?.payment_id).toBe(payment.payment_id);

    const read = await client.GET('/v1/payments/{payment_id}', {
      params: { path: { payment_id: payment.payment_id } },
    });
    expect(read.data).toEqual(payment);

    const paid = await client.POST('/v1/test_helpers/payments/{payment_id}/pay', {
      params: { path: { payment_id: payment.payment_id } },
    });
    expect(paid.data?.status).toBe('paid');
    expect(paid.data?.paid_at).toEqual(expect.any(String));

    const listed = await client.GET('/v1/payments', { params: { query: { limit: 10, status: 'paid' } } });
    expect(listed.data?.data.map((each) => each.payment_id)).toEqual([payment.payment_id]);
    expect(listed.data?.next_cursor).toBeNull();
  });

  it('gives refusals as typed error bodies', async () => {
    const missing = await client.GET('/v1/payments/{payment_id}', {
      params: { path: { payment_id: '0195f3b2-8c1e-7d4a-9b61-2f0c7e5a1d34' } },
    });
    expect(missing.response.status).toBe(404);
    expect(missing.error?.error).toBe('not_found');

    const invalid = await client.POST('/v1/payments', { body: { amount: 0.001, currency: 'RUB' } });
    expect(invalid.response.status).toBe(400);
    expect(invalid.error?.error).toBe('invalid_request');
  });
});

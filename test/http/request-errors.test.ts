// Every way a request body can be wrong answers the error body of docs/api-decisions.md and
// changes nothing. POST /v1/payments is the route under test; the handling is
// the app's, shared by every route.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backends } from '../support/databases.ts';
import { createTestApp, type TestApp } from '../support/app.ts';

describe.each(backends)('request errors on %s', (backend) => {
  let testApp: TestApp;
  let apiKey: string;
  let shopId: string;
  beforeAll(async () => {
    testApp = await createTestApp(backend);
    const merchant = await testApp.createMerchant();
    apiKey = merchant.api_key;
    shopId = merchant.shop_id;
  });
  afterAll(() => testApp.close());

  const post = (payload: string, contentType = 'application/json', key = apiKey) =>
    testApp.app.inject({
      method: 'POST',
      url: '/v1/payments',
      headers: { authorization: `Bearer ${key}`, 'content-type': contentType },
      payload,
    });

  async function paymentCount(): Promise<number> {
    const response = await testApp.app.inject({
      method: 'GET',
      url: '/v1/payments?limit=100',
      headers: { authorization: `Bearer ${apiKey}` },
    });
    return response.json().data.length;
  }

  it('malformed JSON is 400 invalid_request', async () => {
    const response = await post('{"amount": 10,');
    expect(response.statusCode).toBe(400);
    expect(response.json()).toEqual({
      error: 'invalid_request',
      message: 'The body is not valid JSON.',
      request_id: expect.any(String),
    });
  });

  it('an empty JSON body is 400 invalid_request', async () => {
    const response = await post('');
    expect(response.statusCode).toBe(400);
    expect(response.json()).toMatchObject({ error: 'invalid_request' });
  });

  it('a non-JSON content type is 415 unsupported_media_type', async () => {
    const response = await post('amount=10&currency=RUB', 'application/x-www-form-urlencoded');
    expect(response.statusCode).toBe(415);
    expect(response.json()).toEqual({
      error: 'unsupported_media_type',
      message: expect.stringContaining('application/json'),
      request_id: expect.any(String),
    });
  });

  it('a body over 64 KiB is 413 payload_too_large', async () => {
    const response = await post(JSON.stringify({ amount: 10, currency: 'RUB', order_id: 'x'.repeat(70 * 1024) }));
    expect(response.statusCode).toBe(413);
    expect(response.json()).toEqual({
      error: 'payload_too_large',
      message: 'The body is larger than 64 KiB.',
      request_id: expect.any(String),
    });
  });

  it('a schema violation is 400 invalid_request naming the field', async () => {
    const response = await post(JSON.stringify({ amount: '10', currency: 'RUB' }));
    expect(response.statusCode).toBe(400);
    expect(response.json().error).toBe('invalid_request');
    expect(response.json().message).toContain('amount');
  });

  it('a key without the needed scope is 403 forbidden', async () => {
    const readOnly = await testApp.createKey(shopId, ['read']);
    const response = await post(JSON.stringify({ amount: 10, currency: 'RUB' }), 'application/json', readOnly);
    expect(response.statusCode).toBe(403);
    expect(response.json()).toEqual({
      error: 'forbidden',
      message: expect.stringContaining('payments'),
      request_id: expect.any(String),
    });
  });

  it('none of the refused requests created anything', async () => {
    expect(await paymentCount()).toBe(0);
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { revokeApiKey } from '../../src/merchants/merchant-service.ts';
import { backends } from '../support/databases.ts';
import { createTestApp, type TestApp } from '../support/app.ts';

describe.each(backends)('authentication on %s', (backend) => {
  let testApp: TestApp;
  beforeAll(async () => {
    testApp = await createTestApp(backend);
  });
  afterAll(() => testApp.close());

  const getAccount = (authorization?: string) =>
    testApp.app.inject({
      method: 'GET',
      url: '/v1/account',
      headers: authorization === undefined ? {} : { authorization },
    });

  it('a valid key reaches the route and sees its own shop', async () => {
    const merchant = await testApp.createMerchant();
    const response = await getAccount(`Bearer ${merchant.api_key}`);
    expect(response.statusCode).toBe(200);
    expect(response.json()).toMatchObject({
      merchant_id: merchant.merchant_id,
      shop_id: merchant.shop_id,
      mode: 'sandbox',
    });
  });

  it.each([
    ['no Authorization header', undefined],
    ['an empty header', ''],
    ['a header that is not Bearer', 'Basic dXNlcjpwYXNz'],
    ['Bearer without a key', 'Bearer '],
    ['a malformed key', 'Bearer not-a-key'],
    ['an unknown key of the right shape', `Bearer sk_test_${'A'.repeat(43)}`],
  ])('%s is 401 unauthorized', async (_label, header) => {
    const response = await getAccount(header);
    expect(response.statusCode).toBe(401);
    expect(response.json()).toEqual({
      error: 'unauthorized',
      message: expect.any(String),
      request_id: expect.any(String),
    });
  });

  it('a revoked key is 401 unauthorized', async () => {
    const merchant = await testApp.createMerchant();
    const account = await getAccount(`Bearer ${merchant.api_key}`);
    await revokeApiKey(testApp.context, account.json().key_id);
    const response = await getAccount(`Bearer ${merchant.api_key}`);
    expect(response.statusCode).toBe(401);
    expect(response.json()).toMatchObject({ error: 'unauthorized', message: 'The API key has been revoked.' });
  });
});

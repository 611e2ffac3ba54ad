import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backends } from '../support/databases.ts';
import { createTestApp, type TestApp } from '../support/app.ts';

const FAILURES_PER_MINUTE = 5;
const BAD_KEY = `Bearer sk_test_${'A'.repeat(43)}`;

describe.each(backends)('failed authentication is limited per client address on %s', (backend) => {
  let testApp: TestApp;
  let goodKey: string;
  beforeAll(async () => {
    testApp = await createTestApp(backend, { config: { authFailuresPerMinute: FAILURES_PER_MINUTE } });
    goodKey = (await testApp.createMerchant()).api_key;
  });
  afterAll(() => testApp.close());

  const getAccount = (remoteAddress: string, authorization?: string) =>
    testApp.app.inject({
      method: 'GET',
      url: '/v1/account',
      remoteAddress,
      headers: authorization === undefined ? {} : { authorization },
    });

  it('after the limit of failures an address gets 429 with Retry-After, even with a valid key, until the minute is over', async () => {
    const address = '198.51.100.1';
    for (let failure = 1; failure <= FAILURES_PER_MINUTE; failure++) {
      expect((await getAccount(address, failure % 2 ? BAD_KEY : undefined)).statusCode).toBe(401);
    }
    const blocked = await getAccount(address, `Bearer ${goodKey}`);
    expect(blocked.statusCode).toBe(429);
    expect(blocked.json()).toEqual({
      error: 'rate_limited',
      message: 'Too many failed authentications from this address; retry in 60 s with a valid key.',
      request_id: blocked.headers['x-request-id'],
    });
    expect(blocked.headers['retry-after']).toBe('60');
    testApp.clock.advance(60_000);
    expect((await getAccount(address, `Bearer ${goodKey}`)).statusCode).toBe(200);
  });

  it("one address's failures do not limit another address, and successful requests are not counted", async () => {
    for (let failure = 1; failure <= FAILURES_PER_MINUTE; failure++) await getAccount('198.51.100.2', BAD_KEY);
    expect((await getAccount('198.51.100.2', `Bearer ${goodKey}`)).statusCode).toBe(429);
    for (let request = 1; request <= FAILURES_PER_MINUTE * 2; request++) {
      expect((await getAccount('198.51.100.3', `Bearer ${goodKey}`)).statusCode).toBe(200);
    }
  });

  it('a limited address is refused before the key is looked up: it gets 429 even with the database gone', async () => {
    const own = await createTestApp(backend, { config: { authFailuresPerMinute: FAILURES_PER_MINUTE } });
    const address = '198.51.100.4';
    for (let failure = 1; failure <= FAILURES_PER_MINUTE; failure++) {
      await own.app.inject({
        method: 'GET',
        url: '/v1/account',
        remoteAddress: address,
        headers: { authorization: BAD_KEY },
      });
    }
    await own.database.close();
    const response = await own.app.inject({
      method: 'GET',
      url: '/v1/account',
      remoteAddress: address,
      headers: { authorization: BAD_KEY },
    });
    expect(response.statusCode).toBe(429);
    await own.app.close();
  });
});

describe.each(backends)('GET /metrics with PAYGATE_METRICS_TOKEN on %s', (backend) => {
  const token = 'metrics-token-0123456789';
  let testApp: TestApp;
  beforeAll(async () => {
    testApp = await createTestApp(backend, {
      config: { metricsToken: token, authFailuresPerMinute: FAILURES_PER_MINUTE },
    });
  });
  afterAll(() => testApp.close());

  const getMetrics = (remoteAddress: string, authorization?: string) =>
    testApp.app.inject({
      method: 'GET',
      url: '/metrics',
      remoteAddress,
      headers: authorization === undefined ? {} : { authorization },
    });

  it('answers the metrics to the bearer token', async () => {
    const response = await getMetrics('198.51.100.10', `Bearer ${token}`);
    expect(response.statusCode).toBe(200);
    expect(response.body).toContain('paygate_webhook_deliveries_due');
  });

  it.each([
    ['no Authorization header', undefined],
    ['a wrong token', 'Bearer metrics-token-wrong-000000'],
    ['an API key instead of the token', `Bearer sk_test_${'A'.repeat(43)}`],
  ])('refuses %s with 401 unauthorized and no metrics', async (_label, authorization) => {
    const response = await getMetrics('198.51.100.11', authorization);
    expect(response.statusCode).toBe(401);
    expect(response.json()).toEqual({
      error: 'unauthorized',
      message: expect.any(String),
      request_id: expect.any(String),
    });
  });

  it('wrong tokens count toward the failed-authentication limit of the address', async () => {
    for (let failure = 1; failure <= FAILURES_PER_MINUTE; failure++)
      await getMetrics('198.51.100.12', 'Bearer wrong-token-0000000000');
    const blocked = await getMetrics('198.51.100.12', `Bearer ${token}`);
    expect(blocked.statusCode).toBe(429);
    expect(blocked.headers['retry-after']).toBeDefined();
  });
});

// PAYGATE_TRUST_PROXY: behind a reverse proxy the per-address limits (the payment
// page's 30 actions and 300 views a minute, failed authentication) must count
// each payer's own address from X-Forwarded-For, and only when a trusted proxy sent it.
import { afterEach, describe, expect, it } from 'vitest';
import type { Config } from '../../src/config.ts';
import { createTestApp, type TestApp } from '../support/app.ts';
import { backends } from '../support/databases.ts';
import { postPayment, sandboxShop } from '../payments/payment-test-support.ts';

const PROXY = '10.0.0.5';
const ACTIONS_PER_MINUTE = 30;

describe.each(backends)('client addresses behind a proxy on %s', (backend) => {
  let testApp: TestApp | undefined;
  afterEach(async () => {
    await testApp?.close();
    testApp = undefined;
  });

  /** A payment page of a new merchant, and a POST action on it from one TCP peer with the given X-Forwarded-For. */
  async function pageOfNewShop(config: Partial<Config>) {
    testApp ??= await createTestApp(backend, { config });
    const app = testApp;
    const shop = await sandboxShop(app);
    const payment = (await postPayment(app, shop.key, { amount: 500, currency: 'RUB', method: 'card' })).json();
    return (peer: string, forwardedFor?: string) =>
      app.app.inject({
        method: 'POST',
        url: `/pay/${payment.order_code}/card`,
        remoteAddress: peer,
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          ...(forwardedFor ? { 'x-forwarded-for': forwardedFor } : {}),
        },
        payload: 'cc-number=4000000000000002&cc-exp=12%2F34&cc-csc=123',
      });
  }

  async function useUpActions(
    act: (peer: string, forwardedFor?: string) => Promise<{ statusCode: number }>,
    peer: string,
    forwardedFor?: string,
  ) {
    for (let action = 1; action <= ACTIONS_PER_MINUTE; action++)
      expect((await act(peer, forwardedFor)).statusCode).not.toBe(429);
    expect((await act(peer, forwardedFor)).statusCode).toBe(429);
  }

  it('without PAYGATE_TRUST_PROXY every payer behind the proxy shares its address: one payer uses up the limit of all', async () => {
    const payerA = await pageOfNewShop({});
    const payerB = await pageOfNewShop({});
    await useUpActions(payerA, PROXY, '203.0.113.1');
    expect((await payerB(PROXY, '203.0.113.2')).statusCode).toBe(429);
  });

  it.each([
    ['a hop count', 1],
    ['a CIDR list', ['10.0.0.0/8']],
  ] as const)('with %s, each payer has a limit of its own', async (_label, trustProxy) => {
    const payerA = await pageOfNewShop({ trustProxy: typeof trustProxy === 'number' ? trustProxy : [...trustProxy] });
    const payerB = await pageOfNewShop({});
    await useUpActions(payerA, PROXY, '203.0.113.1');
    expect((await payerB(PROXY, '203.0.113.2')).statusCode).not.toBe(429);
  });

  it('a client that is not a trusted proxy cannot escape its limit with made-up X-Forwarded-For addresses', async () => {
    const act = await pageOfNewShop({ trustProxy: ['10.0.0.0/8'] });
    for (let action = 1; action <= ACTIONS_PER_MINUTE; action++) await act('203.0.113.50', `192.0.2.${action}`);
    expect((await act('203.0.113.50', '192.0.2.200')).statusCode).toBe(429);
  });

  it('failed API authentication is counted per forwarded client address too', async () => {
    testApp = await createTestApp(backend, { config: { trustProxy: 1, authFailuresPerMinute: 3 } });
    const app = testApp;
    const key = (await app.createMerchant()).api_key;
    const account = (forwardedFor: string, authorization: string) =>
      app.app.inject({
        method: 'GET',
        url: '/v1/account',
        remoteAddress: PROXY,
        headers: { authorization, 'x-forwarded-for': forwardedFor },
      });
    for (let failure = 1; failure <= 3; failure++)
      expect((await account('203.0.113.7', 'Bearer wrong')).statusCode).toBe(401);
    expect((await account('203.0.113.7', `Bearer ${key}`)).statusCode).toBe(429);
    expect((await account('203.0.113.8', `Bearer ${key}`)).statusCode).toBe(200);
  });
});

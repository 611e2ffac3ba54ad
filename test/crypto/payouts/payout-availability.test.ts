// The payout routes when something is not there: a node that cannot be reached
// for the fee quote (503 service_unavailable, nothing stored, the key still
// free), and the per-key rate limit (429 rate_limited) that covers these routes.
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCryptoChain, type CryptoChain } from '../../../src/crypto/chain/crypto-chain.ts';
import type { AppContext } from '../../../src/context.ts';
import { createQuoteReads } from '../../../src/crypto/chain/quote-reads.ts';
import { createUsdtTransferEnergy } from '../../../src/crypto/chain/transfer-energy.ts';
import { createTronNodeClient } from '../../../src/crypto/tron/node-client.ts';
import { USDT_CONTRACT_MAINNET } from '../../../src/crypto/tron/trc20-usdt.ts';
import { backends } from '../../support/databases.ts';
import { createPayoutTestApp, payoutBody, type PayoutShop, type PayoutTestApp } from './payout-support.ts';

describe.each(backends)('payouts when the node is down on %s', (backend) => {
  let testApp: PayoutTestApp;
  let shop: PayoutShop;
  let deadNode: Server;
  let nodeUp = false;

  beforeAll(async () => {
    // A node address that answers nothing: a listener that closes every connection.
    deadNode = createServer((request) => request.socket.destroy());
    await new Promise<void>((resolve) => deadNode.listen(0, '127.0.0.1', resolve));
    const port = (deadNode.address() as { port: number }).port;
    const unreachable = createTronNodeClient({
      urls: [`http://127.0.0.1:${port}`],
      usdtContract: USDT_CONTRACT_MAINNET,
      timeoutMs: 500,
      maxAttempts: 1,
    });
    // The caches a chain access keeps of its node, of the unreachable one: nothing read from the real node is reused.
    const unreachableState = {
      node: unreachable,
      quoteReads: createQuoteReads(unreachable),
      transferEnergy: createUsdtTransferEnergy(unreachable),
    };
    const chainOf = ({ config, logger }: AppContext): CryptoChain => {
      const real = createCryptoChain({ config, dataDir: undefined, logger, sandboxClock: 'manual' });
      return {
        liveConfigured: real.liveConfigured,
        sandboxChain: () => real.sandboxChain(),
        sandboxControl: () => real.sandboxControl(),
        close: () => real.close(),
        forMode: async (mode) => {
          const access = await real.forMode(mode);
          return nodeUp ? access : { ...access, ...unreachableState };
        },
      };
    };
    testApp = await createPayoutTestApp(backend, { chain: chainOf });
    shop = await testApp.payoutShop();
    await testApp.fund(shop, 100_000_000n);
  });
  afterAll(async () => {
    await testApp.expectLedgerGreen();
    await testApp.close();
    await new Promise((resolve) => deadNode.close(resolve));
  });

  it('503 service_unavailable with Retry-After for a payout, a batch and a quote; nothing stored; accepted once the node is back', async () => {
    const body = payoutBody();
    const before = await testApp.balance(shop);
    for (const [path, payload] of [
      ['/v1/crypto/payouts', body],
      ['/v1/crypto/payouts/quote', { network: 'TRC20', amount: '10', address: body.address }],
      [
        '/v1/crypto/payouts/batch',
        {
          external_id: 'batch-down',
          network: 'TRC20',
          payouts: [{ external_id: 'item-down', amount: '1', address: body.address }],
        },
      ],
    ] as const) {
      const response = await testApp.call(shop.key, 'POST', path, payload);
      expect(response.statusCode, `${path}: ${response.body}`).toBe(503);
      expect(response.json().error).toBe('service_unavailable');
      expect(Number(response.headers['retry-after'])).toBeGreaterThan(0);
    }
    expect(await testApp.balance(shop)).toEqual(before);
    expect((await testApp.call(shop.key, 'GET', '/v1/crypto/payouts')).json().data).toEqual([]);
    nodeUp = true;
    expect((await testApp.call(shop.key, 'POST', '/v1/crypto/payouts', body)).statusCode).toBe(201);
  });
});

describe.each(backends)('payout routes under the rate limit on %s', (backend) => {
  let testApp: PayoutTestApp;
  let shop: PayoutShop;

  beforeAll(async () => {
    testApp = await createPayoutTestApp(backend, { config: { rateLimitPerMinute: 3 } });
    shop = await testApp.payoutShop();
  });
  afterAll(() => testApp.close());

  it('the fourth call within a minute with one key is 429 rate_limited with Retry-After', async () => {
    const statuses = [];
    for (let call = 0; call < 3; call++)
      statuses.push((await testApp.call(shop.key, 'GET', '/v1/crypto/payouts')).statusCode);
    expect(statuses).toEqual([200, 200, 200]);
    const limited = await testApp.call(shop.key, 'POST', '/v1/crypto/payouts', payoutBody());
    expect(limited.statusCode).toBe(429);
    expect(limited.json().error).toBe('rate_limited');
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
  });
});

import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, createTestApp, type TestApp } from '../support/app.ts';

const LIMIT = 120;
const TEST_REDIS_URL = process.env.TEST_REDIS_URL || undefined;

async function sendRequests(testApp: TestApp, apiKey: string, count: number): Promise<number[]> {
  const statuses: number[] = [];
  for (let i = 0; i < count; i++) {
    const response = await testApp.app.inject({
      method: 'GET',
      url: '/v1/account',
      headers: { authorization: `Bearer ${apiKey}` },
    });
    statuses.push(response.statusCode);
  }
  return statuses;
}

describe('rate limit, in-process store', () => {
  let testApp: TestApp;
  beforeAll(async () => {
    testApp = await createTestApp('pglite');
  });
  afterAll(() => testApp.close());

  it('allows 120 requests a minute with one key and answers the 121st with 429 rate_limited and Retry-After', async () => {
    const merchant = await testApp.createMerchant();
    const statuses = await sendRequests(testApp, merchant.api_key, LIMIT);
    expect(statuses.every((status) => status === 200)).toBe(true);
    const response = await testApp.app.inject({
      method: 'GET',
      url: '/v1/account',
      headers: { authorization: `Bearer ${merchant.api_key}` },
    });
    expect(response.statusCode).toBe(429);
    expect(response.json()).toEqual({
      error: 'rate_limited',
      message: expect.stringContaining('retry'),
      request_id: expect.any(String),
    });
    const retryAfter = Number(response.headers['retry-after']);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
  });

  it('counts each key separately: another key of the same shop is unaffected', async () => {
    const merchant = await testApp.createMerchant();
    const secondKey = await testApp.createKey(merchant.shop_id, ['read']);
    const first = await sendRequests(testApp, merchant.api_key, LIMIT + 1);
    expect(first.at(-1)).toBe(429);
    const second = await sendRequests(testApp, secondKey, 1);
    expect(second).toEqual([200]);
  });
});

describe.runIf(TEST_REDIS_URL)('rate limit, Redis store shared by two instances', () => {
  let first: TestApp;
  let second: TestApp;
  let redisA: Redis;
  let redisB: Redis;
  beforeAll(async () => {
    redisA = new Redis(TEST_REDIS_URL!);
    redisB = new Redis(TEST_REDIS_URL!);
    first = await createTestApp('pglite', { app: { redis: redisA } });
    // The second instance must know the same keys: it shares the first one's database.
    const app = await buildTestApp(first.context, { redis: redisB });
    await app.ready();
    second = { ...first, app, close: () => app.close() };
  });
  afterAll(async () => {
    await second.close();
    await first.close();
    redisA.disconnect();
    redisB.disconnect();
  });

  it('counts one key across both instances: 60 + 60 pass, the 121st on either is 429', async () => {
    const merchant = await first.createMerchant({ name: `redis-${randomBytes(4).toString('hex')}` });
    const onFirst = await sendRequests(first, merchant.api_key, LIMIT / 2);
    const onSecond = await sendRequests(second, merchant.api_key, LIMIT / 2);
    expect([...onFirst, ...onSecond].every((status) => status === 200)).toBe(true);
    expect(await sendRequests(first, merchant.api_key, 1)).toEqual([429]);
    expect(await sendRequests(second, merchant.api_key, 1)).toEqual([429]);
  });
});

// The simulated node's rate limit (node-faults.ts `rateLimit`): a bucket of
// `burst` requests refilled at requestsPerSecond, like the Guava RateLimiter
// java-tron's QpsStrategy creates (one second of permits stored), refusing
// instead of queueing as TronGrid does. Each refusal is worded as its source
// words it: HTTP 429 with Retry-After (TronGrid's rate-limit docs), TronGrid's
// 403 {"Error": "The key exceeds the frequency limit(N), and the query server
// is suspended for Ss"}, java-tron's 200 {"Error": "class
// java.lang.IllegalAccessException : lack of computing resources"}
// (RateLimiterServlet.service, Util.printErrorMsg). Time is driven in the
// direct tests; over HTTP the production client rides through the refusals.
import { afterEach, describe, expect, it } from 'vitest';
import { startSimulatedChainServer, type SimulatedChainServer } from '../../../src/crypto/simchain/chain-server.ts';
import { createNodeApi } from '../../../src/crypto/simchain/node-api.ts';
import { NodeFaults } from '../../../src/crypto/simchain/node-faults.ts';
import { SimulatedChain } from '../../../src/crypto/simchain/simulated-chain.ts';
import { createTronNodeClient, type TronNodeClient } from '../../../src/crypto/tron/node-client.ts';

function drivenNode() {
  const chain = new SimulatedChain({ seed: 'rate-limit' });
  chain.produceBlocks(2);
  const time = { ms: 0 };
  const faults = new NodeFaults(() => time.ms);
  const api = createNodeApi(chain, faults);
  return { chain, faults, time, ask: () => api('/wallet/getnowblock', {}) };
}

describe('the simulated node rate limit, on a driven clock', () => {
  it('serves the burst at once, refuses the next request with HTTP 429 and Retry-After, and serves again as tokens come back', () => {
    const { faults, time, ask } = drivenNode();
    faults.set({ rateLimit: { requestsPerSecond: 15 } });
    const first = Array.from({ length: 16 }, ask);
    expect(first.slice(0, 15).every((answer) => answer.status === 200 && answer.json !== undefined)).toBe(true);
    expect(first[15]).toEqual({ status: 429, text: 'Too Many Requests', headers: { 'retry-after': '1' } });
    time.ms = 1000 / 15;
    expect(ask().status).toBe(200);
    expect(ask().status).toBe(429);
    // A second later the bucket is full again, but never fuller than its burst.
    time.ms = 60_000;
    expect(Array.from({ length: 16 }, ask).map((answer) => answer.status)).toEqual([...Array(15).fill(200), 429]);
    expect(faults.rateLimitedCount).toBe(3);
  });

  it("TronGrid's answer: HTTP 403 with the frequency limit, and the key suspended for its seconds", () => {
    const { faults, time, ask } = drivenNode();
    faults.set({ rateLimit: { requestsPerSecond: 2, burst: 1, answer: 'trongrid', suspendSeconds: 30 } });
    expect(ask().status).toBe(200);
    expect(ask()).toEqual({
      status: 403,
      json: { Error: 'The key exceeds the frequency limit(2), and the query server is suspended for 30s' },
    });
    // Tokens are back after 0.5 s, but the suspension holds for 30 s.
    time.ms = 29_999;
    expect(ask().status).toBe(403);
    time.ms = 30_000;
    expect(ask().status).toBe(200);
  });

  it('java-tron\'s answer: HTTP 200 with Error "lack of computing resources"', () => {
    const { faults, ask } = drivenNode();
    faults.set({ rateLimit: { requestsPerSecond: 1, answer: 'java-tron' } });
    ask();
    expect(ask()).toEqual({
      status: 200,
      json: { Error: 'class java.lang.IllegalAccessException : lack of computing resources' },
    });
  });

  it('is off once cleared', () => {
    const { faults, ask } = drivenNode();
    faults.set({ rateLimit: { requestsPerSecond: 1 } });
    ask();
    expect(ask().status).toBe(429);
    faults.clear();
    expect(Array.from({ length: 50 }, ask).every((answer) => answer.status === 200)).toBe(true);
  });
});

describe('the production client against a rate-limited simulated node', () => {
  let server: SimulatedChainServer | undefined;
  let client: TronNodeClient | undefined;
  afterEach(async () => {
    await client?.close();
    await server?.close();
  });

  it.each(['http429', 'trongrid', 'java-tron'] as const)(
    'every call is answered though the node refuses some (%s): the client backs off and asks again',
    async (answer) => {
      const chain = new SimulatedChain({ seed: 'rate-limit' });
      chain.produceBlocks(2);
      server = await startSimulatedChainServer({ seed: 'rate-limit', chain });
      server.faults.set({ rateLimit: { requestsPerSecond: 50, burst: 2, answer, suspendSeconds: 0 } });
      client = createTronNodeClient({
        urls: [server.url],
        usdtContract: chain.parameters.usdtContract,
        maxAttempts: 1,
      });
      const heads = await Promise.all(Array.from({ length: 6 }, () => client!.getHeadBlock()));
      expect(heads.every((head) => head.number === chain.head.number)).toBe(true);
      expect(server.faults.rateLimitedCount).toBeGreaterThan(0);
    },
  );
});

// The request budget and rate-limit back-off of the node transport, against
// real HTTP servers on loopback, on a driven clock (the transport's `now` and
// `sleep`): a URL's budget spaces its requests; a rate-limited answer (HTTP 429
// with Retry-After, TronGrid's 403 "frequency limit … suspended for Ns",
// java-tron's 200 "lack of computing resources") leaves that URL alone for that
// long without marking it failing; a call waits for budget instead of going to
// a failing URL; every wait is bounded; the per-node metrics carry the origin
// only, never a path prefix or a key.
import { Registry } from 'prom-client';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  createTronNodeClient,
  TronNodeUnavailableError,
  type TronNodeClient,
  type TronNodeClientOptions,
} from '../../../src/crypto/tron/node-client.ts';
import type { NodeFailure } from '../../../src/crypto/tron/node-errors.ts';
import { nodeRequestMetrics } from '../../../src/crypto/tron/node-metrics.ts';
import { blockJson, USDT } from './fixtures/chain-json.ts';
import { startFakeTronNode, type FakeTronNode, type Reply } from './fixtures/fake-tron-node.ts';

let primary: FakeTronNode;
let secondary: FakeTronNode;
const clients: TronNodeClient[] = [];
/** The transport's clock: moves only when the transport sleeps. */
let clock = 0;
/** When (on `clock`) each node received each request. */
let arrivals: Map<FakeTronNode, number[]>;

beforeEach(async () => {
  clock = 0;
  primary = await startFakeTronNode();
  secondary = await startFakeTronNode();
  arrivals = new Map([
    [primary, []],
    [secondary, []],
  ]);
  answer(primary, () => ({ json: blockJson({ number: 100 }) }));
  answer(secondary, () => ({ json: blockJson({ number: 200 }) }));
});

afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close()));
  await primary.close();
  await secondary.close();
});

/** Sets what getnowblock answers; `count` is the request's number on that node (0 first). */
function answer(node: FakeTronNode, reply: (count: number) => Reply): void {
  node.on('/wallet/getnowblock', () => {
    const seen = arrivals.get(node)!;
    seen.push(clock);
    return reply(seen.length - 1);
  });
}

function clientFor(urls: TronNodeClientOptions['urls'], options: Partial<TronNodeClientOptions> = {}): TronNodeClient {
  const client = createTronNodeClient({
    urls,
    usdtContract: USDT,
    timeoutMs: 2_000,
    retryDelayMs: 0,
    now: () => clock,
    sleep: async (ms) => {
      clock += ms;
    },
    ...options,
  });
  clients.push(client);
  return client;
}

const rateLimited = (headers: Record<string, string> = {}): Reply => ({
  status: 429,
  text: 'Too Many Requests',
  headers,
});

describe('the request budget of a URL', () => {
  it('lets the burst go at once, then spaces requests at the configured rate', async () => {
    const client = clientFor([{ url: primary.url, requestsPerSecond: 15, burst: 5 }]);
    for (let index = 0; index < 20; index += 1) expect((await client.getHeadBlock()).number).toBe(100);
    const times = arrivals.get(primary)!.map((at) => Math.round(at));
    expect(times.slice(0, 5)).toEqual([0, 0, 0, 0, 0]);
    expect(times.slice(5)).toEqual(Array.from({ length: 15 }, (_, index) => Math.round(((index + 1) * 1000) / 15)));
  });

  it('without a budget, requests go at once', async () => {
    const client = clientFor([primary.url]);
    for (let index = 0; index < 20; index += 1) await client.getHeadBlock();
    expect(arrivals.get(primary)).toEqual(Array(20).fill(0));
  });

  it('takes a URL with budget left while the preferred one has none, and waits for budget rather than go to a failing URL', async () => {
    answer(secondary, () => ({ status: 503, text: 'down' }));
    const client = clientFor([{ url: primary.url, requestsPerSecond: 1, burst: 1 }, secondary.url], {
      cooldownMs: 60_000,
    });
    expect((await client.getHeadBlock()).number).toBe(100); // primary's token at 0
    // Primary has no token until 1 s; secondary is asked now, fails, cools down; the call waits for primary.
    expect((await client.getHeadBlock()).number).toBe(100);
    // Secondary is cooling: the next call waits for primary's next token instead of asking it.
    expect((await client.getHeadBlock()).number).toBe(100);
    expect(arrivals.get(primary)).toEqual([0, 1_000, 2_000]);
    expect(arrivals.get(secondary)).toEqual([0]);
  });
});

describe('a rate-limited answer backs that URL off without marking it failing', () => {
  it('HTTP 429: the only URL is asked again after its Retry-After, and the call succeeds', async () => {
    answer(primary, (count) =>
      count === 0 ? rateLimited({ 'retry-after': '2' }) : { json: blockJson({ number: 100 }) },
    );
    const failures: NodeFailure[] = [];
    const client = clientFor([primary.url], { onAttemptFailure: (failure) => failures.push(failure) });
    expect((await client.getHeadBlock()).number).toBe(100);
    expect(arrivals.get(primary)).toEqual([0, 2_000]);
    expect(failures.map((failure) => failure.kind)).toEqual(['rate_limited']);
    // Not cooling as a failed URL would: the next call goes at once.
    await client.getHeadBlock();
    expect(arrivals.get(primary)).toEqual([0, 2_000, 2_000]);
  });

  it('HTTP 429 on every attempt does not use up the attempts of real failures: the call waits through several back-offs', async () => {
    answer(primary, (count) =>
      count < 5 ? rateLimited({ 'retry-after': '1' }) : { json: blockJson({ number: 100 }) },
    );
    const client = clientFor([primary.url], { maxAttempts: 1 });
    expect((await client.getHeadBlock()).number).toBe(100);
    expect(arrivals.get(primary)).toEqual([0, 1_000, 2_000, 3_000, 4_000, 5_000]);
  });

  it('TronGrid\'s 403 "frequency limit … suspended for 5s" keeps the URL out for 5 s', async () => {
    const suspended = {
      status: 403,
      json: { Error: 'The key exceeds the frequency limit(15), and the query server is suspended for 5s' },
    };
    answer(primary, (count) => (count === 0 ? suspended : { json: blockJson({ number: 100 }) }));
    const client = clientFor([primary.url]);
    expect((await client.getHeadBlock()).number).toBe(100);
    expect(arrivals.get(primary)).toEqual([0, 5_000]);
  });

  it('a 503 or a 200 worded as a rate limit ("request rate exceeded the allowed_rps(10) … suspended for 5 s") is a back-off, not a failure', async () => {
    const exceeded = { Error: 'request rate exceeded the allowed_rps(10), and the query server is suspended for 5 s' };
    answer(primary, (count) =>
      count === 0
        ? { status: 503, json: exceeded }
        : count === 1
          ? { json: exceeded }
          : { json: blockJson({ number: 100 }) },
    );
    const failures: NodeFailure[] = [];
    const client = clientFor([primary.url], { maxAttempts: 1, onAttemptFailure: (failure) => failures.push(failure) });
    expect((await client.getHeadBlock()).number).toBe(100);
    expect(arrivals.get(primary)).toEqual([0, 5_000, 10_000]);
    expect(failures.map((failure) => failure.kind)).toEqual(['rate_limited', 'rate_limited']);
  });

  it('java-tron\'s 200 "lack of computing resources" keeps the URL out for a second', async () => {
    const busy = { json: { Error: 'class java.lang.IllegalAccessException : lack of computing resources' } };
    answer(primary, (count) => (count === 0 ? busy : { json: blockJson({ number: 100 }) }));
    const client = clientFor([primary.url]);
    expect((await client.getHeadBlock()).number).toBe(100);
    expect(arrivals.get(primary)).toEqual([0, 1_000]);
  });

  it('goes to another URL with budget while the rate-limited one backs off', async () => {
    answer(primary, (count) =>
      count === 0 ? rateLimited({ 'retry-after': '10' }) : { json: blockJson({ number: 100 }) },
    );
    const client = clientFor([primary.url, secondary.url]);
    expect((await client.getHeadBlock()).number).toBe(200);
    clock = 10_000;
    expect((await client.getHeadBlock()).number).toBe(100);
    expect(arrivals.get(primary)).toEqual([0, 10_000]);
  });
});

describe('every wait is bounded', () => {
  it('a back-off beyond maxWaitMs fails the call at once as unavailable, without asking again', async () => {
    answer(primary, () => rateLimited({ 'retry-after': '60' }));
    const client = clientFor([primary.url], { maxWaitMs: 10_000 });
    const error = await client.getHeadBlock().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(TronNodeUnavailableError);
    expect((error as TronNodeUnavailableError).failures.map((failure) => failure.kind)).toEqual([
      'rate_limited',
      'rate_limited',
    ]);
    expect(arrivals.get(primary)).toEqual([0]);
    expect(clock).toBe(0);
  });

  it('a budget whose next token is beyond maxWaitMs fails the call instead of waiting', async () => {
    const client = clientFor([{ url: primary.url, requestsPerSecond: 0.1, burst: 1 }], { maxWaitMs: 5_000 });
    await client.getHeadBlock();
    await expect(client.getHeadBlock()).rejects.toBeInstanceOf(TronNodeUnavailableError);
    expect(arrivals.get(primary)).toEqual([0]);
    // Nothing was reserved by the refused call: the token is there at 10 s.
    clock = 10_000;
    await client.getHeadBlock();
    expect(arrivals.get(primary)).toEqual([0, 10_000]);
  });

  it('a Retry-After is honoured up to 60 s', async () => {
    answer(primary, (count) =>
      count === 0 ? rateLimited({ 'retry-after': '3600' }) : { json: blockJson({ number: 100 }) },
    );
    const client = clientFor([primary.url], { maxWaitMs: 120_000 });
    await client.getHeadBlock();
    expect(arrivals.get(primary)).toEqual([0, 60_000]);
  });
});

describe('per-node metrics', () => {
  it('count requests by outcome and time them per origin; never a path prefix or an API key', async () => {
    primary.on('/secret-token/wallet/getnowblock', () => {
      const seen = arrivals.get(primary)!;
      seen.push(clock);
      return seen.length === 1 ? rateLimited({ 'retry-after': '1' }) : { json: blockJson({ number: 100 }) };
    });
    const registry = new Registry();
    const client = clientFor([{ url: `${primary.url}/secret-token`, apiKey: 'key-abc' }], {
      onRequest: nodeRequestMetrics(registry),
    });
    await client.getHeadBlock();
    const text = await registry.metrics();
    const node = `node="${primary.url}"`;
    expect(text).toContain(`paygate_tron_node_requests_total{${node},outcome="rate_limited"} 1`);
    expect(text).toContain(`paygate_tron_node_requests_total{${node},outcome="ok"} 1`);
    expect(text).toContain(`paygate_tron_node_request_duration_seconds_count{${node}} 2`);
    expect(text).not.toContain('secret-token');
    expect(text).not.toContain('key-abc');
  });
});

// Retries and failover across node URLs, against real HTTP servers on
// loopback: a node that is down, answers 5xx, is too slow, is rate-limited or
// answers nonsense is passed over for the next one; a request the node refuses
// as such (4xx, an `Error` answer) is not retried; attempts are bounded; a
// failing node sits out a cool-down; an API key goes to its own URL only.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  createTronNodeClient,
  TronNodeRequestError,
  TronNodeUnavailableError,
  type TronNodeClient,
  type TronNodeClientOptions,
} from '../../../src/crypto/tron/node-client.ts';
import type { NodeFailure } from '../../../src/crypto/tron/node-errors.ts';
import { blockJson, USDT } from './fixtures/chain-json.ts';
import { closedPortUrl, startFakeTronNode, type FakeTronNode } from './fixtures/fake-tron-node.ts';

let primary: FakeTronNode;
let secondary: FakeTronNode;
const clients: TronNodeClient[] = [];

beforeEach(async () => {
  primary = await startFakeTronNode();
  secondary = await startFakeTronNode();
  primary.on('/wallet/getnowblock', { json: blockJson({ number: 100 }) });
  secondary.on('/wallet/getnowblock', { json: blockJson({ number: 200 }) });
});

afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close()));
  await primary.close();
  await secondary.close();
});

/**
 * The attempt timeout of these clients: far beyond what a loopback answer takes on a loaded
 * machine, so only a node made to hang (never answering, or never finishing) reaches it.
 */
const ATTEMPT_TIMEOUT_MS = 5_000;

function clientFor(urls: TronNodeClientOptions['urls'], options: Partial<TronNodeClientOptions> = {}): TronNodeClient {
  const client = createTronNodeClient({
    urls,
    usdtContract: USDT,
    timeoutMs: ATTEMPT_TIMEOUT_MS,
    retryDelayMs: 1,
    ...options,
  });
  clients.push(client);
  return client;
}

async function unavailable(promise: Promise<unknown>): Promise<TronNodeUnavailableError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(TronNodeUnavailableError);
  return error as TronNodeUnavailableError;
}

describe('failover to the next URL', () => {
  it('goes to the second URL when the first refuses connections', async () => {
    const down = await closedPortUrl();
    const failures: NodeFailure[] = [];
    const client = clientFor([down, secondary.url], { onAttemptFailure: (failure) => failures.push(failure) });
    expect((await client.getHeadBlock()).number).toBe(200);
    expect(failures.map((failure) => failure.kind)).toEqual(['connection_error']);
  });

  it('goes to the second URL when the first answers 503', async () => {
    primary.on('/wallet/getnowblock', { status: 503, text: 'Service Unavailable' });
    const client = clientFor([primary.url, secondary.url]);
    expect((await client.getHeadBlock()).number).toBe(200);
    expect(primary.requestsTo('/wallet/getnowblock')).toHaveLength(1);
  });

  it('goes to the second URL when the first does not answer within the timeout', async () => {
    // Its answer is due long after the timeout, on the same event loop: the timeout fires first.
    primary.on('/wallet/getnowblock', { json: blockJson({ number: 100 }), delayMs: 4 * ATTEMPT_TIMEOUT_MS });
    const failures: NodeFailure[] = [];
    const client = clientFor([primary.url, secondary.url], {
      onAttemptFailure: (failure) => failures.push(failure),
    });
    // Block 200 is the second node's: the slow first answer (block 100) was not waited for.
    expect((await client.getHeadBlock()).number).toBe(200);
    expect(failures.map((failure) => failure.kind)).toEqual(['timeout']);
  });

  it('goes to the second URL when the first sends its answer too slowly to finish within the timeout', async () => {
    primary.on('/wallet/getnowblock', { drip: true });
    const failures: NodeFailure[] = [];
    const client = clientFor([primary.url, secondary.url], {
      onAttemptFailure: (failure) => failures.push(failure),
    });
    expect((await client.getHeadBlock()).number).toBe(200);
    expect(failures.map((failure) => failure.kind)).toEqual(['timeout']);
  });

  it('goes to the second URL when the first is rate-limited (429, or 200 with "lack of computing resources")', async () => {
    primary.on('/wallet/getnowblock', { status: 429, text: 'Too Many Requests' });
    expect((await clientFor([primary.url, secondary.url]).getHeadBlock()).number).toBe(200);
    primary.on('/wallet/getnowblock', {
      json: { Error: 'class java.lang.IllegalAccessException : lack of computing resources' },
    });
    expect((await clientFor([primary.url, secondary.url]).getHeadBlock()).number).toBe(200);
  });

  it('goes to the second URL when the first is a lite full node that does not serve history', async () => {
    primary.on('/wallet/getnowblock', { text: 'this API is closed because this node is a lite fullnode' });
    expect((await clientFor([primary.url, secondary.url]).getHeadBlock()).number).toBe(200);
  });

  it('goes to the second URL when the first drops the connection mid-request', async () => {
    primary.on('/wallet/getnowblock', { drop: true });
    expect((await clientFor([primary.url, secondary.url]).getHeadBlock()).number).toBe(200);
  });

  it('does not believe a node whose answer fails validation: the next node answers', async () => {
    primary.on('/wallet/getnowblock', { json: { ...blockJson({ number: 100 }), blockID: 'xyz' } });
    expect((await clientFor([primary.url, secondary.url]).getHeadBlock()).number).toBe(200);
  });
});

describe('what is not retried', () => {
  it('a 400 surfaces at once, and the second URL is never asked', async () => {
    primary.on('/wallet/getnowblock', { status: 400, text: 'bad request' });
    const client = clientFor([primary.url, secondary.url]);
    const error = await client.getHeadBlock().then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(TronNodeRequestError);
    expect((error as TronNodeRequestError).status).toBe(400);
    expect(primary.requests).toHaveLength(1);
    expect(secondary.requests).toHaveLength(0);
  });

  it('an Error answer that is not about rate limits surfaces at once', async () => {
    primary.on('/wallet/getnowblock', { json: { Error: 'class org.tron.json.JSONException : syntax error' } });
    const client = clientFor([primary.url, secondary.url]);
    await expect(client.getHeadBlock()).rejects.toBeInstanceOf(TronNodeRequestError);
    expect(secondary.requests).toHaveLength(0);
  });
});

describe('bounded attempts', () => {
  it('gives up after maxAttempts with every failure listed, as a 503 with Retry-After', async () => {
    primary.on('/wallet/getnowblock', { status: 502, text: 'Bad Gateway' });
    secondary.on('/wallet/getnowblock', { status: 500, text: 'oops' });
    const client = clientFor([primary.url, secondary.url], { maxAttempts: 5 });
    const error = await unavailable(client.getHeadBlock());
    expect(error.failures.map((failure) => failure.url)).toEqual([
      primary.url,
      secondary.url,
      primary.url,
      secondary.url,
      primary.url,
    ]);
    expect(error.failures.every((failure) => failure.kind === 'http_status')).toBe(true);
    expect(error.code).toBe('service_unavailable');
    expect(error.headers['retry-after']).toBeDefined();
    expect(primary.requests.length + secondary.requests.length).toBe(5);
  });

  it('makes max(3, number of URLs) attempts by default', async () => {
    primary.on('/wallet/getnowblock', { status: 503, text: 'down' });
    const error = await unavailable(clientFor([primary.url]).getHeadBlock());
    expect(error.failures).toHaveLength(3);
    expect(primary.requests).toHaveLength(3);
  });

  it('never makes more than 10 attempts, whatever it is told', async () => {
    primary.on('/wallet/getnowblock', { status: 503, text: 'down' });
    const error = await unavailable(clientFor([primary.url], { maxAttempts: 50 }).getHeadBlock());
    expect(error.failures).toHaveLength(10);
  });
});

describe('cool-down of a failing URL', () => {
  it('asks the healthy URL first while the failed one cools down, and the first again afterwards', async () => {
    let clock = 0;
    primary.on('/wallet/getnowblock', { status: 503, text: 'down' });
    const client = clientFor([primary.url, secondary.url], { cooldownMs: 10_000, now: () => clock });
    expect((await client.getHeadBlock()).number).toBe(200);
    primary.on('/wallet/getnowblock', { json: blockJson({ number: 100 }) });
    expect((await client.getHeadBlock()).number).toBe(200);
    expect(primary.requests).toHaveLength(1);
    clock += 10_001;
    expect((await client.getHeadBlock()).number).toBe(100);
  });

  it('still asks a cooling URL when every URL is cooling', async () => {
    // The clock stands still: the URL is still cooling when asked again.
    const client = clientFor([primary.url], { cooldownMs: 60_000, maxAttempts: 1, now: () => 0 });
    primary.on('/wallet/getnowblock', { status: 503, text: 'down' });
    await unavailable(client.getHeadBlock());
    primary.on('/wallet/getnowblock', { json: blockJson({ number: 100 }) });
    expect((await client.getHeadBlock()).number).toBe(100);
  });

  it('keeps a rate-limited URL out for its Retry-After when that is longer than the cool-down', async () => {
    let clock = 0;
    primary.on('/wallet/getnowblock', { status: 429, text: 'slow down', headers: { 'retry-after': '30' } });
    const client = clientFor([primary.url, secondary.url], { cooldownMs: 1_000, now: () => clock });
    await client.getHeadBlock();
    primary.on('/wallet/getnowblock', { json: blockJson({ number: 100 }) });
    clock += 5_000;
    expect((await client.getHeadBlock()).number).toBe(200);
    clock += 26_000;
    expect((await client.getHeadBlock()).number).toBe(100);
  });
});

describe('configuration', () => {
  it('sends an API key as TRON-PRO-API-KEY to its own URL only, and no key header without one', async () => {
    primary.on('/wallet/getnowblock', { status: 503, text: 'down' });
    await clientFor([{ url: primary.url, apiKey: 'key-123' }, secondary.url]).getHeadBlock();
    expect(primary.requests[0]?.headers['tron-pro-api-key']).toBe('key-123');
    expect(secondary.requests[0]?.headers['tron-pro-api-key']).toBeUndefined();
    await clientFor([
      { url: primary.url, apiKey: 'key-1' },
      { url: secondary.url, apiKey: 'key-2' },
    ]).getHeadBlock();
    expect(primary.requests[1]?.headers['tron-pro-api-key']).toBe('key-1');
    expect(secondary.requests[1]?.headers['tron-pro-api-key']).toBe('key-2');
    await clientFor([secondary.url], { apiKey: 'only-url' }).getHeadBlock();
    expect(secondary.requests[2]?.headers['tron-pro-api-key']).toBe('only-url');
  });

  it('refuses one API key for several URLs: it would reach providers it does not belong to', () => {
    expect(() =>
      createTronNodeClient({ urls: [primary.url, secondary.url], apiKey: 'key-123', usdtContract: USDT }),
    ).toThrow(/one URL only/);
  });

  it('keeps a URL path prefix (providers that put the token in the path) and hides it in failures', async () => {
    primary.on('/token-abc/wallet/getnowblock', { json: blockJson({ number: 300 }) });
    expect((await clientFor([`${primary.url}/token-abc/`]).getHeadBlock()).number).toBe(300);
    const down = await closedPortUrl();
    const error = await unavailable(clientFor([`${down}/secret-token`], { maxAttempts: 1 }).getHeadBlock());
    expect(error.failures[0]?.url).toBe(`${down}/…`);
    expect(error.message).not.toContain('secret-token');
  });

  it('refuses a configuration without URLs, with a non-HTTP URL, or with credentials in a URL', () => {
    expect(() => createTronNodeClient({ urls: [], usdtContract: USDT })).toThrow(/at least one node URL/);
    expect(() => createTronNodeClient({ urls: ['ftp://node.example'], usdtContract: USDT })).toThrow(/http or https/);
    expect(() => createTronNodeClient({ urls: ['https://user:pass@node.example'], usdtContract: USDT })).toThrow(
      /credentials/,
    );
  });

  it('refuses an answer larger than the cap', async () => {
    primary.on('/wallet/getnowblock', { json: { ...blockJson({ number: 100 }), padding: 'x'.repeat(5_000) } });
    const error = await unavailable(
      clientFor([primary.url], { maxResponseBytes: 1_000, maxAttempts: 1 }).getHeadBlock(),
    );
    expect(error.failures[0]?.detail).toMatch(/larger than 1000 bytes/);
  });
});

describe('one answer from each of several different nodes (what a credit needs agreement of)', () => {
  const TX = 'ab'.repeat(32);
  const info = (blockNumber: number) => ({
    id: TX,
    blockNumber,
    receipt: { result: 'SUCCESS' },
    contract_address: '41a614f803b6fd780986a42c78ec9c7f77e6ded13c',
  });

  it('asks two different nodes once each, and answers null when fewer nodes are configured', async () => {
    primary.on('/walletsolidity/gettransactioninfobyid', { json: info(7) });
    secondary.on('/walletsolidity/gettransactioninfobyid', { json: {} });
    const client = clientFor([primary.url, secondary.url]);
    const outcomes = await client.getSolidifiedOutcomeOnNodes(TX, 2);
    expect(outcomes?.map((outcome) => outcome?.blockNumber ?? null)).toEqual([7, null]);
    expect(primary.requestsTo('/walletsolidity/gettransactioninfobyid').map((request) => request.body)).toEqual([
      { value: TX },
    ]);
    expect(secondary.requestsTo('/walletsolidity/gettransactioninfobyid')).toHaveLength(1);
    expect(await clientFor([primary.url]).getSolidifiedOutcomeOnNodes(TX, 2)).toBeNull();
    expect(primary.requestsTo('/walletsolidity/gettransactioninfobyid')).toHaveLength(1);
  });

  it('passes over a node that fails for the next one, asks it once more when too few answered, then is unavailable', async () => {
    const third = await startFakeTronNode();
    try {
      primary.on('/walletsolidity/gettransactioninfobyid', { status: 503, text: 'down' });
      secondary.on('/walletsolidity/gettransactioninfobyid', { json: info(8) });
      third.on('/walletsolidity/gettransactioninfobyid', { json: info(9) });
      const outcomes = await clientFor([primary.url, secondary.url, third.url]).getSolidifiedOutcomeOnNodes(TX, 2);
      expect(outcomes?.map((outcome) => outcome?.blockNumber)).toEqual([8, 9]);
      // Two rounds: the failing node is asked once more after a back-off before the call gives up.
      const error = await unavailable(clientFor([primary.url, secondary.url]).getSolidifiedOutcomeOnNodes(TX, 'all'));
      expect(error.failures.map((failure) => failure.kind)).toEqual(['http_status', 'http_status']);
      expect(primary.requestsTo('/walletsolidity/gettransactioninfobyid')).toHaveLength(3);
    } finally {
      await third.close();
    }
  });
});

// HTTP to a list of TRON full nodes: one POST of JSON per call, a hard time
// limit per request, the answer read up to a cap, and failover. A unit of work
// (one or more requests whose answers are checked together) runs against one
// node; a retryable failure (connection error, timeout, 429, 5xx, a rate-limit
// or "busy" answer, an answer we refuse to believe) puts that node in a short
// cool-down and moves the work to the next node, up to a bounded number of
// attempts. Anything else (HTTP 4xx, an `Error` answer) is the request's own
// fault and is thrown at once.
import { setTimeout as sleep } from 'node:timers/promises';
import { Agent } from 'undici';
import { NodeAttemptFailure, TronNodeRequestError, TronNodeUnavailableError, type NodeFailure } from './node-errors.ts';

export const DEFAULT_NODE_TIMEOUT_MS = 5_000;
export const DEFAULT_NODE_COOLDOWN_MS = 10_000;
export const DEFAULT_NODE_RETRY_DELAY_MS = 200;
export const DEFAULT_MAX_RESPONSE_BYTES = 32 * 1024 * 1024;
/** The most attempts one call may make, whatever the configuration says. */
export const MAX_NODE_ATTEMPTS = 10;
/** A 429's Retry-After is honoured up to this long. */
const MAX_RETRY_AFTER_MS = 60_000;
const MAX_RETRY_DELAY_MS = 2_000;
const DETAIL_CAP = 300;
export const API_KEY_HEADER = 'TRON-PRO-API-KEY';

export interface NodeTransportOptions {
  /** Node base URLs in order of preference (a path prefix is kept: `https://host/<token>`). */
  readonly urls: readonly string[];
  /** Sent as `TRON-PRO-API-KEY` to every URL (TronGrid's key header). */
  readonly apiKey?: string | undefined;
  /** Per request: connecting, the headers and the whole body. */
  readonly timeoutMs?: number | undefined;
  /** Attempts per call across all URLs; default max(3, number of URLs), at most MAX_NODE_ATTEMPTS. */
  readonly maxAttempts?: number | undefined;
  /** How long a failing URL is skipped while another URL is healthy. */
  readonly cooldownMs?: number | undefined;
  /** Base pause before a URL that already failed in this call is asked again (doubles each round, jittered). */
  readonly retryDelayMs?: number | undefined;
  readonly maxResponseBytes?: number | undefined;
  /** Told of every failed attempt, for logs and metrics. */
  readonly onAttemptFailure?: ((failure: NodeFailure, path: string) => void) | undefined;
  /** Monotonic milliseconds, for the cool-downs. */
  readonly now?: (() => number) | undefined;
}

/** One node for the span of one attempt. */
export interface NodeSession {
  readonly url: string;
  /** POSTs `body` as JSON to `path`; answers the parsed JSON (integers beyond 2^53 as bigint). */
  post(path: string, body: object): Promise<unknown>;
}

export interface NodeTransport {
  /** Runs `work` against one node after another until it succeeds, fails for good, or the attempts are spent. */
  run<T>(label: string, work: (node: NodeSession) => Promise<T>): Promise<T>;
  /**
   * Runs `work` once on each of `count` different nodes (healthy ones first) and answers their
   * results in that order; a node whose attempt fails is passed over for the next one. Fewer than
   * `count` answers: TronNodeUnavailableError. For what one node's word must not decide alone.
   */
  runOnDistinctNodes<T>(label: string, count: number, work: (node: NodeSession) => Promise<T>): Promise<T[]>;
  /** How many node URLs are configured. */
  readonly nodeCount: number;
  close(): Promise<void>;
}

interface NodeBase {
  /** The configured URL, as the key of its cool-down. */
  readonly key: string;
  /** What logs and errors show: the origin, and `/…` for a path prefix (it may hold an access token). */
  readonly url: string;
  readonly origin: string;
  readonly pathPrefix: string;
}

export function createNodeTransport(options: NodeTransportOptions): NodeTransport {
  const nodes = options.urls.map(parseNodeUrl);
  if (nodes.length === 0) throw new Error('the TRON node client needs at least one node URL');
  const timeoutMs = positive(options.timeoutMs, DEFAULT_NODE_TIMEOUT_MS, 'timeoutMs');
  const cooldownMs = nonNegative(options.cooldownMs, DEFAULT_NODE_COOLDOWN_MS, 'cooldownMs');
  const retryDelayMs = nonNegative(options.retryDelayMs, DEFAULT_NODE_RETRY_DELAY_MS, 'retryDelayMs');
  const maxResponseBytes = positive(options.maxResponseBytes, DEFAULT_MAX_RESPONSE_BYTES, 'maxResponseBytes');
  const maxAttempts = Math.min(MAX_NODE_ATTEMPTS, positive(options.maxAttempts, Math.max(3, nodes.length), 'maxAttempts'));
  const now = options.now ?? (() => performance.now());
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' };
  if (options.apiKey) headers[API_KEY_HEADER] = options.apiKey;
  const agent = new Agent({ connect: { timeout: timeoutMs }, headersTimeout: timeoutMs, bodyTimeout: timeoutMs });
  /** URL → when its cool-down ends. */
  const coolingUntil = new Map<string, number>();

  /** Healthy URLs in configured order, then cooling ones, soonest back first. */
  function attemptOrder(): NodeBase[] {
    const at = now();
    const healthy = nodes.filter((node) => (coolingUntil.get(node.key) ?? 0) <= at);
    const cooling = nodes
      .filter((node) => (coolingUntil.get(node.key) ?? 0) > at)
      .sort((a, b) => coolingUntil.get(a.key)! - coolingUntil.get(b.key)!);
    return [...healthy, ...cooling];
  }

  async function run<T>(label: string, work: (node: NodeSession) => Promise<T>): Promise<T> {
    const order = attemptOrder();
    const failures: NodeFailure[] = [];
    for (let attempt = 0; attempt < maxAttempts; attempt++) {
      const round = Math.floor(attempt / order.length);
      if (round > 0 && attempt % order.length === 0) await sleep(backoff(retryDelayMs, round));
      const node = order[attempt % order.length]!;
      try {
        const result = await work({ url: node.url, post: (path, body) => postJson(node, path, body) });
        coolingUntil.delete(node.key);
        return result;
      } catch (error) {
        if (!(error instanceof NodeAttemptFailure)) throw error;
        const failure: NodeFailure = { url: node.url, kind: error.kind, detail: cap(error.message) };
        failures.push(failure);
        coolingUntil.set(node.key, now() + Math.max(cooldownMs, error.cooldownMs ?? 0));
        options.onAttemptFailure?.(failure, label);
      }
    }
    throw new TronNodeUnavailableError(label, failures);
  }

  async function runOnDistinctNodes<T>(label: string, count: number, work: (node: NodeSession) => Promise<T>): Promise<T[]> {
    if (!Number.isSafeInteger(count) || count < 1 || count > nodes.length) throw new Error(`runOnDistinctNodes: count must be 1..${nodes.length}, got ${count}`);
    const results: T[] = [];
    const failures: NodeFailure[] = [];
    for (const node of attemptOrder()) {
      if (results.length === count) break;
      try {
        results.push(await work({ url: node.url, post: (path, body) => postJson(node, path, body) }));
        coolingUntil.delete(node.key);
      } catch (error) {
        if (!(error instanceof NodeAttemptFailure)) throw error;
        const failure: NodeFailure = { url: node.url, kind: error.kind, detail: cap(error.message) };
        failures.push(failure);
        coolingUntil.set(node.key, now() + Math.max(cooldownMs, error.cooldownMs ?? 0));
        options.onAttemptFailure?.(failure, label);
      }
    }
    if (results.length < count) throw new TronNodeUnavailableError(label, failures);
    return results;
  }

  async function postJson(node: NodeBase, path: string, body: object): Promise<unknown> {
    const signal = AbortSignal.timeout(timeoutMs);
    let response;
    try {
      response = await agent.request({ origin: node.origin, path: node.pathPrefix + path, method: 'POST', headers, body: JSON.stringify(body), signal });
    } catch (error) {
      throw transportFailure(error, timeoutMs);
    }
    const { statusCode } = response;
    let text: string;
    try {
      text = await readCapped(response.body, maxResponseBytes);
    } catch (error) {
      throw error instanceof NodeAttemptFailure ? error : transportFailure(error, timeoutMs);
    }
    if (statusCode === 429) throw new NodeAttemptFailure('rate_limited', 'HTTP 429', retryAfterMs(response.headers['retry-after']));
    if (statusCode >= 500) throw new NodeAttemptFailure('http_status', `HTTP ${statusCode}: ${cap(text)}`);
    if (statusCode < 200 || statusCode >= 300) throw new TronNodeRequestError(node.url, path, statusCode, cap(text));
    return interpretAnswer(node.url, path, statusCode, text);
  }

  return { run, runOnDistinctNodes, nodeCount: nodes.length, close: () => agent.close() };
}

/**
 * Reads a 2xx body. Nodes report most errors with HTTP 200 and `{"Error": …}`
 * (TRON.md §1.8): being rate-limited is worth another node, anything else is
 * the request's fault. A lite full node answers history queries in plain text.
 */
function interpretAnswer(url: string, path: string, statusCode: number, text: string): unknown {
  if (text.startsWith('this API is closed')) throw new NodeAttemptFailure('not_served', cap(text));
  let json: unknown;
  try {
    json = parseNodeJson(text);
  } catch {
    throw new NodeAttemptFailure('invalid_answer', `not JSON: ${cap(text)}`);
  }
  if (json !== null && typeof json === 'object' && !Array.isArray(json) && 'Error' in json) {
    const detail = String((json as { Error: unknown }).Error);
    if (/lack of computing resources|rate limit|too many requests/i.test(detail)) throw new NodeAttemptFailure('rate_limited', cap(detail));
    throw new TronNodeRequestError(url, path, statusCode, cap(detail));
  }
  return json;
}

/** An integer of 16 or more digits outside a string: one that may not fit a double exactly. */
const LONG_INTEGER = /[:[,]\s*-?\d{16}/;

/**
 * JSON.parse, except that integers beyond 2^53 (balances are int64) keep their
 * exact value as bigint. The reviver costs several times the parse, so it runs
 * only when the text holds such a long integer (hex strings are quoted and do not count).
 */
export function parseNodeJson(text: string): unknown {
  if (!LONG_INTEGER.test(text)) return JSON.parse(text);
  return JSON.parse(text, (_key, value: unknown, context?: { source?: string }) => {
    if (typeof value === 'number' && !Number.isSafeInteger(value) && context?.source !== undefined && /^-?\d+$/.test(context.source)) {
      return BigInt(context.source);
    }
    return value;
  });
}

async function readCapped(body: AsyncIterable<Buffer>, maxBytes: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.length;
    if (size > maxBytes) throw new NodeAttemptFailure('invalid_answer', `answer larger than ${maxBytes} bytes`);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function transportFailure(error: unknown, timeoutMs: number): NodeAttemptFailure {
  const codes: string[] = [];
  const names: string[] = [];
  for (let current = error, depth = 0; current && depth < 5; current = (current as { cause?: unknown }).cause, depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string') codes.push(code);
    const name = (current as { name?: unknown }).name;
    if (typeof name === 'string') names.push(name);
  }
  const timeoutCodes = ['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'UND_ERR_CONNECT_TIMEOUT', 'ETIMEDOUT'];
  if (codes.some((code) => timeoutCodes.includes(code)) || names.includes('TimeoutError')) {
    return new NodeAttemptFailure('timeout', `no complete answer within ${timeoutMs} ms`);
  }
  const message = error instanceof Error ? error.message : String(error);
  return new NodeAttemptFailure('connection_error', codes[0] ? `${codes[0]}: ${message}` : message);
}

function retryAfterMs(header: string | string[] | undefined): number | undefined {
  const value = Array.isArray(header) ? header[0] : header;
  if (value === undefined || !/^\d{1,6}$/.test(value.trim())) return undefined;
  return Math.min(Number(value.trim()) * 1000, MAX_RETRY_AFTER_MS);
}

/** retryDelayMs doubled per round, between half and all of it (jitter), capped. */
function backoff(retryDelayMs: number, round: number): number {
  const full = Math.min(MAX_RETRY_DELAY_MS, retryDelayMs * 2 ** (round - 1));
  return full / 2 + Math.random() * (full / 2);
}

function parseNodeUrl(raw: string): NodeBase {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new Error(`TRON node URL ${JSON.stringify(raw)} is not a URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error(`TRON node URL ${url.origin} must be http or https`);
  if (url.search || url.hash) throw new Error(`TRON node URL ${url.origin} must not have a query or fragment`);
  if (url.username || url.password) throw new Error(`TRON node URL ${url.origin} must not carry credentials; use the API key setting`);
  const pathPrefix = url.pathname.replace(/\/+$/, '');
  return { key: raw, url: pathPrefix ? `${url.origin}/…` : url.origin, origin: url.origin, pathPrefix };
}

function positive(value: number | undefined, fallback: number, name: string): number {
  if (value === undefined) return fallback;
  if (!Number.isSafeInteger(value) || value <= 0) throw new Error(`TRON node client: ${name} must be a positive whole number, got ${value}`);
  return value;
}

function nonNegative(value: number | undefined, fallback: number, name: string): number {
  if (value === undefined) return fallback;
  if (!Number.isSafeInteger(value) || value < 0) throw new Error(`TRON node client: ${name} must be a whole number ≥ 0, got ${value}`);
  return value;
}

function cap(text: string): string {
  return text.length > DETAIL_CAP ? `${text.slice(0, DETAIL_CAP)}…` : text;
}

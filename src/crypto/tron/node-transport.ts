// HTTP to a list of TRON full nodes: one POST of JSON per call, a hard time
// limit per request, the answer read up to a cap, and failover. A unit of work
// (one or more requests whose answers are checked together) runs against one
// node; a retryable failure (connection error, timeout, 5xx, a "busy" answer,
// an answer we refuse to believe) puts that node in a short cool-down and moves
// the work to the next node, up to a bounded number of attempts. Anything else
// (HTTP 4xx, an `Error` answer) is the request's own fault and is thrown at once.
// Each URL may have a request budget (node-budget.ts) and its own API key; a
// rate-limited answer (429, TronGrid's "frequency limit", java-tron's "lack of
// computing resources") is not a failure: that URL is left alone for its
// Retry-After and the work waits for the first URL with budget, within maxWaitMs.
import { setTimeout as sleep } from 'node:timers/promises';
import { Agent } from 'undici';
import { retryAfterMs } from '../../retry-after.ts';
import { createNodeBudget, type NodeBudget } from './node-budget.ts';
import { NodeAttemptFailure, TronNodeRequestError, TronNodeUnavailableError, type NodeFailure } from './node-errors.ts';

const DEFAULT_NODE_TIMEOUT_MS = 5_000;
const DEFAULT_NODE_COOLDOWN_MS = 10_000;
const DEFAULT_NODE_RETRY_DELAY_MS = 200;
const DEFAULT_MAX_RESPONSE_BYTES = 32 * 1024 * 1024;
/** The most attempts one call may make, whatever the configuration says. */
const MAX_NODE_ATTEMPTS = 10;
/** A rate-limited answer's Retry-After (or "suspended for N s") is honoured up to this long. */
const MAX_RETRY_AFTER_MS = 60_000;
/** How long a rate-limited URL is left alone when its answer does not say. */
const DEFAULT_RATE_LIMIT_BACKOFF_MS = 1_000;
/** The least a rate-limited URL is left alone, whatever its answer says ("Retry-After: 0" is no reason to hammer it). */
const MIN_RATE_LIMIT_BACKOFF_MS = 200;
/** Default bound on the time one call spends waiting for budget or a rate-limited URL. */
const DEFAULT_NODE_MAX_WAIT_MS = 30_000;
/** Rate-limited answers one call takes before giving up, whatever the wait left. */
const MAX_RATE_LIMITED_ANSWERS = 20;
const MAX_RETRY_DELAY_MS = 2_000;
const DETAIL_CAP = 300;
const API_KEY_HEADER = 'TRON-PRO-API-KEY';

/** One node URL and what belongs to it alone. */
interface NodeEndpoint {
  /** The base URL (a path prefix is kept: `https://host/<token>`). */
  readonly url: string;
  /** Sent as `TRON-PRO-API-KEY` (TronGrid's key header) to this URL only. */
  readonly apiKey?: string | undefined;
  /** The request budget of this URL; unset: no budget (only rate-limited answers slow it down). */
  readonly requestsPerSecond?: number | undefined;
  /** Requests that may go at once after a quiet spell; default requestsPerSecond rounded up. */
  readonly burst?: number | undefined;
}

/** One request as it went, for metrics: `node` is the origin, never a path prefix or a key. */
export interface NodeRequestRecord {
  readonly node: string;
  readonly path: string;
  readonly outcome: 'ok' | 'rate_limited' | 'failed' | 'refused';
  readonly durationMs: number;
}

export interface NodeTransportOptions {
  /** Node base URLs, or endpoints with their own key and budget, in order of preference. */
  readonly urls: readonly (string | NodeEndpoint)[];
  /** Sent as `TRON-PRO-API-KEY`, only when there is a single URL (a key belongs to one provider); otherwise give each endpoint its own. */
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
  /** Bound on the time one call waits for a URL's budget or the end of its rate-limit back-off. */
  readonly maxWaitMs?: number | undefined;
  /** Told of every request that went out, for metrics. */
  readonly onRequest?: ((record: NodeRequestRecord) => void) | undefined;
  /** Monotonic milliseconds, for the cool-downs and budgets. */
  readonly now?: (() => number) | undefined;
  /** Waits this long (tests pass one that moves their `now`). */
  readonly sleep?: ((ms: number) => Promise<void>) | undefined;
}

/** One node for the span of one attempt. */
interface NodeSession {
  readonly url: string;
  /** POSTs `body` as JSON to `path`; answers the parsed JSON (integers beyond 2^53 as bigint). */
  post(path: string, body: object): Promise<unknown>;
}

export interface NodeTransport {
  /** Runs `work` against one node after another until it succeeds, fails for good, or the attempts are spent. */
  run<T>(label: string, work: (node: NodeSession) => Promise<T>): Promise<T>;
  /**
   * Runs `work` on `count` different nodes (healthy ones first) and answers their results in the
   * order they came; a node whose attempt fails is passed over for the next one, and asked once
   * more after a back-off when the first round fell short. Fewer than `count` answers:
   * TronNodeUnavailableError. For what one node's word must not decide alone.
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
  readonly headers: Readonly<Record<string, string>>;
  readonly budget: NodeBudget | undefined;
}

export function createNodeTransport(options: NodeTransportOptions): NodeTransport {
  if (options.urls.length === 0) throw new Error('the TRON node client needs at least one node URL');
  // A key shared by several URLs would reach providers it does not belong to.
  if (options.apiKey && options.urls.length > 1)
    throw new Error('the TRON node client sends an API key to one URL only: give each endpoint its own apiKey');
  const nodes = options.urls.map((entry) =>
    parseNodeEndpoint(
      typeof entry === 'string'
        ? { url: entry, apiKey: options.apiKey }
        : { ...entry, apiKey: entry.apiKey ?? options.apiKey },
    ),
  );
  const timeoutMs = positive(options.timeoutMs, DEFAULT_NODE_TIMEOUT_MS, 'timeoutMs');
  const cooldownMs = nonNegative(options.cooldownMs, DEFAULT_NODE_COOLDOWN_MS, 'cooldownMs');
  const retryDelayMs = nonNegative(options.retryDelayMs, DEFAULT_NODE_RETRY_DELAY_MS, 'retryDelayMs');
  const maxResponseBytes = positive(options.maxResponseBytes, DEFAULT_MAX_RESPONSE_BYTES, 'maxResponseBytes');
  const maxAttempts = Math.min(
    MAX_NODE_ATTEMPTS,
    positive(options.maxAttempts, Math.max(3, nodes.length), 'maxAttempts'),
  );
  const maxWaitMs = nonNegative(options.maxWaitMs, DEFAULT_NODE_MAX_WAIT_MS, 'maxWaitMs');
  const now = options.now ?? (() => performance.now());
  const wait = options.sleep ?? ((ms: number) => sleep(ms));
  const agent = new Agent({ connect: { timeout: timeoutMs }, headersTimeout: timeoutMs, bodyTimeout: timeoutMs });
  /** URL → when its failure cool-down ends. */
  const coolingUntil = new Map<string, number>();
  /** URL → until when it asked us (429, rate-limit answer) to leave it alone. Not a failure. */
  const rateLimitedUntil = new Map<string, number>();

  const isCooling = (node: NodeBase, at: number) => (coolingUntil.get(node.key) ?? 0) > at;
  /** The earliest a request to `node` may go, asked at `at`: after its rate-limit back-off, when its budget has a token. */
  const readyAt = (node: NodeBase, at: number) => {
    const free = Math.max(at, rateLimitedUntil.get(node.key) ?? at);
    return node.budget ? node.budget.peek(free) : free;
  };

  /**
   * Among the URLs this call has failed on least, those not cooling down: the
   * first in order of preference that can go now, else the one ready soonest (a
   * request waits for budget rather than go to a failing URL). When every such
   * URL is cooling, the soonest back.
   */
  function nextNode(at: number, failedHere: ReadonlyMap<string, number>): NodeBase {
    // Within one call, a URL that failed it is asked again only once every other has failed as often.
    const fewestFailures = Math.min(...nodes.map((node) => failedHere.get(node.key) ?? 0));
    const candidates = nodes.filter((node) => (failedHere.get(node.key) ?? 0) === fewestFailures);
    const open = candidates.filter((node) => !isCooling(node, at));
    if (open.length === 0)
      return [...candidates].sort((a, b) => (coolingUntil.get(a.key) ?? 0) - (coolingUntil.get(b.key) ?? 0))[0]!;
    let best = open[0]!;
    let bestAt = readyAt(best, at);
    for (const node of open.slice(1)) {
      const ready = readyAt(node, at);
      if (ready < bestAt) [best, bestAt] = [node, ready];
    }
    return best;
  }

  /** Waits for `node`'s turn: its rate-limit back-off, then a token of its budget; never past `deadline`. */
  async function takeTurn(node: NodeBase, deadline: number): Promise<void> {
    const at = now();
    const free = Math.max(at, rateLimitedUntil.get(node.key) ?? at);
    const grant = node.budget ? node.budget.reserve(free, deadline) : free <= deadline ? free : undefined;
    if (grant === undefined) throw new NodeBudgetExhausted(node.url, maxWaitMs);
    if (grant > at) await wait(grant - at);
  }

  async function run<T>(label: string, work: (node: NodeSession) => Promise<T>): Promise<T> {
    const deadline = now() + maxWaitMs;
    const failures: NodeFailure[] = [];
    /** URL → its failures in this call, for the pause before asking it again. */
    const failedHere = new Map<string, number>();
    let attempts = 0;
    let rateLimitedAnswers = 0;
    while (attempts < maxAttempts && rateLimitedAnswers < MAX_RATE_LIMITED_ANSWERS) {
      const node = nextNode(now(), failedHere);
      const earlier = failedHere.get(node.key) ?? 0;
      if (earlier > 0) await wait(backoff(retryDelayMs, earlier));
      try {
        const result = await work({ url: node.url, post: (path, body) => postJson(node, path, body, deadline) });
        coolingUntil.delete(node.key);
        return result;
      } catch (error) {
        if (error instanceof NodeBudgetExhausted) {
          const failure: NodeFailure = { url: error.url, kind: 'rate_limited', detail: error.message };
          failures.push(failure);
          options.onAttemptFailure?.(failure, label);
          break;
        }
        if (!(error instanceof NodeAttemptFailure)) throw error;
        if (noteFailure(node, error, label, failures) === 'rate_limited') {
          rateLimitedAnswers += 1;
          continue;
        }
        attempts += 1;
        failedHere.set(node.key, earlier + 1);
      }
    }
    throw new TronNodeUnavailableError(label, failures);
  }

  /**
   * Records a failed attempt: a rate-limited node is left alone for its back-off (the node is
   * fine, we are too fast: never marked failing); any other failure cools the node down.
   */
  function noteFailure(
    node: NodeBase,
    error: NodeAttemptFailure,
    label: string,
    failures: NodeFailure[],
  ): NodeFailure['kind'] {
    const failure: NodeFailure = { url: node.url, kind: error.kind, detail: cap(error.message) };
    failures.push(failure);
    options.onAttemptFailure?.(failure, label);
    if (error.kind === 'rate_limited') {
      const until = now() + Math.max(MIN_RATE_LIMIT_BACKOFF_MS, error.cooldownMs ?? DEFAULT_RATE_LIMIT_BACKOFF_MS);
      rateLimitedUntil.set(node.key, Math.max(rateLimitedUntil.get(node.key) ?? 0, until));
    } else {
      coolingUntil.set(node.key, now() + Math.max(cooldownMs, error.cooldownMs ?? 0));
    }
    return error.kind;
  }

  async function runOnDistinctNodes<T>(
    label: string,
    count: number,
    work: (node: NodeSession) => Promise<T>,
  ): Promise<T[]> {
    if (!Number.isSafeInteger(count) || count < 1 || count > nodes.length)
      throw new Error(`runOnDistinctNodes: count must be 1..${nodes.length}, got ${count}`);
    const deadline = now() + maxWaitMs;
    const answers: T[] = [];
    const failures: NodeFailure[] = [];
    // Healthy URLs first, in order of preference; each is asked at most twice (a rate-limited answer waits its back-off).
    const pending = [...nodes].sort((a, b) => Number(isCooling(a, now())) - Number(isCooling(b, now())));
    for (let round = 0; round < 2 && answers.length < count && pending.length > 0; round++) {
      if (round > 0) await wait(backoff(retryDelayMs, round));
      for (const node of [...pending]) {
        if (answers.length >= count) break;
        try {
          answers.push(await work({ url: node.url, post: (path, body) => postJson(node, path, body, deadline) }));
          coolingUntil.delete(node.key);
          pending.splice(pending.indexOf(node), 1);
        } catch (error) {
          if (error instanceof NodeBudgetExhausted) {
            failures.push({ url: error.url, kind: 'rate_limited', detail: error.message });
            continue;
          }
          if (!(error instanceof NodeAttemptFailure)) throw error;
          noteFailure(node, error, label, failures);
        }
      }
    }
    if (answers.length < count) throw new TronNodeUnavailableError(`${label} (on ${count} nodes)`, failures);
    return answers;
  }

  async function postJson(node: NodeBase, path: string, body: object, deadline: number): Promise<unknown> {
    await takeTurn(node, deadline);
    const startedAt = now();
    let outcome: NodeRequestRecord['outcome'] = 'failed';
    try {
      const answer = await exchange(node, path, body);
      outcome = 'ok';
      return answer;
    } catch (error) {
      if (error instanceof TronNodeRequestError) outcome = 'refused';
      else if (error instanceof NodeAttemptFailure && error.kind === 'rate_limited') outcome = 'rate_limited';
      throw error;
    } finally {
      options.onRequest?.({ node: node.origin, path, outcome, durationMs: now() - startedAt });
    }
  }

  async function exchange(node: NodeBase, path: string, body: object): Promise<unknown> {
    const signal = AbortSignal.timeout(timeoutMs);
    let response;
    try {
      response = await agent.request({
        origin: node.origin,
        path: node.pathPrefix + path,
        method: 'POST',
        headers: node.headers,
        body: JSON.stringify(body),
        signal,
      });
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
    if (statusCode < 200 || statusCode >= 300) {
      const limited = rateLimitFailure(statusCode, text, response.headers['retry-after']);
      if (limited) throw limited;
    }
    if (statusCode >= 500) throw new NodeAttemptFailure('http_status', `HTTP ${statusCode}: ${cap(text)}`);
    if (statusCode < 200 || statusCode >= 300) throw new TronNodeRequestError(node.url, path, statusCode, cap(text));
    return interpretAnswer(node.url, path, statusCode, text);
  }

  return { run, runOnDistinctNodes, nodeCount: nodes.length, close: () => agent.close() };
}

/** No turn on any URL within the call's wait bound: the call gives up instead of waiting longer. */
class NodeBudgetExhausted extends Error {
  readonly url: string;
  constructor(url: string, maxWaitMs: number) {
    super(`no request budget free (or the node's rate-limit back-off lasts) beyond ${maxWaitMs} ms`);
    this.name = 'NodeBudgetExhausted';
    this.url = url;
  }
}

/**
 * How providers say "too fast" (docs/tron.md §1.8): HTTP 429; TronGrid's 403 or 503
 * with `{"Error": "The key exceeds the frequency limit(15), and the query
 * server is suspended for 30s"}` or "request rate exceeded the allowed_rps";
 * java-tron's HTTP 200 `{"Error": "… lack of computing resources"}`
 * (RateLimiterServlet). The wait is Retry-After, else the suspension the text
 * names, clamped to MAX_RETRY_AFTER_MS.
 */
const RATE_LIMIT_TEXT =
  /lack of computing resources|rate limit|too many requests|frequency limit|request rate exceeded/i;

function rateLimitFailure(
  statusCode: number,
  text: string,
  retryAfter: string | string[] | undefined,
): NodeAttemptFailure | undefined {
  const head = text.slice(0, 1_000);
  if (statusCode !== 429 && !RATE_LIMIT_TEXT.test(head)) return undefined;
  return new NodeAttemptFailure(
    'rate_limited',
    `HTTP ${statusCode}: ${cap(head)}`,
    cappedRetryAfterMs(retryAfter) ?? suspensionMs(head),
  );
}

function suspensionMs(text: string): number | undefined {
  const match = /suspended for (\d{1,6})\s*s/i.exec(text);
  return match ? Math.min(Number(match[1]) * 1000, MAX_RETRY_AFTER_MS) : undefined;
}

/**
 * Reads a 2xx body. Nodes report most errors with HTTP 200 and `{"Error": …}`
 * (docs/tron.md §1.8): being rate-limited is worth another node, anything else is
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
    if (RATE_LIMIT_TEXT.test(detail)) throw new NodeAttemptFailure('rate_limited', cap(detail), suspensionMs(detail));
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
    if (
      typeof value === 'number' &&
      !Number.isSafeInteger(value) &&
      context?.source !== undefined &&
      /^-?\d+$/.test(context.source)
    ) {
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
  for (
    let current = error, depth = 0;
    current && depth < 5;
    current = (current as { cause?: unknown }).cause, depth++
  ) {
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

function cappedRetryAfterMs(header: string | string[] | undefined): number | undefined {
  const ms = retryAfterMs(header, new Date());
  return ms === undefined ? undefined : Math.min(ms, MAX_RETRY_AFTER_MS);
}

/** retryDelayMs doubled per round, between half and all of it (jitter), capped. */
function backoff(retryDelayMs: number, round: number): number {
  const full = Math.min(MAX_RETRY_DELAY_MS, retryDelayMs * 2 ** (round - 1));
  return full / 2 + Math.random() * (full / 2);
}

function parseNodeEndpoint(endpoint: NodeEndpoint): NodeBase {
  const base = parseNodeUrl(endpoint.url);
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' };
  if (endpoint.apiKey) headers[API_KEY_HEADER] = endpoint.apiKey;
  const budget =
    endpoint.requestsPerSecond === undefined
      ? undefined
      : createNodeBudget({
          requestsPerSecond: endpoint.requestsPerSecond,
          burst: endpoint.burst ?? Math.ceil(endpoint.requestsPerSecond),
        });
  return { ...base, headers, budget };
}

function parseNodeUrl(raw: string): Omit<NodeBase, 'headers' | 'budget'> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new Error(`TRON node URL ${JSON.stringify(raw)} is not a URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new Error(`TRON node URL ${url.origin} must be http or https`);
  if (url.search || url.hash) throw new Error(`TRON node URL ${url.origin} must not have a query or fragment`);
  if (url.username || url.password)
    throw new Error(`TRON node URL ${url.origin} must not carry credentials; use the API key setting`);
  const pathPrefix = url.pathname.replace(/\/+$/, '');
  return { key: raw, url: pathPrefix ? `${url.origin}/…` : url.origin, origin: url.origin, pathPrefix };
}

function positive(value: number | undefined, fallback: number, name: string): number {
  if (value === undefined) return fallback;
  if (!Number.isSafeInteger(value) || value <= 0)
    throw new Error(`TRON node client: ${name} must be a positive whole number, got ${value}`);
  return value;
}

function nonNegative(value: number | undefined, fallback: number, name: string): number {
  if (value === undefined) return fallback;
  if (!Number.isSafeInteger(value) || value < 0)
    throw new Error(`TRON node client: ${name} must be a whole number ≥ 0, got ${value}`);
  return value;
}

function cap(text: string): string {
  return text.length > DETAIL_CAP ? `${text.slice(0, DETAIL_CAP)}…` : text;
}

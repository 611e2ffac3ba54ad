// One HTTP attempt of a webhook: POST the exact payload with its signed headers,
// no redirects followed, a hard time limit, the answer read up to a small cap.
// Connections go through the SSRF guard's lookup, so the address checked is the
// address connected to.
import { performance } from 'node:perf_hooks';
import { Agent, type Dispatcher } from 'undici';
import { LRUCache } from 'lru-cache';
import type { Config } from '../config.ts';
import type { AttemptOutcome } from './webhook-tables.ts';
import { AddressRefusedError, checkLiteralHost, guardedLookup, webhookUrlShapeProblem } from './url-guard.ts';

export const DEFAULT_ATTEMPT_TIMEOUT_MS = 10_000;
/** How much of a receiver's answer is read and stored. */
const RESPONSE_BODY_CAP_BYTES = 4_096;
const ERROR_TEXT_CAP = 1_000;

interface SendRequest {
  readonly url: string;
  readonly headers: Record<string, string>;
  readonly body: string;
}

export interface SendResult {
  readonly outcome: AttemptOutcome;
  readonly statusCode: number | null;
  readonly error: string | null;
  readonly responseBody: string | null;
  readonly durationMs: number;
  /** The receiver's Retry-After header, raw (only kept for 429 and 503). */
  readonly retryAfter: string | undefined;
}

export interface WebhookSender {
  send(input: SendRequest): Promise<SendResult>;
  /** The receiver origin a URL sends to (the URL itself when it is refused): the key of per-receiver limits. */
  originOf(url: string): string;
  close(): Promise<void>;
}

export interface SenderOptions {
  readonly config: Pick<Config, 'allowHttpWebhooks' | 'webhookAllowPrivate'>;
  readonly timeoutMs?: number | undefined;
  /** Connections per receiver origin; the worker's per-origin cap bounds the attempts anyway. */
  readonly connectionsPerOrigin?: number | undefined;
}

export function createWebhookSender(options: SenderOptions): WebhookSender {
  const timeoutMs = options.timeoutMs ?? DEFAULT_ATTEMPT_TIMEOUT_MS;
  const agent = new Agent({
    connections: options.connectionsPerOrigin ?? null,
    connect: { lookup: guardedLookup(options.config), timeout: timeoutMs },
    headersTimeout: timeoutMs,
    bodyTimeout: timeoutMs,
  });
  const targets = createTargetCache(options.config);
  return {
    send: (input) => sendOnce(agent, targets, timeoutMs, input),
    originOf: (url) => targets(url).origin ?? url,
    close: () => agent.close(),
  };
}

/** Where a URL sends to, or why it may not: worked out once per URL, as it depends only on the URL and the configuration. */
type Target =
  | { readonly origin: string; readonly path: string; readonly refusal?: undefined }
  | { readonly refusal: string; readonly origin?: undefined };

const TARGET_CACHE_SIZE = 1_000;

function createTargetCache(config: SenderOptions['config']) {
  const cache = new LRUCache<string, Target>({ max: TARGET_CACHE_SIZE });
  return (url: string): Target => {
    let target = cache.get(url);
    if (target) return target;
    target = resolveTarget(url, config);
    cache.set(url, target);
    return target;
  };
}

function resolveTarget(raw: string, config: SenderOptions['config']): Target {
  // Names are checked when connecting (guardedLookup), literals here.
  const problem = webhookUrlShapeProblem(raw, config);
  if (problem) return { refusal: `the URL ${problem}` };
  const url = new URL(raw);
  try {
    checkLiteralHost(url.hostname, config);
  } catch (error) {
    if (error instanceof AddressRefusedError) return { refusal: error.message };
    throw error;
  }
  return { origin: url.origin, path: `${url.pathname}${url.search}` };
}

/**
 * One attempt through undici's dispatcher with a handler of our own: the answer's
 * status, Retry-After and first bytes are all an attempt needs, so no response
 * stream is built, and one timer bounds the whole attempt.
 */
function sendOnce(
  agent: Agent,
  targets: (url: string) => Target,
  timeoutMs: number,
  input: SendRequest,
): Promise<SendResult> {
  const started = performance.now();
  const elapsed = () => Math.max(0, Math.round(performance.now() - started));
  const target = targets(input.url);
  if (target.refusal !== undefined) return Promise.resolve(failure('refused', target.refusal, elapsed()));
  return new Promise<SendResult>((resolve) => {
    let controller: Dispatcher.DispatchController | undefined;
    let settled = false;
    let statusCode = 0;
    let retryAfter: string | undefined;
    const chunks: Buffer[] = [];
    let size = 0;
    const finish = (result: SendResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(result);
    };
    const answered = () => {
      const succeeded = statusCode >= 200 && statusCode < 300;
      finish({
        outcome: succeeded ? 'succeeded' : 'http_error',
        statusCode,
        error: succeeded ? null : `the receiver answered HTTP ${statusCode}`,
        responseBody: capturedBody(chunks),
        durationMs: elapsed(),
        retryAfter,
      });
    };
    const timer = setTimeout(() => {
      finish(timedOut(timeoutMs, elapsed()));
      controller?.abort(new Error('attempt timed out'));
    }, timeoutMs);
    const handler: Dispatcher.DispatchHandler = {
      onRequestStart(started) {
        controller = started;
        if (settled) started.abort(new Error('attempt timed out'));
      },
      onResponseStart(_controller, code, headers) {
        // undici never follows redirects on its own (no redirect interceptor): a 3xx is the answer.
        statusCode = code;
        const header = headers['retry-after'];
        if ((code === 429 || code === 503) && typeof header === 'string') retryAfter = header;
      },
      onResponseData(active, chunk) {
        if (size >= RESPONSE_BODY_CAP_BYTES) return;
        chunks.push(chunk);
        size += chunk.length;
        if (size >= RESPONSE_BODY_CAP_BYTES) {
          // Enough read: the answer counts as given, and the rest of it is not waited for.
          answered();
          active.abort(new Error('response body cap reached'));
        }
      },
      onResponseEnd() {
        answered();
      },
      onResponseError(_controller, error) {
        // The aborts of the timer and of the body cap land here too, after the attempt settled.
        if (settled) return;
        finish(classifyFailure(error, timeoutMs, elapsed()));
      },
    };
    try {
      agent.dispatch(
        { origin: target.origin, path: target.path, method: 'POST', headers: input.headers, body: input.body },
        handler,
      );
    } catch (error) {
      finish(classifyFailure(error, timeoutMs, elapsed()));
    }
  });
}

/** The stored answer: at most the cap, NUL characters removed (PostgreSQL text cannot hold them), null when empty. */
function capturedBody(chunks: readonly Buffer[]): string | null {
  if (chunks.length === 0) return null;
  // Cutting at a byte boundary may split a character; the decoder replaces the remainder.
  const bytes = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
  const text = bytes.subarray(0, RESPONSE_BODY_CAP_BYTES).toString('utf8');
  if (text.length === 0) return null;
  return text.replaceAll('\u0000', '').slice(0, RESPONSE_BODY_CAP_BYTES);
}

function failure(outcome: AttemptOutcome, error: string, durationMs: number): SendResult {
  return {
    outcome,
    statusCode: null,
    error: error.replaceAll('\u0000', '').slice(0, ERROR_TEXT_CAP),
    responseBody: null,
    durationMs,
    retryAfter: undefined,
  };
}

function timedOut(timeoutMs: number, durationMs: number): SendResult {
  return failure('timeout', `no complete answer within ${timeoutMs} ms`, durationMs);
}

function causes(error: unknown): unknown[] {
  const chain: unknown[] = [];
  for (let current = error; current && chain.length < 5; current = (current as { cause?: unknown }).cause)
    chain.push(current);
  return chain;
}

function classifyFailure(error: unknown, timeoutMs: number, durationMs: number): SendResult {
  const chain = causes(error);
  const refused = chain.find((item) => item instanceof AddressRefusedError);
  if (refused) return failure('refused', (refused as Error).message, durationMs);
  const codes = chain
    .map((item) => (item as { code?: unknown }).code)
    .filter((code): code is string => typeof code === 'string');
  const timeoutCodes = ['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'UND_ERR_CONNECT_TIMEOUT', 'ETIMEDOUT'];
  if (codes.some((code) => timeoutCodes.includes(code))) return timedOut(timeoutMs, durationMs);
  if (codes.some((code) => code === 'ENOTFOUND' || code === 'EAI_AGAIN')) {
    return failure('connection_error', `DNS lookup failed: ${(error as Error).message}`, durationMs);
  }
  const message = error instanceof Error ? error.message : String(error);
  const code = codes[0] ? `${codes[0]}: ` : '';
  return failure('connection_error', `${code}${message}`, durationMs);
}

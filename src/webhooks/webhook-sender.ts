// One HTTP attempt of a webhook: POST the exact payload with its signed headers,
// no redirects followed, a hard time limit, the answer read up to a small cap.
// Connections go through the SSRF guard's lookup, so the address checked is the
// address connected to.
import { performance } from 'node:perf_hooks';
import { Agent, request } from 'undici';
import type { Config } from '../config.ts';
import type { AttemptOutcome } from './webhook-tables.ts';
import { AddressRefusedError, checkLiteralHost, guardedLookup, webhookUrlProblem } from './url-guard.ts';

export const DEFAULT_ATTEMPT_TIMEOUT_MS = 10_000;
/** How much of a receiver's answer is read and stored. */
export const RESPONSE_BODY_CAP_BYTES = 4_096;
const ERROR_TEXT_CAP = 1_000;

export interface SendRequest {
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
  close(): Promise<void>;
}

export interface SenderOptions {
  readonly config: Pick<Config, 'allowHttpWebhooks' | 'webhookAllowPrivate'>;
  readonly timeoutMs?: number | undefined;
  /** Connections per receiver origin; the worker's concurrency bounds the total anyway. */
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
  return {
    send: (input) => sendOnce(agent, options.config, timeoutMs, input),
    close: () => agent.close(),
  };
}

async function sendOnce(agent: Agent, config: SenderOptions['config'], timeoutMs: number, input: SendRequest): Promise<SendResult> {
  const started = performance.now();
  const elapsed = () => Math.max(0, Math.round(performance.now() - started));
  const problem = webhookUrlProblem(input.url, config);
  if (problem) return failure('refused', `the URL ${problem}`, elapsed());
  const signal = AbortSignal.timeout(timeoutMs);
  try {
    checkLiteralHost(new URL(input.url).hostname, config);
    // undici's request never follows redirects unless a redirect interceptor is added: a 3xx is the answer.
    const response = await request(input.url, {
      method: 'POST',
      headers: input.headers,
      body: input.body,
      dispatcher: agent,
      signal,
    });
    const responseBody = await readCapped(response.body, response.headers['content-length']);
    const statusCode = response.statusCode;
    const succeeded = statusCode >= 200 && statusCode < 300;
    const retryAfterHeader = response.headers['retry-after'];
    return {
      outcome: succeeded ? 'succeeded' : 'http_error',
      statusCode,
      error: succeeded ? null : `the receiver answered HTTP ${statusCode}`,
      responseBody,
      durationMs: elapsed(),
      retryAfter: (statusCode === 429 || statusCode === 503) && typeof retryAfterHeader === 'string' ? retryAfterHeader : undefined,
    };
  } catch (error) {
    return classifyFailure(error, signal, timeoutMs, elapsed());
  }
}

function failure(outcome: AttemptOutcome, error: string, durationMs: number): SendResult {
  return { outcome, statusCode: null, error: error.replaceAll('\u0000', '').slice(0, ERROR_TEXT_CAP), responseBody: null, durationMs, retryAfter: undefined };
}

function causes(error: unknown): unknown[] {
  const chain: unknown[] = [];
  for (let current = error; current && chain.length < 5; current = (current as { cause?: unknown }).cause) chain.push(current);
  return chain;
}

function classifyFailure(error: unknown, signal: AbortSignal, timeoutMs: number, durationMs: number): SendResult {
  const chain = causes(error);
  const refused = chain.find((item) => item instanceof AddressRefusedError);
  if (refused) return failure('refused', (refused as Error).message, durationMs);
  const codes = chain.map((item) => (item as { code?: unknown }).code).filter((code): code is string => typeof code === 'string');
  const timeoutCodes = ['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'UND_ERR_CONNECT_TIMEOUT', 'ETIMEDOUT'];
  if (signal.aborted || codes.some((code) => timeoutCodes.includes(code))) {
    return failure('timeout', `no complete answer within ${timeoutMs} ms`, durationMs);
  }
  if (codes.some((code) => code === 'ENOTFOUND' || code === 'EAI_AGAIN')) {
    return failure('connection_error', `DNS lookup failed: ${(error as Error).message}`, durationMs);
  }
  const message = error instanceof Error ? error.message : String(error);
  const code = codes[0] ? `${codes[0]}: ` : '';
  return failure('connection_error', `${code}${message}`, durationMs);
}

/** Reads at most the cap; a longer answer is cut off and its connection dropped. */
async function readCapped(
  body: AsyncIterable<Buffer> & { destroy(): unknown; text(): Promise<string> },
  contentLength: string | string[] | undefined,
): Promise<string | null> {
  let text: string;
  if (typeof contentLength === 'string' && /^\d{1,4}$/.test(contentLength) && Number(contentLength) <= RESPONSE_BODY_CAP_BYTES) {
    // The usual case: a short answer of announced length, read in one go.
    text = await body.text();
  } else {
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of body) {
      chunks.push(chunk);
      size += chunk.length;
      if (size >= RESPONSE_BODY_CAP_BYTES) {
        body.destroy();
        break;
      }
    }
    // Cutting at a byte boundary may split a character; the decoder replaces the remainder.
    text = Buffer.concat(chunks).subarray(0, RESPONSE_BODY_CAP_BYTES).toString('utf8');
  }
  if (text.length === 0) return null;
  // PostgreSQL text cannot hold NUL characters.
  return text.replaceAll('\u0000', '').slice(0, RESPONSE_BODY_CAP_BYTES);
}

// One call to the API: builds the request, sends it, and retries what is safe to
// retry — a network failure, 429 and 503 (and a 409 that says its idempotency key
// is still running) — honouring Retry-After within a bound. A POST carries one
// Idempotency-Key for the whole call, so a retry can never create a second object.
import { randomUUID } from 'node:crypto';
import { PaygateConnectionError, PaygateError } from './errors.ts';
import type { RequestOptions } from './types.ts';
import { SDK_VERSION } from './version.ts';

export interface PaygateOptions {
  /** The shop's API key (`pg_…`), sent as `Authorization: Bearer`. */
  readonly apiKey: string;
  /** The gateway's address, for example `https://pay.example.com`. */
  readonly baseUrl: string;
  /** Retries after the first attempt (default 2, at most 10). */
  readonly maxRetries?: number;
  /** The longest wait between attempts, whatever Retry-After asks (default 30 000). */
  readonly maxRetryDelayMs?: number;
  /** One attempt's time limit (default 60 000). */
  readonly timeoutMs?: number;
  /** Another fetch (a proxy agent, a test double); the global fetch by default. */
  readonly fetch?: typeof fetch;
}

export interface ApiRequest {
  readonly method: 'GET' | 'POST' | 'PUT';
  /** The path template of the OpenAPI document, `/v1/payments/{payment_id}`. */
  readonly path: string;
  readonly pathParams?: Readonly<Record<string, string>>;
  readonly query?: object;
  readonly body?: unknown;
  readonly options?: RequestOptions;
}

const MAX_RETRIES_LIMIT = 10;
const BASE_BACKOFF_MS = 500;

export class HttpClient {
  readonly #apiKey: string;
  readonly #baseUrl: string;
  readonly #maxRetries: number;
  readonly #maxRetryDelayMs: number;
  readonly #timeoutMs: number;
  readonly #fetch: typeof fetch;

  constructor(options: PaygateOptions) {
    if (!options.apiKey) throw new TypeError('Paygate: apiKey is required');
    this.#apiKey = options.apiKey;
    this.#baseUrl = new URL(options.baseUrl).href.replace(/\/+$/, '');
    this.#maxRetries = Math.min(Math.max(Math.trunc(options.maxRetries ?? 2), 0), MAX_RETRIES_LIMIT);
    this.#maxRetryDelayMs = Math.max(options.maxRetryDelayMs ?? 30_000, 0);
    this.#timeoutMs = options.timeoutMs ?? 60_000;
    this.#fetch = options.fetch ?? globalThis.fetch;
  }

  async request<T>(request: ApiRequest): Promise<T> {
    const url = this.#url(request);
    const headers: Record<string, string> = {
      authorization: `Bearer ${this.#apiKey}`,
      accept: 'application/json, image/svg+xml',
      'user-agent': `paygate-node/${SDK_VERSION}`,
    };
    if (request.method === 'POST') headers['idempotency-key'] = request.options?.idempotencyKey ?? randomUUID();
    let body: string | undefined;
    if (request.body !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(request.body);
    }
    for (let attempt = 0; ; attempt++) {
      const retriesLeft = attempt < this.#maxRetries;
      let response: Response;
      try {
        response = await this.#fetch(url, {
          method: request.method,
          headers,
          body,
          redirect: 'error',
          signal: this.#signal(request.options?.signal),
        });
      } catch (cause) {
        if (request.options?.signal?.aborted) throw cause;
        if (!retriesLeft) {
          throw new PaygateConnectionError(`${request.method} ${request.path}: no answer (${describe(cause)})`, cause);
        }
        await this.#wait(backoffMs(attempt, this.#maxRetryDelayMs), request.options?.signal);
        continue;
      }
      if (response.ok) return (await readBody(response)) as T;
      if (retriesLeft && isRetryable(response, headers['idempotency-key'] !== undefined)) {
        // The answer is not used: release its connection before waiting.
        await response.body?.cancel();
        const asked = retryAfterMs(response.headers.get('retry-after'), Date.now());
        await this.#wait(
          Math.min(asked ?? backoffMs(attempt, this.#maxRetryDelayMs), this.#maxRetryDelayMs),
          request.options?.signal,
        );
        continue;
      }
      throw await errorOf(response);
    }
  }

  /**
   * A long-lived GET answered with a stream (Server-Sent Events): one attempt, no time limit but
   * the caller's signal; a refusal is thrown as a PaygateError.
   */
  async openStream(
    request: ApiRequest,
    headers: Readonly<Record<string, string>> = {},
  ): Promise<ReadableStream<Uint8Array>> {
    let response: Response;
    try {
      response = await this.#fetch(this.#url(request), {
        method: 'GET',
        headers: {
          authorization: `Bearer ${this.#apiKey}`,
          accept: 'text/event-stream',
          'user-agent': `paygate-node/${SDK_VERSION}`,
          ...headers,
        },
        redirect: 'error',
        ...(request.options?.signal ? { signal: request.options.signal } : {}),
      });
    } catch (cause) {
      if (request.options?.signal?.aborted) throw cause;
      throw new PaygateConnectionError(`GET ${request.path}: no answer (${describe(cause)})`, cause);
    }
    if (!response.ok || !response.body) throw await errorOf(response);
    return response.body;
  }

  #url(request: ApiRequest): string {
    const path = request.path.replace(/\{(\w+)\}/g, (_, name: string) => {
      const value = request.pathParams?.[name];
      if (value === undefined || value === '') throw new TypeError(`Paygate: ${name} is required`);
      return encodeURIComponent(value);
    });
    const search = new URLSearchParams();
    for (const [name, value] of Object.entries(request.query ?? {})) {
      if (value !== undefined && value !== null) search.append(name, String(value));
    }
    const query = search.toString();
    return `${this.#baseUrl}${path}${query === '' ? '' : `?${query}`}`;
  }

  #signal(caller: AbortSignal | undefined): AbortSignal {
    const timeout = AbortSignal.timeout(this.#timeoutMs);
    return caller === undefined ? timeout : AbortSignal.any([caller, timeout]);
  }

  #wait(ms: number, signal: AbortSignal | undefined): Promise<void> {
    return new Promise((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason);
      const timer = setTimeout(done, ms);
      function done() {
        signal?.removeEventListener('abort', aborted);
        resolve();
      }
      function aborted() {
        clearTimeout(timer);
        reject(signal?.reason);
      }
      signal?.addEventListener('abort', aborted, { once: true });
    });
  }
}

function isRetryable(response: Response, idempotent: boolean): boolean {
  if (response.status === 429 || response.status === 503) return true;
  // The same key's first request is still running (after a lost answer): wait for it.
  return idempotent && response.status === 409 && response.headers.has('retry-after');
}

/** Retry-After as seconds or an HTTP date, in milliseconds from `nowMs`; undefined when absent or unreadable. */
function retryAfterMs(header: string | null, nowMs: number): number | undefined {
  if (header === null || header.trim() === '') return undefined;
  const text = header.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const date = Date.parse(text);
  return Number.isNaN(date) ? undefined : Math.max(date - nowMs, 0);
}

/** Exponential back-off with full jitter, so that many clients do not retry in step. */
function backoffMs(attempt: number, maxMs: number): number {
  return Math.random() * Math.min(maxMs, BASE_BACKOFF_MS * 2 ** attempt);
}

async function readBody(response: Response): Promise<unknown> {
  const type = response.headers.get('content-type') ?? '';
  if (type.includes('json')) return response.json();
  return response.text();
}

async function errorOf(response: Response): Promise<PaygateError> {
  const text = await response.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // Not JSON (a proxy's page): the status says what happened.
  }
  const fields = typeof body === 'object' && body !== null ? (body as Record<string, unknown>) : {};
  return new PaygateError({
    error: typeof fields.error === 'string' ? fields.error : `http_${response.status}`,
    message: typeof fields.message === 'string' ? fields.message : `HTTP ${response.status}`,
    status: response.status,
    request_id:
      typeof fields.request_id === 'string' ? fields.request_id : (response.headers.get('x-request-id') ?? undefined),
    body,
  });
}

function describe(cause: unknown): string {
  if (cause instanceof Error) {
    const inner = cause.cause instanceof Error ? `: ${cause.cause.message}` : '';
    return `${cause.message}${inner}`;
  }
  return String(cause);
}

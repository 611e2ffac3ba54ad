// The HTTP client of YooKassa's API v3: HTTP Basic (shopId:secretKey), JSON,
// an `Idempotence-Key` on every POST. A call is bounded by a timeout well under
// the gateway's 60 s reconciliation bound and retried a few times on a network
// failure, a timeout, 5xx, 429 or 202 "processing" — always with the SAME key,
// as YooKassa asks ("Идемпотентность": repeat with the same key to learn the
// result). A 4xx answer is a `YooKassaApiError` carrying YooKassa's error
// object; it is never retried.
import { createHash } from 'node:crypto';
import { RetryableAnswer, callWithRetries, cappedPauseMs, jsonObjectOf, retryAfterHeaderMs } from '../acquirer-http.ts';

export const YOOKASSA_PRODUCTION_API_URL = 'https://api.yookassa.ru/v3';

/** YooKassa answered, and refused: `code` is its error code (e.g. `invalid_request`). */
export class YooKassaApiError extends Error {
  readonly statusCode: number;
  readonly code: string;
  readonly parameter: string | undefined;
  constructor(path: string, statusCode: number, code: string, description: string, parameter: string | undefined) {
    super(`YooKassa ${path} refused: HTTP ${statusCode} ${code}: ${description}${parameter ? ` (${parameter})` : ''}`);
    this.name = 'YooKassaApiError';
    this.statusCode = statusCode;
    this.code = code;
    this.parameter = parameter;
  }
}

/** No usable answer after every attempt (network, timeout, 5xx, 429, 202): the outcome is unknown. */
export class YooKassaUnavailableError extends Error {
  readonly path: string;
  constructor(path: string, message: string, options?: { cause?: unknown }) {
    super(`YooKassa ${path} unavailable: ${message}`, options);
    this.name = 'YooKassaUnavailableError';
    this.path = path;
  }
}

export interface YooKassaClientOptions {
  readonly apiUrl: string;
  readonly shopId: string;
  readonly secretKey: string;
  /** Per attempt; three attempts with their pauses stay under 60 s. */
  readonly timeoutMs?: number | undefined;
  readonly maxAttempts?: number | undefined;
  /** The first pause between attempts; doubled each time, with jitter. */
  readonly retryBaseMs?: number | undefined;
}

export type YooKassaObject = Readonly<Record<string, unknown>>;

const DEFAULT_TIMEOUT_MS = 15_000;
const DEFAULT_MAX_ATTEMPTS = 3;
const DEFAULT_RETRY_BASE_MS = 300;
const RETRY_AFTER_MAX_MS = 5_000;
const MAX_RESPONSE_CHARS = 1_000_000;
/** "Idempotence-Key: up to 64 characters". */
const IDEMPOTENCE_KEY_MAX_CHARS = 64;

/** Our keys as YooKassa's Idempotence-Key: as they are when short enough, else their SHA-256 (64 hex digits). */
export function idempotenceKeyOf(key: string): string {
  if (key.length <= IDEMPOTENCE_KEY_MAX_CHARS && /^[\x21-\x7e]+$/.test(key)) return key;
  return createHash('sha256').update(key).digest('hex');
}

function parseObject(path: string, statusCode: number, text: string): YooKassaObject {
  const read = jsonObjectOf(text, MAX_RESPONSE_CHARS);
  if ('problem' in read) throw new YooKassaUnavailableError(path, `HTTP ${statusCode} with ${read.problem}`);
  return read.object;
}

function text(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

export function createYooKassaClient(options: YooKassaClientOptions) {
  const base = options.apiUrl.replace(/\/+$/, '');
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const maxAttempts = options.maxAttempts ?? DEFAULT_MAX_ATTEMPTS;
  const retryBaseMs = options.retryBaseMs ?? DEFAULT_RETRY_BASE_MS;
  const authorization = `Basic ${Buffer.from(`${options.shopId}:${options.secretKey}`).toString('base64')}`;

  async function attempt(path: string, init: RequestInit): Promise<YooKassaObject> {
    const response = await fetch(`${base}${path}`, { ...init, signal: AbortSignal.timeout(timeoutMs) });
    if (response.status === 429 || response.status >= 500) {
      await response.body?.cancel();
      throw new RetryableAnswer(
        `HTTP ${response.status}`,
        retryAfterHeaderMs(response.headers.get('retry-after'), RETRY_AFTER_MAX_MS),
      );
    }
    const answer = parseObject(path, response.status, await response.text());
    if (response.status === 202) {
      // "Запрос принят, но еще не обработан": ask again with the same key after retry_after (in ms, not seconds).
      const after = answer['retry_after'];
      throw new RetryableAnswer(
        'HTTP 202 processing',
        cappedPauseMs(typeof after === 'number' ? after : undefined, RETRY_AFTER_MAX_MS),
      );
    }
    if (response.status >= 400) {
      throw new YooKassaApiError(
        path,
        response.status,
        text(answer['code']) ?? 'unknown',
        text(answer['description']) ?? 'no description',
        text(answer['parameter']),
      );
    }
    return answer;
  }

  function withRetries(path: string, init: RequestInit): Promise<YooKassaObject> {
    return callWithRetries(() => attempt(path, init), {
      maxAttempts,
      retryBaseMs,
      isFinal: (error) => error instanceof YooKassaApiError || error instanceof YooKassaUnavailableError,
      exhausted: (message, lastError) => new YooKassaUnavailableError(path, message, { cause: lastError }),
    });
  }

  return {
    shopId: options.shopId,
    /** A POST of `body` under `idempotenceKey`; every retry repeats the same key and the same bytes. */
    post(path: string, body: Readonly<Record<string, unknown>>, idempotenceKey: string): Promise<YooKassaObject> {
      return withRetries(path, {
        method: 'POST',
        headers: {
          authorization,
          'content-type': 'application/json',
          accept: 'application/json',
          'idempotence-key': idempotenceKeyOf(idempotenceKey),
        },
        body: JSON.stringify(body),
      });
    },
    get(path: string, query?: Readonly<Record<string, string>>): Promise<YooKassaObject> {
      const search = query ? `?${new URLSearchParams(query).toString()}` : '';
      return withRetries(`${path}${search}`, { method: 'GET', headers: { authorization, accept: 'application/json' } });
    },
  };
}

export type YooKassaClient = ReturnType<typeof createYooKassaClient>;

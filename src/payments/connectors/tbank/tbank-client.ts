// The HTTP client of T-Bank's Internet Acquiring API v2: JSON POSTs signed
// with `Token`, each call bounded by a timeout well under the gateway's 60 s
// reconciliation bound, and retried a few times on a network failure, a
// timeout, 5xx or 429. An answer with `Success: false` is a `TBankApiError`
// carrying T-Bank's ErrorCode, Message and Details; it is never retried.
import { setTimeout as pause } from 'node:timers/promises';
import { tbankToken } from './tbank-token.ts';

export const TBANK_PRODUCTION_API_URL = 'https://securepay.tinkoff.ru/v2';

/** T-Bank answered, and refused: `errorCode` is its ErrorCode (e.g. `204` wrong token). */
export class TBankApiError extends Error {
  readonly method: string;
  readonly errorCode: string;
  readonly details: string | undefined;
  /** The whole answer, when there was one (a refusal may still carry a Status). */
  readonly answer: TBankResponse | undefined;
  constructor(method: string, errorCode: string, message: string, details: string | undefined, answer?: TBankResponse) {
    super(`T-Bank ${method} refused: ErrorCode ${errorCode}: ${message}${details ? ` (${details})` : ''}`);
    this.name = 'TBankApiError';
    this.method = method;
    this.errorCode = errorCode;
    this.details = details;
    this.answer = answer;
  }
}

/** No usable answer after every attempt (network, timeout, 5xx, 429): the outcome is unknown. */
export class TBankUnavailableError extends Error {
  readonly method: string;
  constructor(method: string, message: string, options?: { cause?: unknown }) {
    super(`T-Bank ${method} unavailable: ${message}`, options);
    this.name = 'TBankUnavailableError';
    this.method = method;
  }
}

export interface TBankClientOptions {
  readonly apiUrl: string;
  readonly terminalKey: string;
  readonly password: string;
  /** Per attempt; three attempts with their pauses stay under 60 s. */
  readonly timeoutMs?: number | undefined;
  readonly maxAttempts?: number | undefined;
  /** The first pause between attempts; doubled each time, with jitter. */
  readonly retryBaseMs?: number | undefined;
}

export type TBankResponse = Readonly<Record<string, unknown>>;

const DEFAULT_TIMEOUT_MS = 15_000;
const DEFAULT_MAX_ATTEMPTS = 3;
const DEFAULT_RETRY_BASE_MS = 300;
const RETRY_AFTER_MAX_MS = 5_000;
const MAX_RESPONSE_CHARS = 1_000_000;

class RetryableAnswer extends Error {
  readonly retryAfterMs: number | undefined;
  constructor(message: string, retryAfterMs?: number) {
    super(message);
    this.retryAfterMs = retryAfterMs;
  }
}

function retryAfterMs(header: string | null): number | undefined {
  if (!header) return undefined;
  const seconds = Number(header);
  if (!Number.isFinite(seconds) || seconds < 0) return undefined;
  return Math.min(seconds * 1000, RETRY_AFTER_MAX_MS);
}

export function createTBankClient(options: TBankClientOptions) {
  const base = options.apiUrl.replace(/\/+$/, '');
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const maxAttempts = options.maxAttempts ?? DEFAULT_MAX_ATTEMPTS;
  const retryBaseMs = options.retryBaseMs ?? DEFAULT_RETRY_BASE_MS;

  async function attempt(method: string, init: RequestInit): Promise<TBankResponse> {
    const response = await fetch(`${base}/${method}`, { ...init, signal: AbortSignal.timeout(timeoutMs) });
    if (response.status === 429 || response.status >= 500) {
      await response.body?.cancel();
      throw new RetryableAnswer(`HTTP ${response.status}`, retryAfterMs(response.headers.get('retry-after')));
    }
    const text = await response.text();
    if (text.length > MAX_RESPONSE_CHARS) throw new TBankUnavailableError(method, 'answer too large');
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      throw new TBankUnavailableError(method, `HTTP ${response.status} with a body that is not JSON`);
    }
    if (typeof body !== 'object' || body === null || Array.isArray(body)) {
      throw new TBankUnavailableError(method, `HTTP ${response.status} with a body that is not an object`);
    }
    const answer = body as TBankResponse;
    if (answer['Success'] !== true || String(answer['ErrorCode'] ?? '0') !== '0') {
      throw new TBankApiError(
        method,
        String(answer['ErrorCode'] ?? 'unknown'),
        typeof answer['Message'] === 'string' ? answer['Message'] : 'no message',
        typeof answer['Details'] === 'string' ? answer['Details'] : undefined,
        answer,
      );
    }
    return answer;
  }

  async function withRetries(method: string, init: RequestInit): Promise<TBankResponse> {
    let lastError: unknown;
    for (let attemptNumber = 1; attemptNumber <= maxAttempts; attemptNumber += 1) {
      try {
        return await attempt(method, init);
      } catch (error) {
        if (error instanceof TBankApiError || error instanceof TBankUnavailableError) throw error;
        lastError = error;
        if (attemptNumber === maxAttempts) break;
        const backoffMs = retryBaseMs * 2 ** (attemptNumber - 1);
        const waitMs =
          error instanceof RetryableAnswer && error.retryAfterMs !== undefined ? error.retryAfterMs : backoffMs;
        await pause(waitMs / 2 + Math.random() * (waitMs / 2));
      }
    }
    const reason = lastError instanceof Error ? lastError.message : String(lastError);
    throw new TBankUnavailableError(method, `${maxAttempts} attempts failed, last: ${reason}`, { cause: lastError });
  }

  return {
    terminalKey: options.terminalKey,
    /** A signed POST of `params` (TerminalKey and Token added). */
    post(method: string, params: Readonly<Record<string, unknown>>): Promise<TBankResponse> {
      const signed: Record<string, unknown> = { TerminalKey: options.terminalKey, ...params };
      signed['Token'] = tbankToken(signed, options.password);
      return withRetries(method, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify(signed),
      });
    },
    /** An unsigned GET (T-Bank's SberPay link method takes only the PaymentId in its path). */
    get(path: string): Promise<TBankResponse> {
      return withRetries(path, { method: 'GET', headers: { accept: 'application/json' } });
    },
  };
}

export type TBankClient = ReturnType<typeof createTBankClient>;

// The HTTP client of T-Bank's Internet Acquiring API v2: JSON POSTs signed
// with `Token`, each call bounded by a timeout well under the gateway's 60 s
// reconciliation bound, and retried a few times on a network failure, a
// timeout, 5xx or 429. An answer with `Success: false` is a `TBankApiError`
// carrying T-Bank's ErrorCode, Message and Details; it is never retried.
import { RetryableAnswer, callWithRetries, jsonObjectOf, retryAfterHeaderMs } from '../acquirer-http.ts';
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

export function createTBankClient(options: TBankClientOptions) {
  const base = options.apiUrl.replace(/\/+$/, '');
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const maxAttempts = options.maxAttempts ?? DEFAULT_MAX_ATTEMPTS;
  const retryBaseMs = options.retryBaseMs ?? DEFAULT_RETRY_BASE_MS;

  async function attempt(method: string, init: RequestInit): Promise<TBankResponse> {
    const response = await fetch(`${base}/${method}`, { ...init, signal: AbortSignal.timeout(timeoutMs) });
    if (response.status === 429 || response.status >= 500) {
      await response.body?.cancel();
      throw new RetryableAnswer(
        `HTTP ${response.status}`,
        retryAfterHeaderMs(response.headers.get('retry-after'), RETRY_AFTER_MAX_MS),
      );
    }
    const read = jsonObjectOf(await response.text(), MAX_RESPONSE_CHARS);
    if ('problem' in read) throw new TBankUnavailableError(method, `HTTP ${response.status} with ${read.problem}`);
    const answer: TBankResponse = read.object;
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

  function withRetries(method: string, init: RequestInit): Promise<TBankResponse> {
    return callWithRetries(() => attempt(method, init), {
      maxAttempts,
      retryBaseMs,
      isFinal: (error) => error instanceof TBankApiError || error instanceof TBankUnavailableError,
      exhausted: (message, lastError) => new TBankUnavailableError(method, message, { cause: lastError }),
    });
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

// The commands that work against a (remote) gateway over its public API, with a
// shop's API key, as any merchant program would: `paygate trigger`, `paygate
// events …`. Plain fetch; every answer that is not 2xx becomes a GatewayApiError
// carrying the API's own error code and message.
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { CliUsageError } from '../cli-command.ts';
import { PAYGATE_VERSION } from '../../version.ts';

const DEFAULT_GATEWAY_URL = 'http://localhost:8080';
/** One request may take this long before the command gives up on it. */
const REQUEST_TIMEOUT_MS = 30_000;
/** A scenario makes dozens of calls in seconds: the per-key rate limit (429) and a busy gateway (503) say when to come back. */
const RETRIES_MAX = 8;
const RETRY_PAUSE_DEFAULT_S = 1;
const RETRY_PAUSE_MAX_S = 30;
const RETRIED_STATUSES = new Set([429, 503]);

/** The pause a 429 or 503 asks for (Retry-After in seconds), clamped to 1..30 s. */
function retryPauseMs(response: Response): number {
  const seconds = Number(response.headers.get('retry-after'));
  const wanted = Number.isFinite(seconds) && seconds > 0 ? seconds : RETRY_PAUSE_DEFAULT_S;
  return Math.min(wanted, RETRY_PAUSE_MAX_S) * 1000;
}

/** The API answered with an error (`{"error", "message"}`), or could not be reached. */
export class GatewayApiError extends Error {
  readonly status: number | null;
  readonly code: string;
  constructor(status: number | null, code: string, message: string) {
    super(message);
    this.name = 'GatewayApiError';
    this.status = status;
    this.code = code;
  }
}

export interface GatewayClient {
  readonly url: string;
  get<T>(path: string): Promise<T>;
  /** With a fresh Idempotency-Key, so a POST the gateway retries internally is still made once. */
  post<T>(path: string, body?: unknown): Promise<T>;
}

/** The options every remote command takes. */
export const REMOTE_OPTIONS = {
  'api-key': { type: 'string' },
  url: { type: 'string' },
} as const;

/** `--api-key`, else PAYGATE_API_KEY; `--url`, else PAYGATE_URL, else http://localhost:8080. */
export function clientFromOptions(
  values: { readonly 'api-key'?: string | undefined; readonly url?: string | undefined },
  env: Readonly<Record<string, string | undefined>>,
): GatewayClient {
  const apiKey = (values['api-key'] ?? env.PAYGATE_API_KEY ?? '').trim();
  if (apiKey === '') throw new CliUsageError('an API key is needed: --api-key KEY or PAYGATE_API_KEY');
  const text = (values.url ?? env.PAYGATE_URL ?? DEFAULT_GATEWAY_URL).trim();
  let base: URL;
  try {
    base = new URL(text);
  } catch {
    throw new CliUsageError(`--url must be an http or https URL, not "${text}"`);
  }
  if (base.protocol !== 'http:' && base.protocol !== 'https:')
    throw new CliUsageError(`--url must be an http or https URL, not "${text}"`);
  return createGatewayClient(base.href.replace(/\/+$/, ''), apiKey);
}

function createGatewayClient(url: string, apiKey: string): GatewayClient {
  async function send(method: 'GET' | 'POST', path: string, headers: Record<string, string>, body?: unknown) {
    try {
      return await fetch(`${url}${path}`, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
        redirect: 'error',
      });
    } catch (error) {
      const cause = error instanceof Error ? ((error.cause as Error | undefined)?.message ?? error.message) : error;
      throw new GatewayApiError(null, 'unreachable', `cannot reach the gateway at ${url}: ${String(cause)}`);
    }
  }

  async function call<T>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> {
    const headers: Record<string, string> = {
      authorization: `Bearer ${apiKey}`,
      'user-agent': `paygate-cli/${PAYGATE_VERSION}`,
    };
    // The same key on every retry: a POST the gateway did take is answered, not made twice.
    if (method === 'POST') headers['idempotency-key'] = randomUUID();
    if (body !== undefined) headers['content-type'] = 'application/json';
    let response = await send(method, path, headers, body);
    for (let retry = 0; retry < RETRIES_MAX && RETRIED_STATUSES.has(response.status); retry += 1) {
      await response.body?.cancel();
      await sleep(retryPauseMs(response));
      response = await send(method, path, headers, body);
    }
    const text = await response.text();
    const parsed = parseJson(text);
    if (!response.ok) {
      const answer = (parsed ?? {}) as { error?: unknown; message?: unknown };
      const code = typeof answer.error === 'string' ? answer.error : `http_${response.status}`;
      const message = typeof answer.message === 'string' ? answer.message : text.slice(0, 200);
      throw new GatewayApiError(response.status, code, `${method} ${path}: ${response.status} ${code}: ${message}`);
    }
    return parsed as T;
  }
  return { url, get: (path) => call('GET', path), post: (path, body) => call('POST', path, body) };
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

// Webhook verification per Standard Webhooks, as the gateway signs: the
// signature is base64 HMAC-SHA256, keyed by the base64 part of the shop's
// `whsec_…` secret, over "<webhook-id>.<webhook-timestamp>.<exact body bytes>";
// `webhook-signature` holds one or more space-separated `v1,<signature>` (two
// during a secret rotation). Timestamps too far from now are refused, against replays.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { WebhookVerificationError } from './errors.ts';

/** A webhook as the gateway sends it (docs/webhooks.md, "Payload"). */
export interface WebhookEvent<Data = Record<string, unknown>> {
  /** `evt_…`, the same on every retry and resend: deduplicate on it. */
  readonly id: string;
  /** `payment.paid`, `crypto.invoice.updated`, … */
  readonly type: string;
  readonly created_at: string;
  readonly data: Data;
}

/** Node's `request.headers`, a fetch `Headers`, or a plain record. */
export type WebhookHeaders =
  { get(name: string): string | null } | Readonly<Record<string, string | readonly string[] | undefined>>;

export interface VerifyOptions {
  /** How far the timestamp may be from now, either way (default 300 s, as Standard Webhooks). */
  readonly toleranceSeconds?: number;
  /** The current time (tests); the system clock by default. */
  readonly now?: Date;
}

const SECRET_PREFIX = 'whsec_';

/**
 * Checks a webhook and returns its parsed event; throws WebhookVerificationError otherwise.
 * Pass the body exactly as received (a string or the raw bytes), never re-serialized JSON.
 */
export function verifyWebhook<Data = Record<string, unknown>>(
  payload: string | Uint8Array,
  headers: WebhookHeaders,
  secret: string,
  options: VerifyOptions = {},
): WebhookEvent<Data> {
  const id = header(headers, 'webhook-id');
  const timestamp = header(headers, 'webhook-timestamp');
  const signatures = header(headers, 'webhook-signature');
  if (id === undefined || timestamp === undefined || signatures === undefined) {
    throw new WebhookVerificationError('Missing webhook-id, webhook-timestamp or webhook-signature header');
  }
  if (!/^\d{1,15}$/.test(timestamp)) throw new WebhookVerificationError('Invalid webhook-timestamp header');
  const nowSeconds = Math.floor((options.now ?? new Date()).getTime() / 1000);
  const toleranceSeconds = options.toleranceSeconds ?? 300;
  if (Math.abs(nowSeconds - Number(timestamp)) > toleranceSeconds) {
    throw new WebhookVerificationError('Webhook timestamp is outside the tolerance');
  }
  const body = typeof payload === 'string' ? Buffer.from(payload, 'utf8') : Buffer.from(payload);
  const expected = createHmac('sha256', secretKey(secret)).update(`${id}.${timestamp}.`).update(body).digest();
  const matches = signatures.split(' ').some((entry) => {
    const [version, signature] = entry.split(',', 2);
    if (version !== 'v1' || signature === undefined) return false;
    const given = Buffer.from(signature, 'base64');
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
  if (!matches) throw new WebhookVerificationError('No matching webhook signature');
  try {
    return JSON.parse(body.toString('utf8')) as WebhookEvent<Data>;
  } catch {
    throw new WebhookVerificationError('Webhook body is not JSON');
  }
}

function secretKey(secret: string): Buffer {
  const encoded = secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret;
  const key = Buffer.from(encoded, 'base64');
  if (key.length === 0) throw new TypeError('Paygate: the webhook secret is empty');
  return key;
}

function header(headers: WebhookHeaders, name: string): string | undefined {
  if (typeof headers.get === 'function')
    return (headers as { get(name: string): string | null }).get(name) ?? undefined;
  const records = headers as Readonly<Record<string, string | readonly string[] | undefined>>;
  const value = records[name] ?? Object.entries(records).find(([key]) => key.toLowerCase() === name)?.[1];
  return typeof value === 'string' ? value : value?.[0];
}

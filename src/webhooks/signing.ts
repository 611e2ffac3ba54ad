// Standard Webhooks signatures (https://www.standardwebhooks.com): HMAC-SHA256
// over `${id}.${timestamp}.${body}` with the base64 key of a `whsec_` secret,
// sent as `v1,<base64>`; several signatures are space-separated (key rotation).
import { createHmac, createSecretKey, randomBytes, type KeyObject } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { PAYGATE_VERSION } from '../version.ts';

const SECRET_PREFIX = 'whsec_';

export const WEBHOOK_USER_AGENT = `Paygate-Webhooks/${PAYGATE_VERSION}`;

export function generateSigningSecret(): string {
  return `${SECRET_PREFIX}${randomBytes(24).toString('base64')}`;
}

// Building a key object is most of an HMAC's cost; shops' keys are reused across attempts.
const KEY_CACHE_SIZE = 1_000;
const keyCache = new LRUCache<string, KeyObject>({ max: KEY_CACHE_SIZE });

function secretKey(secret: string): KeyObject {
  const cached = keyCache.get(secret);
  if (cached) return cached;
  if (!secret.startsWith(SECRET_PREFIX)) throw new Error('a webhook secret must start with whsec_');
  const key = createSecretKey(Buffer.from(secret.slice(SECRET_PREFIX.length), 'base64'));
  keyCache.set(secret, key);
  return key;
}

/** One `v1,<base64>` signature of the exact body bytes. */
function sign(secret: string, id: string, timestampSeconds: number, body: string): string {
  const mac = createHmac('sha256', secretKey(secret))
    .update(`${id}.${timestampSeconds}.${body}`, 'utf8')
    .digest('base64');
  return `v1,${mac}`;
}

export interface SigningSecrets {
  readonly current: string;
  /** The secret replaced by a rotation, while it is still honoured (24 h). */
  readonly previous?: string | null | undefined;
}

/** The headers of one delivery attempt. `webhook-id` is the event id, the same on every retry and resend. */
export function signedHeaders(secrets: SigningSecrets, id: string, at: Date, body: string): Record<string, string> {
  const timestamp = Math.floor(at.getTime() / 1000);
  const signatures = [sign(secrets.current, id, timestamp, body)];
  if (secrets.previous) signatures.push(sign(secrets.previous, id, timestamp, body));
  return {
    'content-type': 'application/json',
    'user-agent': WEBHOOK_USER_AGENT,
    'webhook-id': id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': signatures.join(' '),
  };
}

// CSRF protection of the payment page: a double-submit token. The browser gets
// a random secret in an HttpOnly, SameSite=Strict cookie; every form carries
// HMAC(secret, payment_id), which only a page read from our origin can know.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

const CSRF_COOKIE = 'paygate_page';
const SECRET_PATTERN = /^[A-Za-z0-9_-]{43}$/;

export function newPageSecret(): string {
  return randomBytes(32).toString('base64url');
}

function readCookie(header: string | undefined, name: string): string | undefined {
  for (const part of (header ?? '').slice(0, 8192).split(';')) {
    const [key, ...rest] = part.trim().split('=');
    if (key === name) return rest.join('=');
  }
  return undefined;
}

export function pageSecretFrom(cookieHeader: string | undefined): string | undefined {
  const value = readCookie(cookieHeader, CSRF_COOKIE);
  return value && SECRET_PATTERN.test(value) ? value : undefined;
}

export function csrfToken(secret: string, paymentId: string): string {
  return createHmac('sha256', secret).update(`payment-page:${paymentId}`).digest('base64url');
}

export function csrfTokenValid(secret: string | undefined, paymentId: string, presented: unknown): boolean {
  if (!secret || typeof presented !== 'string' || presented.length > 100) return false;
  const expected = Buffer.from(csrfToken(secret, paymentId));
  const given = Buffer.from(presented);
  return expected.length === given.length && timingSafeEqual(expected, given);
}

export function pageCookie(secret: string, secure: boolean): string {
  return `${CSRF_COOKIE}=${secret}; Path=/pay; HttpOnly; SameSite=Strict; Max-Age=86400${secure ? '; Secure' : ''}`;
}

/** A fresh nonce per rendered form: the idempotency key of that attempt's charge. */
export function newAttemptNonce(): string {
  return randomBytes(16).toString('base64url');
}

export const ATTEMPT_PATTERN = /^[A-Za-z0-9_-]{16,64}$/;

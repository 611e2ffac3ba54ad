// The bearer tokens of the cabinet (session cookies, invitation and password-reset
// links): 32 random bytes shown once, stored only as their SHA-256.
import { createHash, randomBytes } from 'node:crypto';

const TOKEN_PATTERN = /^[A-Za-z0-9_-]{43}$/;

export function newSecretToken(): string {
  return randomBytes(32).toString('base64url');
}

export function hashSecretToken(token: string): Uint8Array {
  return createHash('sha256').update(token).digest();
}

export function isWellFormedToken(value: unknown): value is string {
  return typeof value === 'string' && TOKEN_PATTERN.test(value);
}

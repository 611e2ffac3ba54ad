// API keys are 256-bit random strings shown once. Only their SHA-256 is stored:
// a key has full entropy, so a fast hash is enough, and lookups stay one index probe.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { ShopMode } from './merchant-tables.ts';

const KEY_PATTERN = /^sk_(test|live)_[A-Za-z0-9_-]{43}$/;

export function generateApiKey(mode: ShopMode): string {
  return `sk_${mode === 'live' ? 'live' : 'test'}_${randomBytes(32).toString('base64url')}`;
}

export function isWellFormedApiKey(key: string): boolean {
  return KEY_PATTERN.test(key);
}

export function hashApiKey(key: string): Buffer {
  return createHash('sha256').update(key, 'utf8').digest();
}

/** Compares two key hashes without leaking, through timing, how much of them matched. */
export function apiKeyHashesEqual(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}

/** The displayable start of a key, enough to tell keys apart in a list. */
export function apiKeyPrefix(key: string): string {
  return key.slice(0, 12);
}

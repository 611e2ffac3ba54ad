// T-Bank's request signature (`Token`), the same for our requests, the
// simulator's checks and T-Bank's notifications: the root object's scalar
// values plus `Password`, sorted by key, values concatenated, SHA-256 in hex.
// Nested objects and arrays (DATA, Receipt, Shops) and `Token` itself take no
// part. Source: https://developer.tbank.ru/eacq/intro/developer/token and the
// "Проверка токенов" section of https://www.tbank.ru/kassa/dev/payments/ ;
// the official Android SDK's SampleAcquiringTokenGenerator does the same
// (tinkoff-mobile-tech/tinkoff-asdk-android). Booleans are written `true`/`false`
// as in the notification example.
import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils.js';
import { timingSafeEqual } from 'node:crypto';

type Scalar = string | number | boolean;

function isScalar(value: unknown): value is Scalar {
  return typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean';
}

/** The string T-Bank hashes: exposed so the fixtures test can compare it with the documented one. */
export function tbankTokenInput(params: Readonly<Record<string, unknown>>, password: string): string {
  const pairs: [string, Scalar][] = [['Password', password]];
  for (const [key, value] of Object.entries(params)) {
    if (key === 'Token' || key === 'Password' || !isScalar(value)) continue;
    pairs.push([key, value]);
  }
  // Code-unit order, as Java's TreeMap and the docs' example sort the keys.
  pairs.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return pairs.map(([, value]) => String(value)).join('');
}

export function tbankToken(params: Readonly<Record<string, unknown>>, password: string): string {
  return bytesToHex(sha256(utf8ToBytes(tbankTokenInput(params, password))));
}

/** Whether `params.Token` is the signature of `params` under `password` (constant time). */
export function hasValidTbankToken(params: Readonly<Record<string, unknown>>, password: string): boolean {
  const received = params['Token'];
  if (typeof received !== 'string' || received.length !== 64) return false;
  const expected = tbankToken(params, password);
  return timingSafeEqual(Buffer.from(received.toLowerCase()), Buffer.from(expected));
}

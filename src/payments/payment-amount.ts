// RUB amounts: JSON numbers at the edge, integer kopecks (bigint) inside.
// A number is read through its shortest decimal string (String(x)), so 10.1 and
// 10.10 (the same JSON number) both mean 1010 kopecks, and 10.001 is refused.
import { InvalidRequestError } from '../errors.ts';

export const MIN_AMOUNT_KOPECKS = 100n;
export const MAX_AMOUNT_KOPECKS = 100_000_000n;

const DECIMAL_PATTERN = /^(\d{1,16})(?:\.(\d{1,2}))?$/;

/** Exact kopecks of a decimal string with at most two places, or undefined. */
export function kopecksFromDecimalString(text: string): bigint | undefined {
  const match = DECIMAL_PATTERN.exec(text);
  if (!match) return undefined;
  const fraction = (match[2] ?? '').padEnd(2, '0');
  return BigInt(match[1]!) * 100n + BigInt(fraction);
}

/** Validates the `amount` of a payment request: a finite number, 1..1 000 000, at most 2 decimals. */
export function parsePaymentAmount(amount: number): bigint {
  const rule = 'amount must be a number from 1 to 1000000 with at most 2 decimal places';
  if (typeof amount !== 'number' || !Number.isFinite(amount)) throw new InvalidRequestError(`${rule}.`);
  const kopecks = kopecksFromDecimalString(String(amount));
  if (kopecks === undefined) throw new InvalidRequestError(`${rule}; got ${String(amount)}.`);
  if (kopecks < MIN_AMOUNT_KOPECKS || kopecks > MAX_AMOUNT_KOPECKS) {
    throw new InvalidRequestError(`${rule}; got ${String(amount)}.`);
  }
  return kopecks;
}

/** The spec's JSON number for kopecks: 1010n → 10.1 (k/100 rounds to the double of that decimal). */
export function kopecksToNumber(kopecks: bigint): number {
  return Number(kopecks) / 100;
}

/** "1 010,50" style is for people; this is "1010.50" for pages and the CLI. */
export function formatKopecks(kopecks: bigint): string {
  const sign = kopecks < 0n ? '-' : '';
  const absolute = kopecks < 0n ? -kopecks : kopecks;
  return `${sign}${absolute / 100n}.${String(absolute % 100n).padStart(2, '0')}`;
}

/** Payer fee of `basisPoints` (1/100 %) on an amount, rounded half-up to whole kopecks. */
export function payerFeeKopecks(amountKopecks: bigint, basisPoints: number): bigint {
  if (amountKopecks < 0n) throw new RangeError('amount must not be negative');
  return (amountKopecks * BigInt(basisPoints) + 5_000n) / 10_000n;
}

// Ledger money at the edge: decimal strings in, decimal strings out, bigint minor
// units in between (kopecks for RUB, micro-USDT for USDT). No floats anywhere.
import { InvalidRequestError } from '../errors.ts';
import type { LedgerCurrency } from './ledger-tables.ts';

export const DECIMAL_PLACES: Readonly<Record<LedgerCurrency, number>> = { RUB: 2, USDT: 6 };

/** The largest amount one API transfer may move: one billion units of the currency. */
export const MAX_TRANSFER_UNITS = 1_000_000_000n;

const DECIMAL_PATTERN = /^(\d{1,13})(?:\.(\d+))?$/;

/** Parses a positive decimal string ("12.34") into minor units, exactly. */
export function parseAmount(text: string, currency: LedgerCurrency, field = 'amount'): bigint {
  const places = DECIMAL_PLACES[currency];
  const match = DECIMAL_PATTERN.exec(text);
  if (!match) {
    throw new InvalidRequestError(`${field} must be a decimal string such as "10.50", got "${text.slice(0, 40)}"`);
  }
  const fraction = match[2] ?? '';
  if (fraction.length > places) {
    throw new InvalidRequestError(`${field} has more than ${places} decimal places; ${currency} amounts have at most ${places}`);
  }
  const minor = BigInt(match[1]!) * 10n ** BigInt(places) + BigInt(fraction.padEnd(places, '0') || '0');
  if (minor <= 0n) throw new InvalidRequestError(`${field} must be greater than zero`);
  if (minor > MAX_TRANSFER_UNITS * 10n ** BigInt(places)) {
    throw new InvalidRequestError(`${field} must be at most ${MAX_TRANSFER_UNITS} ${currency}`);
  }
  return minor;
}

/** Formats minor units as a decimal string with the currency's places: 12345n RUB → "123.45", -5n → "-0.05". */
export function formatAmount(minor: bigint, currency: LedgerCurrency): string {
  const places = DECIMAL_PLACES[currency];
  const negative = minor < 0n;
  const digits = (negative ? -minor : minor).toString().padStart(places + 1, '0');
  const whole = digits.slice(0, digits.length - places);
  return `${negative ? '-' : ''}${whole}.${digits.slice(digits.length - places)}`;
}

// The amount rule of a payment: RUB, 1 to 1 000 000, at most 2 decimal places,
// read exactly from what the client sent (src/money/: the JSON lexeme, never a
// double), so 10.0000000000000001 is refused rather than taken for 10.
import { InvalidRequestError } from '../errors.ts';
import { parseMinor } from '../money/decimal.ts';

export const MIN_AMOUNT_KOPECKS = 100n;
export const MAX_AMOUNT_KOPECKS = 100_000_000n;

/** Kopecks of a payment's `amount`, given the JSON number's source text. */
export function parsePaymentAmount(lexeme: string): bigint {
  const rule = 'amount must be a number from 1 to 1000000 with at most 2 decimal places';
  const parsed = parseMinor(lexeme, 'RUB', 'json-number');
  const shown = lexeme.slice(0, 40);
  if (!parsed.ok) throw new InvalidRequestError(`${rule}; got ${shown}, which ${parsed.problem}.`);
  if (parsed.minor < MIN_AMOUNT_KOPECKS || parsed.minor > MAX_AMOUNT_KOPECKS)
    throw new InvalidRequestError(`${rule}; got ${shown}.`);
  return parsed.minor;
}

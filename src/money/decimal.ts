// Exact conversion between decimal text and minor units. A decimal is read from
// its text (a JSON number's lexeme, or a decimal string), never through a
// double, so 10.0000000000000001 is a number with 16 decimal places, not 10.
import assert from 'node:assert/strict';
import { ASSET_SCALE, type Asset } from './asset.ts';

export type ParsedMinor =
  { readonly ok: true; readonly minor: bigint } | { readonly ok: false; readonly problem: string };

/** JSON's number grammar; the integer part is bounded so no lexeme makes a huge BigInt. */
const JSON_NUMBER = /^(-?)(0|[1-9]\d{0,20})(?:\.(\d{1,40}))?(?:[eE]([+-]?\d{1,3}))?$/;
/**
 * A decimal string as the API takes amounts: unsigned digits without leading
 * zeros ("010" could be read as octal, or as a typo), optionally a point and
 * more digits; nothing else ("+10", " 10", "10.", ".5", "1e1").
 */
const DECIMAL_STRING = /^()(0|[1-9]\d{0,20})(?:\.(\d{1,40}))?$/;

/**
 * The exact minor units of `text` for `asset`. `form` says what the text is: a
 * JSON number lexeme (exponents allowed) or a decimal string. More decimal places
 * than the asset has is refused, whatever the digits (10.000 is three places).
 */
export function parseMinor(text: string, asset: Asset, form: 'json-number' | 'decimal-string'): ParsedMinor {
  const match = (form === 'json-number' ? JSON_NUMBER : DECIMAL_STRING).exec(text);
  if (!match)
    return {
      ok: false,
      problem: form === 'json-number' ? 'is not a decimal number' : 'must be a decimal string such as "10.50"',
    };
  const [, sign, whole, fraction = '', exponentText = '0'] = match;
  const scale = ASSET_SCALE[asset];
  const places = fraction.length - Number(exponentText);
  if (places > scale)
    return { ok: false, problem: `has more than ${scale} decimal places (${asset} amounts have at most ${scale})` };
  const digits = BigInt(`${whole}${fraction}`);
  const minor = digits * 10n ** BigInt(scale - places);
  return { ok: true, minor: sign === '-' ? -minor : minor };
}

/** Minor units as a decimal string with the asset's places: 12345n RUB → "123.45", -5n → "-0.05". */
export function formatMinor(minor: bigint, asset: Asset): string {
  const scale = ASSET_SCALE[asset];
  const negative = minor < 0n;
  const digits = (negative ? -minor : minor).toString().padStart(scale + 1, '0');
  return `${negative ? '-' : ''}${digits.slice(0, digits.length - scale)}.${digits.slice(digits.length - scale)}`;
}

/**
 * A payment's amount as a JSON number (docs/payments.md): 1010n kopecks → 10.1. The double
 * nearest k/10^scale prints as exactly that decimal while it has at most 15 digits.
 */
export function minorToJsonNumber(minor: bigint, asset: Asset): number {
  // Up to 15 significant digits a double prints back as the decimal it was made from.
  assert.ok(minor > -(10n ** 15n) && minor < 10n ** 15n, `amount ${minor} is beyond exact JSON numbers`);
  const value = Number(minor) / 10 ** ASSET_SCALE[asset];
  assert.equal(
    formatMinor(minor, asset)
      .replace(/\.?0+$/, '')
      .replace(/^-0$/, '0'),
    String(value).replace(/^-0$/, '0'),
  );
  return value;
}

/** `basisPoints` (1/100 %) of an amount, rounded half up to whole minor units. */
export function percentHalfUp(minor: bigint, basisPoints: number): bigint {
  assert.ok(minor >= 0n, 'a percentage is taken of a non-negative amount');
  assert.ok(Number.isInteger(basisPoints) && basisPoints >= 0, `basis points ${basisPoints}`);
  return (minor * BigInt(basisPoints) + 5_000n) / 10_000n;
}

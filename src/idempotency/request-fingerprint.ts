// What a key compares: the fingerprint of the request as validated and
// normalized by its operation (defaults applied, absent = null, amounts in
// minor units), so spelling — key order, 10.1 or 10.10, "x": null or no x —
// never makes the same request look different.
import { createHash } from 'node:crypto';

/** JSON with object keys sorted at every level: equal values give equal text whatever the key order. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map((item) => canonicalJson(item)).join(',')}]`;
  if (typeof value === 'bigint') return JSON.stringify(value.toString());
  if (value !== null && typeof value === 'object') {
    const entries = Object.keys(value)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${canonicalJson((value as Record<string, unknown>)[key])}`);
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/**
 * SHA-256 (hex) of the canonical JSON of a normalized request. Undefined is
 * refused rather than silently dropped: a normalizer must say null.
 */
export function requestFingerprint(normalized: Readonly<Record<string, unknown>>): string {
  for (const [field, value] of Object.entries(normalized)) {
    if (value === undefined)
      throw new Error(`request fingerprint: field "${field}" is undefined; normalize absent fields to null`);
  }
  return createHash('sha256').update(canonicalJson(normalized)).digest('hex');
}

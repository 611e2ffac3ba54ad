// How a simulated node reads the fields of a request, as java-tron's servlets
// do: addresses as `41…` hex or Base58 (`visible`), numbers as JSON integers or
// decimal text (a GET query carries text), anything else as absent.
import { parseTronAddress, parseTronHexAddress, type TronAddress } from '../tron/address.ts';

export type NodeRequestBody = Record<string, unknown>;

/** An address as a node reads it: `41…` hex, or Base58 (`visible`). */
export function addressOf(value: unknown): TronAddress | undefined {
  if (typeof value !== 'string') return undefined;
  const parsed = value.startsWith('T') ? parseTronAddress(value) : parseTronHexAddress(value);
  return parsed.ok ? parsed.address : undefined;
}

/** A non-negative whole number (a JSON integer, or decimal text of at most 15 digits). */
export function toNumber(value: unknown): number | undefined {
  const number = typeof value === 'string' && /^\d{1,15}$/.test(value) ? Number(value) : value;
  return typeof number === 'number' && Number.isSafeInteger(number) && number >= 0 ? number : undefined;
}

/**
 * A GET request's query as the body a POST would carry (java-tron's servlets read
 * both): `true`/`false` become booleans (Util.getVisible, `detail`), the rest stays text.
 */
export function queryAsBody(search: URLSearchParams): NodeRequestBody {
  const body: NodeRequestBody = {};
  for (const [key, value] of search) body[key] = value === 'true' ? true : value === 'false' ? false : value;
  return body;
}

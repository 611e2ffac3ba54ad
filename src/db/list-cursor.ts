// The opaque cursors of every list API. A client passes next_cursor back as
// given; it decodes to the keyset position after which the next page starts,
// and anything it does not decode to is 400 invalid_request, before a query
// runs. Two kinds of position, each base64url of a short text:
// - a row's (created_at, id): `<ISO instant>|<id>` (payments, invoices,
//   wallets, payouts, webhook events and their attempts);
// - an entry's sequence number: `op:<seq>` (balance operations).
// Cursors that clients already hold keep decoding: the webhook lists issued
// the JSON array `["<ISO instant>","<id>"]` before they took the common form,
// and that form is still read.
import { isStorableInstant } from '../clock.ts';
import { InvalidRequestError } from '../errors.ts';

const INVALID_CURSOR_MESSAGE = 'cursor is not valid; pass next_cursor as given.';
/** No id of ours is longer. */
const ID_LENGTH_MAX = 100;
/** The largest value an int8 column holds; 19 digits can exceed it (PostgreSQL would refuse the query). */
const SEQUENCE_MAX = 9_223_372_036_854_775_807n;
const SEQUENCE_PREFIX = 'op:';

/** Where a page ordered by (created_at, id) ends. */
export interface ListPosition {
  readonly createdAt: Date;
  readonly id: string;
}

export function encodeListCursor(position: ListPosition): string {
  return Buffer.from(`${position.createdAt.toISOString()}|${position.id}`).toString('base64url');
}

/**
 * The position a cursor of this list names. `isListId` says whether an id can
 * be one of this list's rows (its prefix, or a UUID); `invalidMessage` is the
 * 400's message, where a list has always answered with its own.
 */
export function decodeListCursor(
  cursor: string,
  isListId: (id: string) => boolean,
  invalidMessage = INVALID_CURSOR_MESSAGE,
): ListPosition {
  const text = Buffer.from(cursor, 'base64url').toString('utf8');
  const parts = text.startsWith('[') ? jsonArrayParts(text) : text.split('|');
  const [at, id, ...rest] = parts ?? [];
  const createdAt = new Date(at ?? '');
  if (rest.length > 0 || !id || id.length > ID_LENGTH_MAX || !isListId(id) || !isStorableInstant(createdAt)) {
    throw new InvalidRequestError(invalidMessage);
  }
  return { createdAt, id };
}

/** The webhook lists' earlier form: a JSON array of two strings; undefined when it is not one. */
function jsonArrayParts(text: string): string[] | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!Array.isArray(parsed) || !parsed.every((part): part is string => typeof part === 'string')) return undefined;
  return parsed;
}

export function encodeSequenceCursor(seq: bigint): string {
  return Buffer.from(`${SEQUENCE_PREFIX}${seq}`).toString('base64url');
}

/** The sequence number a cursor names: the next page holds the entries below it. */
export function decodeSequenceCursor(cursor: string): bigint {
  const text = Buffer.from(cursor, 'base64url').toString('utf8');
  const seq = /^op:\d{1,19}$/.test(text) ? BigInt(text.slice(SEQUENCE_PREFIX.length)) : undefined;
  if (seq === undefined || seq > SEQUENCE_MAX) throw new InvalidRequestError(INVALID_CURSOR_MESSAGE);
  return seq;
}

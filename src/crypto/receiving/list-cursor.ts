// The opaque cursor of crypto lists: the (created_at, id) of the last row shown.
import { isStorableInstant } from '../../clock.ts';
import { InvalidRequestError } from '../../errors.ts';
import type { ListPosition } from './receiving-repository.ts';

export function encodeListCursor(row: { created_at: Date; id: string }): string {
  return Buffer.from(`${row.created_at.toISOString()}|${row.id}`).toString('base64url');
}

export function decodeListCursor(cursor: string, idPrefix: string): ListPosition {
  const [at, id, ...rest] = Buffer.from(cursor, 'base64url').toString('utf8').split('|');
  const createdAt = new Date(at ?? '');
  if (rest.length > 0 || !id || !id.startsWith(idPrefix) || id.length > 100 || !isStorableInstant(createdAt)) {
    throw new InvalidRequestError('cursor is not valid; pass next_cursor as given.');
  }
  return { createdAt, id };
}

// The one cursor codec of every list: the forms it writes decode, and so do the forms clients already hold.
import { describe, expect, it } from 'vitest';
import { InvalidRequestError } from '../../src/errors.ts';
import {
  decodeListCursor,
  decodeSequenceCursor,
  encodeListCursor,
  encodeSequenceCursor,
} from '../../src/db/list-cursor.ts';

const at = new Date('2026-11-01T10:00:00.123Z');
const base64url = (text: string) => Buffer.from(text).toString('base64url');
const anyId = () => true;

describe('list cursors', () => {
  it('a (created_at, id) cursor decodes to the position it was made from', () => {
    expect(decodeListCursor(encodeListCursor({ createdAt: at, id: 'po_1' }), (id) => id.startsWith('po_'))).toEqual({
      createdAt: at,
      id: 'po_1',
    });
  });

  it('a webhook list cursor of the earlier JSON form still decodes', () => {
    expect(decodeListCursor(base64url(JSON.stringify([at.toISOString(), 'evt_1'])), anyId)).toEqual({
      createdAt: at,
      id: 'evt_1',
    });
  });

  it('a cursor of another list, a third part or an instant PostgreSQL cannot store is 400 with the list’s message', () => {
    for (const text of [
      `${at.toISOString()}|inv_1`,
      `${at.toISOString()}|po_1|x`,
      '-271821-04-20T00:00:00.000Z|po_1',
      '["a"]',
      '[1,2]',
      'not a cursor',
    ]) {
      expect(() => decodeListCursor(base64url(text), (id) => id.startsWith('po_'), 'own message')).toThrow(
        new InvalidRequestError('own message'),
      );
    }
  });

  it('a sequence cursor decodes to its number, and one beyond int8 is 400', () => {
    expect(decodeSequenceCursor(encodeSequenceCursor(42n))).toBe(42n);
    expect(() => decodeSequenceCursor(base64url('op:9999999999999999999'))).toThrow(InvalidRequestError);
    expect(() => decodeSequenceCursor(base64url('op:-1'))).toThrow(InvalidRequestError);
  });
});

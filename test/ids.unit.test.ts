// Payment ids are RFC 9562 UUIDv7 and every other id a TypeID, itself a UUIDv7 under its
// prefix: ids made later sort later, as text and as the uuid column compares them.
import { TypeID } from 'typeid-js';
import { validate, version } from 'uuid';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { newId, newUuid } from '../src/ids.ts';

/** The Unix milliseconds of a UUIDv7 (its first 48 bits). */
const millisecondsOf = (uuid: string) => Number.parseInt(uuid.replaceAll('-', '').slice(0, 12), 16);

describe('ids', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('makes payment ids that are UUIDv7 of the RFC 9562 variant, stamped with the current time', () => {
    const before = Date.now();
    const id = newUuid();
    const after = Date.now();
    expect(validate(id)).toBe(true);
    expect(version(id)).toBe(7);
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(millisecondsOf(id)).toBeGreaterThanOrEqual(before);
    expect(millisecondsOf(id)).toBeLessThanOrEqual(after);
  });

  it('makes payment ids strictly increasing within one millisecond and when the clock steps back', () => {
    // A day ahead of every id made so far in this process, then a second back.
    const frozen = Date.now() + 86_400_000;
    vi.useFakeTimers({ toFake: ['Date'], now: frozen });
    const sameMillisecond = Array.from({ length: 5_000 }, () => newUuid());
    vi.setSystemTime(frozen - 1_000);
    const afterStepBack = Array.from({ length: 100 }, () => newUuid());
    const ids = [...sameMillisecond, ...afterStepBack];
    expect(new Set(ids).size).toBe(ids.length);
    expect([...ids].sort()).toEqual(ids);
    expect(sameMillisecond.map(millisecondsOf)).toEqual(sameMillisecond.map(() => frozen));
  });

  it('makes prefixed TypeIDs whose suffix is a UUIDv7', () => {
    const ids = Array.from({ length: 1_000 }, () => newId('event'));
    for (const id of ids) {
      expect(id).toMatch(/^evt_[0-7][0-9a-hjkmnp-tv-z]{25}$/);
      expect(version(TypeID.fromString(id).toUUID())).toBe(7);
    }
  });
});

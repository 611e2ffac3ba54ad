// Every timestamp the gateway writes comes from a Clock, never from SQL now(),
// so tests can move time (expiry, webhook retry schedules) without sleeping.
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

/** A clock that only moves when told to; for tests and simulations. */
export class ManualClock implements Clock {
  #epochMs: number;
  constructor(start: Date = new Date()) {
    this.#epochMs = start.getTime();
  }
  now(): Date {
    return new Date(this.#epochMs);
  }
  advance(milliseconds: number): void {
    this.#epochMs += milliseconds;
  }
  set(at: Date): void {
    this.#epochMs = at.getTime();
  }
}

const EARLIEST_STORABLE_MS = Date.parse('0001-01-01T00:00:00.000Z');
const LATEST_STORABLE_MS = Date.parse('9999-12-31T23:59:59.999Z');

/**
 * Whether both backends store `at` as it is: a valid Date with a four-digit
 * year. JavaScript accepts years -271821..275760, which the drivers send in
 * forms PostgreSQL refuses (a 500 from a crafted cursor or filter).
 */
export function isStorableInstant(at: Date): boolean {
  const ms = at.getTime();
  return ms >= EARLIEST_STORABLE_MS && ms <= LATEST_STORABLE_MS;
}

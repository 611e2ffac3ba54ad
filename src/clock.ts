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

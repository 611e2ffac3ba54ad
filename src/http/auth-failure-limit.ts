// Failed authentications per client address in a fixed one-minute window,
// checked before the key is looked up: a flood of bad keys (or bad metrics
// tokens) costs a map lookup, not a database query. In-process: each instance
// counts its own, which bounds every instance's database work all the same.
import type { Clock } from '../clock.ts';
import { RateLimitedError } from '../errors.ts';

const WINDOW_MS = 60_000;
/** Bound on remembered addresses; past it the oldest windows are forgotten first. */
const ADDRESSES_MAX = 100_000;

interface Window {
  readonly startedAtMs: number;
  failures: number;
}

export class AuthFailureLimiter {
  readonly #clock: Clock;
  readonly #failuresPerMinute: number;
  readonly #windows = new Map<string, Window>();

  constructor(clock: Clock, failuresPerMinute: number) {
    this.#clock = clock;
    this.#failuresPerMinute = failuresPerMinute;
  }

  /** Throws 429 while the address has used up its failures of the current window. */
  assertNotBlocked(address: string): void {
    const window = this.#current(address);
    if (!window || window.failures < this.#failuresPerMinute) return;
    const retryAfterSeconds = Math.max(
      1,
      Math.ceil((window.startedAtMs + WINDOW_MS - this.#clock.now().getTime()) / 1000),
    );
    throw new RateLimitedError(
      retryAfterSeconds,
      `Too many failed authentications from this address; retry in ${retryAfterSeconds} s with a valid key.`,
    );
  }

  recordFailure(address: string): void {
    const window = this.#current(address);
    if (window) {
      window.failures += 1;
      return;
    }
    if (this.#windows.size >= ADDRESSES_MAX) this.#forgetOldest();
    this.#windows.set(address, { startedAtMs: this.#clock.now().getTime(), failures: 1 });
  }

  #current(address: string): Window | undefined {
    const window = this.#windows.get(address);
    if (window && window.startedAtMs + WINDOW_MS <= this.#clock.now().getTime()) {
      this.#windows.delete(address);
      return undefined;
    }
    return window;
  }

  // Map iteration follows insertion, so the first entries are the oldest windows.
  #forgetOldest(): void {
    let toForget = Math.max(1, Math.floor(ADDRESSES_MAX / 10));
    for (const address of this.#windows.keys()) {
      if (toForget-- === 0) break;
      this.#windows.delete(address);
    }
  }
}

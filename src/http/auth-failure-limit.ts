// Failed authentications per client address in a fixed one-minute window,
// checked before the key is looked up: a flood of bad keys (or bad metrics
// tokens) costs a map lookup, not a database query. In-process: each instance
// counts its own, which bounds every instance's database work all the same.
import type { Clock } from '../clock.ts';
import { RateLimitedError } from '../errors.ts';
import { FixedWindowCounts } from './fixed-window-counts.ts';

export class AuthFailureLimiter {
  readonly #failures: FixedWindowCounts;
  readonly #failuresPerMinute: number;

  constructor(clock: Clock, failuresPerMinute: number) {
    this.#failures = new FixedWindowCounts(clock);
    this.#failuresPerMinute = failuresPerMinute;
  }

  /** Throws 429 while the address has used up its failures of the current window. */
  assertNotBlocked(address: string): void {
    if (this.#failures.count(address) < this.#failuresPerMinute) return;
    const retryAfterSeconds = this.#failures.retryAfterSeconds(address);
    throw new RateLimitedError(
      retryAfterSeconds,
      `Too many failed authentications from this address; retry in ${retryAfterSeconds} s with a valid key.`,
    );
  }

  recordFailure(address: string): void {
    this.#failures.add(address);
  }
}

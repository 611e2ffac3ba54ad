// Calls of the crypto test helpers per sandbox shop in a fixed one-minute
// window (PAYGATE_SANDBOX_HELPER_CALLS_PER_MINUTE). Every sandbox shop drives
// the one simulated chain, so a shop that mines, reorganises or funds in a loop
// would slow it for the others; the budget keeps one shop's share bounded.
// In-process: each API instance counts its own calls, which bounds every
// instance's load on the chain all the same.
import type { Clock } from '../../clock.ts';
import { RateLimitedError } from '../../errors.ts';
import { FixedWindowCounts } from '../../http/fixed-window-counts.ts';

export class SandboxHelperBudget {
  readonly #calls: FixedWindowCounts;
  readonly #callsPerMinute: number;

  constructor(clock: Clock, callsPerMinute: number) {
    if (!Number.isSafeInteger(callsPerMinute) || callsPerMinute < 1)
      throw new RangeError(`calls per minute: ${callsPerMinute}`);
    this.#calls = new FixedWindowCounts(clock);
    this.#callsPerMinute = callsPerMinute;
  }

  /** Counts one call of `shopId`; throws 429 (with Retry-After) when its window's calls are used up. */
  take(shopId: string): void {
    if (this.#calls.count(shopId) >= this.#callsPerMinute) {
      const retryAfterSeconds = this.#calls.retryAfterSeconds(shopId);
      throw new RateLimitedError(
        retryAfterSeconds,
        `More than ${this.#callsPerMinute} crypto test-helper calls this minute for this shop; retry in ${retryAfterSeconds} s.`,
      );
    }
    this.#calls.add(shopId);
  }
}

// Calls of the crypto test helpers per sandbox shop in a fixed one-minute
// window (PAYGATE_SANDBOX_HELPER_CALLS_PER_MINUTE). Every sandbox shop drives
// the one simulated chain, so a shop that mines, reorganises or funds in a loop
// would slow it for the others; the budget keeps one shop's share bounded.
// In-process: each API instance counts its own calls, which bounds every
// instance's load on the chain all the same.
import type { Clock } from '../../clock.ts';
import { RateLimitedError } from '../../errors.ts';

const WINDOW_MS = 60_000;
/** Bound on remembered shops; past it the oldest windows are forgotten first. */
const SHOPS_MAX = 100_000;

interface Window {
  readonly startedAtMs: number;
  calls: number;
}

export class SandboxHelperBudget {
  readonly #clock: Clock;
  readonly #callsPerMinute: number;
  readonly #windows = new Map<string, Window>();

  constructor(clock: Clock, callsPerMinute: number) {
    if (!Number.isSafeInteger(callsPerMinute) || callsPerMinute < 1)
      throw new RangeError(`calls per minute: ${callsPerMinute}`);
    this.#clock = clock;
    this.#callsPerMinute = callsPerMinute;
  }

  /** Counts one call of `shopId`; throws 429 (with Retry-After) when its window's calls are used up. */
  take(shopId: string): void {
    const nowMs = this.#clock.now().getTime();
    let window = this.#windows.get(shopId);
    if (window && window.startedAtMs + WINDOW_MS <= nowMs) {
      this.#windows.delete(shopId);
      window = undefined;
    }
    if (!window) {
      if (this.#windows.size >= SHOPS_MAX) this.#forgetOldest();
      this.#windows.set(shopId, { startedAtMs: nowMs, calls: 1 });
      return;
    }
    if (window.calls < this.#callsPerMinute) {
      window.calls += 1;
      return;
    }
    const retryAfterSeconds = Math.max(1, Math.ceil((window.startedAtMs + WINDOW_MS - nowMs) / 1000));
    throw new RateLimitedError(
      retryAfterSeconds,
      `More than ${this.#callsPerMinute} crypto test-helper calls this minute for this shop; retry in ${retryAfterSeconds} s.`,
    );
  }

  // Map iteration follows insertion, so the first entries are the oldest windows.
  #forgetOldest(): void {
    let toForget = Math.max(1, Math.floor(SHOPS_MAX / 10));
    for (const shopId of this.#windows.keys()) {
      if (toForget-- === 0) break;
      this.#windows.delete(shopId);
    }
  }
}

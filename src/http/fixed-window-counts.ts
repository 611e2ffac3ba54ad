// Counts per key (a client address, a shop) in fixed one-minute windows, in
// process: each API instance counts its own, which bounds every instance's
// load all the same. A bounded number of keys is remembered; past it the
// oldest windows are forgotten first, so a flood of new keys costs memory
// only up to the bound.
import type { Clock } from '../clock.ts';

const WINDOW_MS = 60_000;
const KEYS_MAX = 100_000;

interface Window {
  readonly startedAtMs: number;
  count: number;
}

export class FixedWindowCounts {
  readonly #clock: Clock;
  readonly #windows = new Map<string, Window>();

  constructor(clock: Clock) {
    this.#clock = clock;
  }

  /** What `key` has counted in its current window (0 when it has none). */
  count(key: string): number {
    return this.#current(key)?.count ?? 0;
  }

  /** Counts one for `key`, opening its window when it has none. */
  add(key: string): void {
    const window = this.#current(key);
    if (window) {
      window.count += 1;
      return;
    }
    if (this.#windows.size >= KEYS_MAX) this.#forgetOldest();
    this.#windows.set(key, { startedAtMs: this.#clock.now().getTime(), count: 1 });
  }

  /** Whole seconds, at least 1, until `key`'s current window ends: the Retry-After of a refusal. */
  retryAfterSeconds(key: string): number {
    const window = this.#current(key);
    if (!window) return 1;
    return Math.max(1, Math.ceil((window.startedAtMs + WINDOW_MS - this.#clock.now().getTime()) / 1000));
  }

  #current(key: string): Window | undefined {
    const window = this.#windows.get(key);
    if (window && window.startedAtMs + WINDOW_MS <= this.#clock.now().getTime()) {
      this.#windows.delete(key);
      return undefined;
    }
    return window;
  }

  // Map iteration follows insertion, so the first entries are the oldest windows.
  #forgetOldest(): void {
    let toForget = Math.max(1, Math.floor(KEYS_MAX / 10));
    for (const key of this.#windows.keys()) {
      if (toForget-- === 0) break;
      this.#windows.delete(key);
    }
  }
}

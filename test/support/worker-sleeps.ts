// Watches a worker's sleeps through its sleep observer (src/polling-worker.ts), so that a
// test waits until the worker is provably asleep, and learns what ended a sleep, instead
// of sleeping itself and hoping the worker has settled.
import type { SleepObserver } from '../../src/polling-worker.ts';

export interface SleepWatch {
  /** Give this to the worker's factory. */
  readonly observer: SleepObserver;
  /** Sleeps cut short by a notification (or a stop) so far. */
  readonly woken: number;
  /**
   * Resolves, with the pause, once the worker is asleep with a pause `matching` accepts: at
   * once when it sleeps so now, else at the next such sleep.
   */
  asleep(matching?: (pauseMs: number) => boolean): Promise<number>;
  /** Resolves once `count` sleeps have ended (at once if they have). */
  sleepsEnded(count: number): Promise<void>;
  /** Sleeps begun so far. */
  readonly sleeps: number;
}

export function watchSleeps(): SleepWatch {
  /** The pause of the sleep in progress; undefined while the worker is awake. */
  let current: number | undefined;
  let sleeps = 0;
  let ended = 0;
  let woken = 0;
  const sleepWaiters = new Set<{ matching: (pauseMs: number) => boolean; resolve: (pauseMs: number) => void }>();
  const endWaiters = new Set<{ count: number; resolve: () => void }>();
  return {
    observer: {
      asleep(pauseMs) {
        current = pauseMs;
        sleeps += 1;
        for (const waiter of sleepWaiters) {
          if (!waiter.matching(pauseMs)) continue;
          sleepWaiters.delete(waiter);
          waiter.resolve(pauseMs);
        }
      },
      awake(cause) {
        current = undefined;
        ended += 1;
        if (cause === 'woken') woken += 1;
        for (const waiter of endWaiters) {
          if (waiter.count > ended) continue;
          endWaiters.delete(waiter);
          waiter.resolve();
        }
      },
    },
    get woken() {
      return woken;
    },
    get sleeps() {
      return sleeps;
    },
    asleep(matching = () => true) {
      if (current !== undefined && matching(current)) return Promise.resolve(current);
      return new Promise((resolve) => sleepWaiters.add({ matching, resolve }));
    },
    sleepsEnded(count) {
      if (ended >= count) return Promise.resolve();
      return new Promise((resolve) => endWaiters.add({ count, resolve }));
    },
  };
}

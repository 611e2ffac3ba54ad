// Waiting for something a remote gateway does by itself (its workers credit a
// deposit, send a payout, write an event): ask again with a growing pause, and
// give up at a deadline with an error that names what did not happen.
import { setTimeout as sleep } from 'node:timers/promises';

const FIRST_PAUSE_MS = 200;
const LONGEST_PAUSE_MS = 2_000;

export class WaitTimeoutError extends Error {
  constructor(what: string, waitedMs: number) {
    super(`gave up after ${Math.round(waitedMs / 1000)} s waiting for ${what}`);
    this.name = 'WaitTimeoutError';
  }
}

/** When the wait began and when it must end (`--timeout`). */
export interface Deadline {
  readonly startedAt: number;
  readonly endsAt: number;
}

export function deadlineIn(timeoutMs: number): Deadline {
  const startedAt = Date.now();
  return { startedAt, endsAt: startedAt + timeoutMs };
}

/**
 * Calls `probe` until it returns a value (not undefined), pausing 200 ms, then longer, up to 2 s
 * between calls; past the deadline: WaitTimeoutError naming `what`. `probe` learns which try it is
 * (from 0), for those that act now and then while they wait (mine blocks).
 */
export async function waitFor<T>(
  what: string,
  deadline: Deadline,
  probe: (attempt: number) => Promise<T | undefined>,
): Promise<T> {
  let pause = FIRST_PAUSE_MS;
  for (let attempt = 0; ; attempt += 1) {
    const found = await probe(attempt);
    if (found !== undefined) return found;
    const left = deadline.endsAt - Date.now();
    if (left <= 0) throw new WaitTimeoutError(what, Date.now() - deadline.startedAt);
    await sleep(Math.min(pause, left));
    pause = Math.min(pause * 2, LONGEST_PAUSE_MS);
  }
}

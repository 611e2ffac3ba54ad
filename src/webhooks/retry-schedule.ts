// The retry schedule, in one place. The first attempt is made immediately at
// emit time; after each failed attempt the next one waits the step below, with
// ±20 % jitter so that receivers coming back up are not hit in lock-step.
// Ten attempts over about three days, then the delivery is `failed`.

const SECOND_MS = 1_000;
const MINUTE_MS = 60 * SECOND_MS;
const HOUR_MS = 60 * MINUTE_MS;

/** Wait before attempt n + 2 after attempt n + 1 failed (index n). */
export const RETRY_DELAYS_MS: readonly number[] = [
  5 * SECOND_MS,
  5 * MINUTE_MS,
  30 * MINUTE_MS,
  2 * HOUR_MS,
  5 * HOUR_MS,
  10 * HOUR_MS,
  10 * HOUR_MS,
  24 * HOUR_MS,
  24 * HOUR_MS,
];

/** The first attempt plus one per retry step. */
export const MAX_ATTEMPTS = RETRY_DELAYS_MS.length + 1;

const JITTER_FRACTION = 0.2;

/** The longest a Retry-After header can postpone a retry. */
export const MAX_RETRY_AFTER_MS = Math.max(...RETRY_DELAYS_MS);

export interface NextAttemptInput {
  /** Attempts made so far, including the one that just failed (1 after the first). */
  readonly attemptsMade: number;
  /** The delivery stops after this many attempts. */
  readonly maxAttempts: number;
  /** The receiver's Retry-After, in milliseconds, when it answered 429 or 503 with one. */
  readonly retryAfterMs?: number | undefined;
  /** A number in [0, 1); Math.random by default. */
  readonly random?: (() => number) | undefined;
}

/** The delay before the next attempt, or null when the schedule is exhausted. */
export function nextRetryDelayMs(input: NextAttemptInput): number | null {
  if (input.attemptsMade >= input.maxAttempts) return null;
  const step = RETRY_DELAYS_MS[Math.min(input.attemptsMade, RETRY_DELAYS_MS.length) - 1] ?? RETRY_DELAYS_MS[0]!;
  const random = input.random ?? Math.random;
  const jittered = Math.round(step * (1 - JITTER_FRACTION + 2 * JITTER_FRACTION * random()));
  // Retry-After may only postpone a retry, and never beyond the schedule's longest step.
  if (input.retryAfterMs !== undefined) return Math.max(jittered, Math.min(input.retryAfterMs, MAX_RETRY_AFTER_MS));
  return jittered;
}

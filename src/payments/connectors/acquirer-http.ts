// What every acquirer's HTTP client shares: an answer worth asking again for
// (network failure, timeout, 5xx, 429, an acquirer's "still processing"), the
// pause `Retry-After` asks for (capped: a call must stay under the gateway's
// reconciliation bound), a JSON object read from a bounded body, and the retry
// loop — doubling pauses with jitter, the same request each time, so an
// idempotency key the request carries names one operation across attempts.
import { setTimeout as pause } from 'node:timers/promises';
import { retryAfterMs } from '../../retry-after.ts';

/** An answer that says "ask again", with the pause the acquirer asked for, if any. */
export class RetryableAnswer extends Error {
  readonly retryAfterMs: number | undefined;
  constructor(message: string, retryAfterMs?: number) {
    super(message);
    this.name = 'RetryableAnswer';
    this.retryAfterMs = retryAfterMs;
  }
}

/** A pause in milliseconds, dropped when it is not a finite non-negative number, and at most `capMs`. */
export function cappedPauseMs(ms: number | undefined, capMs: number): number | undefined {
  if (ms === undefined || !Number.isFinite(ms) || ms < 0) return undefined;
  return Math.min(ms, capMs);
}

/** `Retry-After` as milliseconds up to `capMs`. */
export function retryAfterHeaderMs(header: string | null, capMs: number): number | undefined {
  return cappedPauseMs(retryAfterMs(header, new Date()), capMs);
}

/** The body as a JSON object, or why it is not one (too large, not JSON, not an object). */
export function jsonObjectOf(
  body: string,
  maxChars: number,
): { readonly object: Readonly<Record<string, unknown>> } | { readonly problem: string } {
  if (body.length > maxChars) return { problem: 'answer too large' };
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return { problem: 'a body that is not JSON' };
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    return { problem: 'a body that is not an object' };
  }
  return { object: parsed as Readonly<Record<string, unknown>> };
}

export interface RetryPolicy {
  readonly maxAttempts: number;
  /** The first pause between attempts; doubled each time, with jitter. */
  readonly retryBaseMs: number;
  /** An error that asking again cannot change (the acquirer's refusal, an unusable answer). */
  isFinal(error: unknown): boolean;
  /** The error thrown when every attempt failed: the outcome is unknown. */
  exhausted(message: string, lastError: unknown): Error;
}

/** Runs `call` until it answers, a final error, or `maxAttempts`. */
export async function callWithRetries<T>(call: () => Promise<T>, policy: RetryPolicy): Promise<T> {
  let lastError: unknown;
  for (let attemptNumber = 1; attemptNumber <= policy.maxAttempts; attemptNumber += 1) {
    try {
      return await call();
    } catch (error) {
      if (policy.isFinal(error)) throw error;
      lastError = error;
      if (attemptNumber === policy.maxAttempts) break;
      const backoffMs = policy.retryBaseMs * 2 ** (attemptNumber - 1);
      const waitMs =
        error instanceof RetryableAnswer && error.retryAfterMs !== undefined ? error.retryAfterMs : backoffMs;
      await pause(waitMs / 2 + Math.random() * (waitMs / 2));
    }
  }
  const reason = lastError instanceof Error ? lastError.message : String(lastError);
  throw policy.exhausted(`${policy.maxAttempts} attempts failed, last: ${reason}`, lastError);
}

import { describe, expect, it } from 'vitest';
import {
  MAX_ATTEMPTS,
  MAX_RETRY_AFTER_MS,
  nextRetryDelayMs,
  RETRY_DELAYS_MS,
} from '../../src/webhooks/retry-schedule.ts';

const HOUR_MS = 3_600_000;

describe('retry schedule', () => {
  it('is 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h, then 24 h steps, spanning about three days', () => {
    expect(RETRY_DELAYS_MS).toEqual([
      5_000,
      300_000,
      1_800_000,
      2 * HOUR_MS,
      5 * HOUR_MS,
      10 * HOUR_MS,
      10 * HOUR_MS,
      24 * HOUR_MS,
      24 * HOUR_MS,
    ]);
    const totalHours = RETRY_DELAYS_MS.reduce((sum, step) => sum + step, 0) / HOUR_MS;
    expect(totalHours).toBeGreaterThan(72);
    expect(totalHours).toBeLessThan(80);
    expect(MAX_ATTEMPTS).toBe(10);
  });

  it('jitters each step by at most ±20 %', () => {
    RETRY_DELAYS_MS.forEach((step, index) => {
      expect(nextRetryDelayMs({ attemptsMade: index + 1, maxAttempts: MAX_ATTEMPTS, random: () => 0 })).toBe(
        step * 0.8,
      );
      expect(nextRetryDelayMs({ attemptsMade: index + 1, maxAttempts: MAX_ATTEMPTS, random: () => 0.5 })).toBe(step);
      expect(
        nextRetryDelayMs({ attemptsMade: index + 1, maxAttempts: MAX_ATTEMPTS, random: () => 0.999_999 }),
      ).toBeLessThanOrEqual(step * 1.2);
    });
  });

  it('stops after the last attempt', () => {
    expect(nextRetryDelayMs({ attemptsMade: MAX_ATTEMPTS, maxAttempts: MAX_ATTEMPTS })).toBeNull();
    expect(nextRetryDelayMs({ attemptsMade: 1, maxAttempts: 1 })).toBeNull();
  });

  it('lets Retry-After postpone a retry up to the longest step, never bring it forward', () => {
    const at = (retryAfterMs: number) =>
      nextRetryDelayMs({ attemptsMade: 2, maxAttempts: MAX_ATTEMPTS, retryAfterMs, random: () => 0.5 });
    expect(at(1_000)).toBe(300_000);
    expect(at(3_600_000)).toBe(3_600_000);
    expect(at(30 * 24 * HOUR_MS)).toBe(MAX_RETRY_AFTER_MS);
  });
});

import { describe, expect, it } from 'vitest';
import { retryAfterMs } from '../src/retry-after.ts';

describe('Retry-After', () => {
  const now = new Date('2026-11-01T10:00:00Z');

  it('reads delay-seconds, with a fraction some acquirers send', () => {
    expect(retryAfterMs('120', now)).toBe(120_000);
    expect(retryAfterMs(' 0 ', now)).toBe(0);
    expect(retryAfterMs('1.5', now)).toBe(1_500);
    expect(retryAfterMs(['7', '9'], now)).toBe(7_000);
  });

  it('reads an HTTP-date (IMF-fixdate) from now, a past one as no wait', () => {
    expect(retryAfterMs('Sun, 01 Nov 2026 10:05:00 GMT', now)).toBe(300_000);
    expect(retryAfterMs('Sun, 01 Nov 2026 09:00:00 GMT', now)).toBe(0);
  });

  it('ignores what is neither, rather than guessing', () => {
    for (const header of ['soon', '-1', '1e3', 'a 1', '2026-11-01T10:05:00Z', '', '12345678901', undefined, null]) {
      expect(retryAfterMs(header, now)).toBeUndefined();
    }
    expect(retryAfterMs([], now)).toBeUndefined();
  });
});

// The request budget of one node URL, on numbers alone: a full bucket lets
// `burst` requests go at once, then one per 1/requestsPerSecond; waiting
// requests are served in the order they reserved; a reservation past the
// caller's limit takes nothing; a quiet spell refills at most `burst`.
import { describe, expect, it } from 'vitest';
import { createNodeBudget } from '../../../src/crypto/tron/node-budget.ts';

const FAR = Number.POSITIVE_INFINITY;

describe('the request budget of a node URL', () => {
  it('lets a full burst go at once, then one request per interval', () => {
    const budget = createNodeBudget({ requestsPerSecond: 15, burst: 15 });
    const grants = Array.from({ length: 20 }, () => budget.reserve(1_000, FAR)!);
    expect(grants.slice(0, 15)).toEqual(Array(15).fill(1_000));
    // 15 req/s: one token every 66.67 ms after the burst.
    expect(grants.slice(15).map((grant) => Math.round(grant - 1_000))).toEqual([67, 133, 200, 267, 333]);
  });

  it('never grants more than burst + rate × time in any span, however requests arrive', () => {
    const budget = createNodeBudget({ requestsPerSecond: 15, burst: 15 });
    const grants: number[] = [];
    // 600 requests asked at random moments of a minute, in order of asking.
    let at = 0;
    for (let index = 0; index < 600; index += 1) {
      at += ((index * 7919) % 200) / 2;
      grants.push(budget.reserve(at, FAR)!);
    }
    for (const [index, grant] of grants.entries()) {
      expect(grant).toBeGreaterThanOrEqual(index === 0 ? 0 : grants[index - 1]!); // served in order of reservation
      const withinSecond = grants.filter((other) => other >= grant && other < grant + 1_000).length;
      expect(withinSecond).toBeLessThanOrEqual(15 + 15);
    }
    // Over the whole run the rate holds: at most burst + 15 per second of span.
    const span = grants.at(-1)! - grants[0]!;
    expect(grants.length).toBeLessThanOrEqual(15 + Math.floor((span * 15) / 1_000) + 1);
  });

  it('with burst 1 spaces every request by the interval', () => {
    const budget = createNodeBudget({ requestsPerSecond: 4, burst: 1 });
    expect([0, 0, 0, 0].map(() => budget.reserve(0, FAR))).toEqual([0, 250, 500, 750]);
  });

  it('refills during a quiet spell, but never beyond the burst', () => {
    const budget = createNodeBudget({ requestsPerSecond: 10, burst: 3 });
    for (let index = 0; index < 3; index += 1) budget.reserve(0, FAR);
    // An hour later only three go at once again.
    const later = 3_600_000;
    expect([0, 0, 0, 0].map(() => budget.reserve(later, FAR))).toEqual([later, later, later, later + 100]);
  });

  it('peek tells when a request could go without taking the token', () => {
    const budget = createNodeBudget({ requestsPerSecond: 2, burst: 1 });
    expect(budget.reserve(0, FAR)).toBe(0);
    expect(budget.peek(0)).toBe(500);
    expect(budget.peek(0)).toBe(500);
    expect(budget.peek(700)).toBe(700);
    expect(budget.reserve(100, FAR)).toBe(500);
  });

  it('a reservation past the caller limit takes nothing: the next caller is not delayed by it', () => {
    const budget = createNodeBudget({ requestsPerSecond: 1, burst: 1 });
    expect(budget.reserve(0, FAR)).toBe(0);
    expect(budget.reserve(0, 999)).toBeUndefined();
    expect(budget.reserve(0, 1_000)).toBe(1_000);
    expect(budget.reserve(0, 1_500)).toBeUndefined();
    expect(budget.reserve(0, FAR)).toBe(2_000);
  });

  it('refuses a rate that is not above zero or a burst that is not a whole number ≥ 1', () => {
    expect(() => createNodeBudget({ requestsPerSecond: 0, burst: 1 })).toThrow(/requestsPerSecond/);
    expect(() => createNodeBudget({ requestsPerSecond: Number.NaN, burst: 1 })).toThrow(/requestsPerSecond/);
    expect(() => createNodeBudget({ requestsPerSecond: 5, burst: 0 })).toThrow(/burst/);
    expect(() => createNodeBudget({ requestsPerSecond: 5, burst: 1.5 })).toThrow(/burst/);
  });
});

import { afterAll, describe, expect, it } from 'vitest';

describe('a suite whose clean-up fails', () => {
  afterAll(() => {
    throw new Error('clean-up failed');
  });
  it('passes', () => expect(1).toBe(1));
});

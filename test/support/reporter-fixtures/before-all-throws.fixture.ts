import { beforeAll, describe, expect, it } from 'vitest';

describe('a suite whose set-up fails', () => {
  beforeAll(() => {
    throw new Error('set-up failed');
  });
  it('would pass', () => expect(1).toBe(1));
  it('would pass too', () => expect(2).toBe(2));
});

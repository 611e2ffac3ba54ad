import { expect, it } from 'vitest';

it('passes', () => expect(1 + 1).toBe(2));
it('passes too', () => expect('a').toBe('a'));
it.skip('is skipped', () => expect(true).toBe(false));

import { expect, it } from 'vitest';

it('passes but leaves a rejection nobody handles', async () => {
  void Promise.reject(new Error('nobody handled this'));
  await new Promise((resolve) => setTimeout(resolve, 20));
  expect(1).toBe(1);
});

// Runs one fixture file at a time with only the summary reporter, so the
// reporter's test can read the closing line each kind of failure produces.
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/support/reporter-fixtures/*.fixture.ts'],
    reporters: ['./test/support/summary-reporter.ts'],
    pool: 'forks',
    maxWorkers: 1,
  },
});

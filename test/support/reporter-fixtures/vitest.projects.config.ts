// Two projects in one run, as `npm test` runs unit, integration and browser:
// the closing line must count the tests of both.
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    reporters: ['./test/support/summary-reporter.ts'],
    pool: 'forks',
    maxWorkers: 1,
    projects: [
      { extends: true, test: { name: 'first', include: ['test/support/reporter-fixtures/passing.fixture.ts'] } },
      { extends: true, test: { name: 'second', include: ['test/support/reporter-fixtures/failing-test.fixture.ts'] } },
    ],
  },
});

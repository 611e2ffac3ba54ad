import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    // Every response a test receives must match the app's OpenAPI document.
    setupFiles: ['test/support/openapi-conformance-setup.ts'],
    reporters: ['default', './test/support/summary-reporter.ts'],
    // Safety nets only, never what decides a result: on a loaded machine (two cores, several
    // suites at once) a test that starts an on-disk database or a process takes minutes.
    testTimeout: 300_000,
    hookTimeout: 300_000,
    pool: 'forks',
    // Two cores: more parallel files than this only adds PGlite start-up contention.
    maxWorkers: 2,
  },
});

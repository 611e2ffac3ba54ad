import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    // Every response a test receives must match the app's OpenAPI document.
    setupFiles: ['test/support/openapi-conformance-setup.ts'],
    reporters: ['default', './test/support/summary-reporter.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    // Two cores: more parallel files than this only adds PGlite start-up contention.
    maxWorkers: 2,
  },
});

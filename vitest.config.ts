import { defineConfig } from 'vitest/config';

// Three projects, chosen by file name (docs/ARCHITECTURE.md, "Tests"):
// - unit: `*.unit.test.ts`, pure code only (no database, no server, no process, no browser);
// - browser: `*-browser.test.ts`, headless Chromium against a real server;
// - integration: every other `*.test.ts` (the real database, the real HTTP stack, processes).
// `npm test` runs all three with one closing summary line; `npm run test:unit` runs the first.
const UNIT = 'test/**/*.unit.test.ts';
const BROWSER = 'test/**/*-browser.test.ts';
const PGLITE_TEMPLATE = 'test/support/pglite-template-setup.ts';

export default defineConfig({
  // The workspace packages (@paygate/node) are imported from their TypeScript source, not a build.
  ssr: { resolve: { conditions: ['paygate-source'] } },
  test: {
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
    projects: [
      { extends: true, test: { name: 'unit', include: [UNIT] } },
      {
        extends: true,
        test: {
          name: 'integration',
          include: ['test/**/*.test.ts'],
          exclude: [UNIT, BROWSER],
          globalSetup: [PGLITE_TEMPLATE],
        },
      },
      {
        extends: true,
        test: { name: 'browser', include: [BROWSER], globalSetup: ['test/support/chromium-setup.ts', PGLITE_TEMPLATE] },
      },
    ],
  },
});

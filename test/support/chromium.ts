// Finds the Chromium the browser tests drive. Installing one is an explicit
// step (`npm run setup:browser`), never a side effect of running the tests.
// The global set-up resolves it before any suite runs and hands the result to
// the test processes through the environment; a browser suite reads it with
// `browserForTests()`.
import { accessSync, constants } from 'node:fs';

/** Where Debian and Ubuntu put Chromium (and Chrome), in the order we try them. */
const USUAL_CHROMIUM_PATHS = [
  '/usr/bin/chromium',
  '/usr/bin/chromium-browser',
  '/snap/bin/chromium',
  '/usr/bin/google-chrome-stable',
  '/usr/bin/google-chrome',
] as const;

export const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'];

/** Set by the global set-up for the test processes. */
const RESOLVED_PATH_VARIABLE = 'PAYGATE_TEST_CHROMIUM';
const SKIP_REASON_VARIABLE = 'PAYGATE_TEST_CHROMIUM_SKIP_REASON';
/** Set by CI: a browser suite that cannot run fails instead of being skipped. */
export const REQUIRE_BROWSER_VARIABLE = 'PAYGATE_REQUIRE_BROWSER';

export type ChromiumResolution = { readonly path: string } | { readonly skipReason: string };

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function findInstalled(env: NodeJS.ProcessEnv): ChromiumResolution | undefined {
  const configured = env.PAYGATE_CHROMIUM_PATH;
  if (configured) {
    return isExecutable(configured)
      ? { path: configured }
      : { skipReason: `PAYGATE_CHROMIUM_PATH is set to "${configured}", which is not an executable file` };
  }
  const found = USUAL_CHROMIUM_PATHS.find(isExecutable);
  return found ? { path: found } : undefined;
}

/** Finds Chromium. Runs once, in the global set-up. */
export function resolveChromium(env: NodeJS.ProcessEnv): ChromiumResolution {
  return findInstalled(env) ?? { skipReason: `no Chromium found (looked for ${USUAL_CHROMIUM_PATHS.join(', ')})` };
}

/** Passes the global set-up's resolution to the test processes. */
export function publishChromium(resolution: ChromiumResolution): void {
  if ('path' in resolution) process.env[RESOLVED_PATH_VARIABLE] = resolution.path;
  else process.env[SKIP_REASON_VARIABLE] = resolution.skipReason;
}

export const HOW_TO_ENABLE_BROWSER_TESTS =
  "run `npm run setup:browser` (installs Debian's chromium package with apt-get, as root) or set PAYGATE_CHROMIUM_PATH to a Chromium or Chrome executable";

/**
 * What a browser suite does: run with this executable, skip (where browsers are
 * optional), or fail with the reason (where PAYGATE_REQUIRE_BROWSER=1, as in CI).
 */
export function browserForTests(
  env: NodeJS.ProcessEnv = process.env,
): { path: string } | { skip: string } | { fail: string } {
  const path = env[RESOLVED_PATH_VARIABLE];
  if (path) return { path };
  const reason = env[SKIP_REASON_VARIABLE] ?? 'the global test set-up did not look for Chromium';
  if (env[REQUIRE_BROWSER_VARIABLE] === '1')
    return { fail: `browser tests are required (${REQUIRE_BROWSER_VARIABLE}=1) but cannot run: ${reason}` };
  return { skip: reason };
}

// Runs once before the browser tests: finds Chromium and publishes its path to
// the test processes, or says loudly why the browser tests are skipped.
import { HOW_TO_ENABLE_BROWSER_TESTS, REQUIRE_BROWSER_VARIABLE, publishChromium, resolveChromium } from './chromium.ts';

export default function setup(): void {
  const chromium = resolveChromium(process.env);
  publishChromium(chromium);
  if ('path' in chromium) return;
  const outcome = process.env[REQUIRE_BROWSER_VARIABLE] === '1' ? 'WILL FAIL' : 'SKIPPED';
  process.stderr.write(
    `\n*** BROWSER TESTS ${outcome}: ${chromium.skipReason}. To run them: ${HOW_TO_ENABLE_BROWSER_TESTS}. ***\n`,
  );
}

// Runs once before the suite: finds Chromium for the browser
// suites, and builds a migrated PGlite data folder dumped to a file, so every
// test database starts from it in a few hundred milliseconds instead of running
// initdb and every migration again.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase } from '../../src/db/database.ts';
import { migrate } from '../../src/db/migrate.ts';
import { HOW_TO_ENABLE_BROWSER_TESTS, REQUIRE_BROWSER_VARIABLE, publishChromium, resolveChromium } from './chromium.ts';

function prepareChromium(): void {
  const log = (line: string) => process.stderr.write(`${line}\n`);
  const chromium = resolveChromium(process.env);
  publishChromium(chromium);
  if ('path' in chromium) return;
  const outcome = process.env[REQUIRE_BROWSER_VARIABLE] === '1' ? 'WILL FAIL' : 'SKIPPED';
  log(`\n*** BROWSER TESTS ${outcome}: ${chromium.skipReason}. To run them: ${HOW_TO_ENABLE_BROWSER_TESTS}. ***\n`);
}

export default async function setup(): Promise<() => Promise<void>> {
  prepareChromium();
  const folder = await mkdtemp(join(tmpdir(), 'paygate-test-template-'));
  const handle = await openDatabase({ dataDir: 'memory://' });
  await migrate(handle);
  const dump = await handle.dumpDataDir!();
  await handle.close();
  const file = join(folder, 'pglite-template.tar');
  await writeFile(file, Buffer.from(await dump.arrayBuffer()));
  process.env.PAYGATE_TEST_PGLITE_TEMPLATE = file;
  return () => rm(folder, { recursive: true, force: true });
}

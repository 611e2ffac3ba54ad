// Runs once before the tests that use a database: builds a migrated PGlite data
// folder dumped to a file, so every test database starts from it in a few
// hundred milliseconds instead of running initdb and every migration again.
// Both the integration and the browser project list it; the second one to start
// in the same run finds the template already built and reuses it.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase } from '../../src/db/database.ts';
import { migrate } from '../../src/db/migrate.ts';

const TEMPLATE_VARIABLE = 'PAYGATE_TEST_PGLITE_TEMPLATE';

async function buildTemplate(folder: string): Promise<string> {
  const handle = await openDatabase({ dataDir: 'memory://' });
  await migrate(handle);
  const dump = await handle.dumpDataDir!();
  await handle.close();
  const file = join(folder, 'pglite-template.tar');
  await writeFile(file, Buffer.from(await dump.arrayBuffer()));
  return file;
}

export default async function setup(): Promise<() => Promise<void>> {
  if (process.env[TEMPLATE_VARIABLE]) return async () => {};
  const folder = await mkdtemp(join(tmpdir(), 'paygate-test-template-'));
  process.env[TEMPLATE_VARIABLE] = await buildTemplate(folder);
  return async () => {
    delete process.env[TEMPLATE_VARIABLE];
    await rm(folder, { recursive: true, force: true });
  };
}

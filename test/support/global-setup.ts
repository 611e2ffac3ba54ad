// Runs once before the suite: builds a migrated PGlite data folder and dumps it
// to a file, so every test database starts from it in a few hundred milliseconds
// instead of running initdb and every migration again.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase } from '../../src/db/database.ts';
import { migrate } from '../../src/db/migrate.ts';

export default async function setup(): Promise<() => Promise<void>> {
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

// The embedded database's folder and files are the owner's alone (0700/0600),
// whatever the umask, including files PostgreSQL writes while it runs and files
// left world-readable by an older version.
import { chmod, mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openConfiguredDatabase } from '../../src/runtime.ts';
import { testConfig } from '../support/app.ts';

async function modes(folder: string): Promise<{ files: Set<string>; folders: Set<string> }> {
  const files = new Set<string>();
  const folders = new Set<string>([((await stat(folder)).mode & 0o777).toString(8)]);
  for (const entry of await readdir(folder, { recursive: true, withFileTypes: true })) {
    const mode = ((await stat(join(entry.parentPath, entry.name))).mode & 0o777).toString(8);
    (entry.isDirectory() ? folders : files).add(mode);
  }
  return { files, folders };
}

describe('the embedded data folder', () => {
  let parent: string;
  let previousUmask: number;

  beforeEach(async () => {
    parent = await mkdtemp(join(tmpdir(), 'paygate-permissions-'));
    previousUmask = process.umask(0o000); // the most permissive umask there is
  });
  afterEach(async () => {
    process.umask(previousUmask);
    await rm(parent, { recursive: true, force: true });
  });

  it('is created 0700 with every file 0600, and stays so as the database writes', async () => {
    const dataDir = join(parent, 'data');
    const handle = await openConfiguredDatabase(testConfig({ dataDir }));
    try {
      // Enough writes for PostgreSQL to create new relation files and WAL while running.
      await sql`create table permission_probe (id int, filler text)`.execute(handle.db);
      await sql`insert into permission_probe select n, repeat('x', 200) from generate_series(1, 20000) n`.execute(
        handle.db,
      );
      await sql`checkpoint`.execute(handle.db);
      const running = await modes(dataDir);
      expect([...running.folders]).toEqual(['700']);
      expect([...running.files]).toEqual(['600']);
    } finally {
      await handle.close();
    }
    const stopped = await modes(dataDir);
    expect([...stopped.folders]).toEqual(['700']);
    expect([...stopped.files]).toEqual(['600']);
  });

  it('tightens a folder an older version left readable by everyone', async () => {
    const dataDir = join(parent, 'data');
    const first = await openConfiguredDatabase(testConfig({ dataDir }));
    await first.close();
    await chmod(dataDir, 0o777);
    await chmod(join(dataDir, 'pglite'), 0o777);
    await writeFile(join(dataDir, 'pglite', 'left-behind'), 'secret', { mode: 0o666 });
    await chmod(join(dataDir, 'pglite', 'left-behind'), 0o666);
    const second = await openConfiguredDatabase(testConfig({ dataDir }));
    await second.close();
    const after = await modes(dataDir);
    expect([...after.folders]).toEqual(['700']);
    expect([...after.files]).toEqual(['600']);
  });
});

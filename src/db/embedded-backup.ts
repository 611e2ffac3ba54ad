// Backup and restore of the embedded database (PGlite): a gzipped tarball of its
// PostgreSQL data folder. A backup may be taken from a running gateway's handle:
// it holds the database's only session meanwhile, so no transaction is half-way,
// and a checkpoint first writes every committed page to the files it archives.
// A restore writes a new folder, so no gateway may have it open (the folder lock).
import { link, mkdir, open, readdir, readFile, rm, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { sql } from 'kysely';
import { AppError, InvalidStateError } from '../errors.ts';
import { openDatabase, type DatabaseHandle } from './database.ts';
import { DataFolderLockedError, lockDataFolder } from './data-folder-lock.ts';
import { migrate } from './migrate.ts';

/** The embedded database's folder inside PAYGATE_DATA_DIR. */
const PGLITE_FOLDER = 'pglite';

/** Writes a dump of the open embedded database to `file` (new, mode 0600); returns its size in bytes. */
export async function backupEmbedded(database: DatabaseHandle, file: string): Promise<number> {
  const dump = database.dumpDataDir;
  if (dump === undefined)
    throw new InvalidStateError(
      'only the embedded database is backed up by paygate: use pg_dump for a PostgreSQL server',
    );
  const archive = await database.db.connection().execute(async (session) => {
    await sql`checkpoint`.execute(session);
    return dump('gzip');
  });
  const bytes = new Uint8Array(await archive.arrayBuffer());
  // Written aside, then linked into place (which never replaces a file): a backup cut short never looks complete.
  const partial = `${file}.${process.pid}.partial`;
  const handle = await open(partial, 'wx', 0o600);
  try {
    await handle.writeFile(bytes);
    await handle.sync();
    await handle.close();
    await link(partial, file).catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'EEXIST') throw new InvalidStateError(`${file} exists already: name a new file`);
      throw error;
    });
  } finally {
    await handle.close().catch(() => undefined);
    await unlink(partial).catch(() => undefined);
  }
  return bytes.length;
}

async function isEmptyFolder(folder: string): Promise<boolean> {
  try {
    return (await readdir(folder)).length === 0;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return true;
    throw error;
  }
}

/**
 * Restores a backup into `dataDir`'s embedded database folder, which must be empty unless
 * `force` (its database is then replaced), and applies this version's migrations to it.
 */
export async function restoreEmbedded(
  dataDir: string,
  file: string,
  options: { force: boolean },
): Promise<{ applied: string[] }> {
  const archive = await readFile(file).catch((error: NodeJS.ErrnoException) => {
    throw new AppError('invalid_request', `cannot read the backup ${file}: ${error.code ?? error.message}`);
  });
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  const lock = await lockDataFolder(dataDir).catch((error: unknown) => {
    if (error instanceof DataFolderLockedError) {
      throw new InvalidStateError(
        `a paygate process (pid ${error.pid}) has the data folder ${dataDir} open: stop the gateway before restoring`,
      );
    }
    throw error;
  });
  try {
    const folder = join(dataDir, PGLITE_FOLDER);
    if (!(await isEmptyFolder(folder))) {
      if (!options.force)
        throw new InvalidStateError(
          `${folder} holds a database already: restore into an empty PAYGATE_DATA_DIR, or give --force to replace it`,
        );
      await rm(folder, { recursive: true, force: true });
    }
    const handle = await openDatabase({ dataDir: folder, pgliteDump: new Blob([archive]) });
    try {
      return { applied: await migrate(handle) };
    } finally {
      await handle.close();
    }
  } finally {
    await lock.release();
  }
}

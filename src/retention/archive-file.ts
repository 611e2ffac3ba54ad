// One archive file: rows as gzip'd JSON Lines (one `row_to_json` line a row, as
// PostgreSQL renders it: exact timestamps and numbers). It is written under a
// temporary name, flushed to disk and renamed, and the folder is flushed too,
// so a file under its final name is whole and survives a power cut.
import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, open, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';

export interface ArchiveFileWritten {
  readonly rowCount: number;
  /** SHA-256 (hex) of the file's bytes, as stored. */
  readonly sha256: string;
}

/** Writes `pages` of JSON lines (without newlines) to `dir/fileName`, replacing any file of that name. */
export async function writeArchiveFile(
  dir: string,
  fileName: string,
  pages: AsyncIterable<readonly string[]>,
): Promise<ArchiveFileWritten> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const finalPath = join(dir, fileName);
  const partialPath = `${finalPath}.partial`;
  let rowCount = 0;
  const hash = createHash('sha256');
  async function* lines() {
    for await (const page of pages) {
      rowCount += page.length;
      if (page.length > 0) yield `${page.join('\n')}\n`;
    }
  }
  const hashing = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      hash.update(chunk);
      done(null, chunk);
    },
  });
  try {
    await pipeline(
      Readable.from(lines()),
      createGzip(),
      hashing,
      createWriteStream(partialPath, { mode: 0o600, flush: true }),
    );
    await rename(partialPath, finalPath);
  } catch (error) {
    await rm(partialPath, { force: true });
    throw error;
  }
  await flushFolder(dir);
  return { rowCount, sha256: hash.digest('hex') };
}

/** Removes an archive file (one whose rows were not removed after all); a missing file is no error. */
export async function removeArchiveFile(dir: string, fileName: string): Promise<void> {
  await rm(join(dir, fileName), { force: true });
  await rm(join(dir, `${fileName}.partial`), { force: true });
}

/** A rename is durable only once the folder's entry is on disk. */
async function flushFolder(dir: string): Promise<void> {
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

// One process at a time opens an embedded database's folder: PGlite is a
// single-process PostgreSQL, and two processes on one folder each keep their own
// buffers, so one's writes are silently lost (or the files corrupted).
//
// The lock is a file created with O_EXCL holding the owner's pid and, on Linux,
// its start time. A process that died without releasing it (kill -9, power cut)
// leaves a stale file, which the next start detects at once: no such pid, or a
// pid now used by another process (containers reuse small pids after a restart).
// A lease renewed on a timer (proper-lockfile's mtime) was not chosen: a crashed
// gateway would block the next start until the lease ran out, a stalled one would
// lose its lock while still writing, and the timer wakes an idle gateway.
import { randomUUID } from 'node:crypto';
import { link, open, readFile, rename, unlink } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { AppError } from '../errors.ts';

const LOCK_FILE = 'paygate.lock';
/** Folders this process holds: a lock file naming our own pid is otherwise taken as stale (a reused pid). */
const heldHere = new Set<string>();

interface LockOwner {
  readonly pid: number;
  /** The process's start time in clock ticks since boot (/proc/<pid>/stat), where there is /proc. */
  readonly started?: string | undefined;
}

export class DataFolderLockedError extends AppError {
  readonly pid: number;
  constructor(folder: string, pid: number) {
    super(
      'service_unavailable',
      `the data folder ${folder} is in use by another paygate process (pid ${pid}); ` +
        'stop it first, or run CLI commands while it runs (they go through it)',
    );
    this.pid = pid;
  }
}

export interface DataFolderLock {
  release(): Promise<void>;
}

function startTimeOf(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Field 22; the command name (field 2) may hold spaces, so count after its closing parenthesis.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return undefined;
  }
}

function isAlive(owner: LockOwner): boolean {
  // 0 and negative pids would signal process groups, not a process.
  if (!Number.isSafeInteger(owner.pid) || owner.pid <= 0 || owner.pid === process.pid) return false;
  try {
    process.kill(owner.pid, 0);
  } catch (error) {
    // EPERM: a live process of another user.
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  const started = startTimeOf(owner.pid);
  return owner.started === undefined || started === undefined || started === owner.started;
}

async function readOwner(path: string): Promise<LockOwner | undefined> {
  try {
    const parsed = JSON.parse(await readFile(path, 'utf8')) as Partial<LockOwner>;
    return typeof parsed.pid === 'number' ? { pid: parsed.pid, started: parsed.started } : undefined;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    // A lock file cut short by a crash while it was being written holds no live owner.
    return { pid: 0 };
  }
}

/** The pid of the live process holding `folder`, if any. */
export async function dataFolderHolder(folder: string): Promise<number | undefined> {
  const owner = await readOwner(join(folder, LOCK_FILE));
  return owner && isAlive(owner) ? owner.pid : undefined;
}

async function tryCreate(path: string, owner: LockOwner): Promise<boolean> {
  try {
    const file = await open(path, 'wx', 0o600);
    try {
      await file.writeFile(JSON.stringify(owner));
      await file.sync();
    } finally {
      await file.close();
    }
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  }
}

/**
 * Moves a stale lock aside. Renaming (atomic) rather than unlinking: when another process
 * replaced the stale file in between, what was moved is its live lock, which is put back.
 */
async function removeStale(path: string, stale: LockOwner): Promise<void> {
  const aside = `${path}.${process.pid}.${randomUUID()}`;
  try {
    await rename(path, aside);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw error;
  }
  const moved = await readOwner(aside);
  if (moved && moved.pid !== stale.pid && isAlive(moved)) await link(aside, path).catch(() => undefined);
  await unlink(aside).catch(() => undefined);
}

/** Takes `folder` for this process, or throws DataFolderLockedError naming the pid that has it. */
export async function lockDataFolder(folder: string): Promise<DataFolderLock> {
  const path = join(folder, LOCK_FILE);
  const me: LockOwner = { pid: process.pid, started: startTimeOf(process.pid) };
  if (heldHere.has(path)) throw new DataFolderLockedError(folder, process.pid);
  for (let attempt = 0; attempt < 5; attempt += 1) {
    if (await tryCreate(path, me)) {
      heldHere.add(path);
      let released = false;
      return {
        async release() {
          if (released) return;
          released = true;
          heldHere.delete(path);
          const owner = await readOwner(path);
          if (owner?.pid === me.pid) await unlink(path).catch(() => undefined);
        },
      };
    }
    const owner = await readOwner(path);
    if (owner && isAlive(owner)) throw new DataFolderLockedError(folder, owner.pid);
    if (owner) await removeStale(path, owner);
  }
  throw new AppError(
    'service_unavailable',
    `could not lock the data folder ${folder}: its lock file ${path} keeps changing`,
  );
}

// The embedded data folder's lock (db/data-folder-lock.ts) with real processes:
// a live holder keeps it and is named; a dead one's lock, a reused pid's and a
// torn lock file are taken over at once; release removes only one's own lock.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { dataFolderHolder, DataFolderLockedError, lockDataFolder } from '../../src/db/data-folder-lock.ts';

const LOCK = 'paygate.lock';

/** A live process that is not this one, and its start time as the lock records it. */
async function otherProcess(): Promise<{ child: ChildProcess; started: string }> {
  const child = spawn('sleep', ['600'], { stdio: 'ignore' });
  await new Promise((resolve, reject) => child.once('spawn', resolve).once('error', reject));
  const stat = await readFile(`/proc/${child.pid}/stat`, 'utf8');
  return { child, started: stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]! };
}

async function exitedPid(): Promise<number> {
  const child = spawn('true', { stdio: 'ignore' });
  await new Promise((resolve) => child.once('exit', resolve));
  return child.pid!;
}

describe('the data folder lock', () => {
  let folder: string;
  const children: ChildProcess[] = [];
  beforeEach(async () => {
    folder = await mkdtemp(join(tmpdir(), 'paygate-lockfile-'));
  });
  afterEach(async () => {
    for (const child of children.splice(0)) child.kill('SIGKILL');
    await rm(folder, { recursive: true, force: true });
  });

  it('is taken, named as held, refused to a second taker in the same process, and gone once released', async () => {
    const lock = await lockDataFolder(folder);
    expect(JSON.parse(await readFile(join(folder, LOCK), 'utf8'))).toMatchObject({ pid: process.pid });
    expect((await stat(join(folder, LOCK))).mode & 0o777).toBe(0o600);
    await expect(lockDataFolder(folder)).rejects.toBeInstanceOf(DataFolderLockedError);
    await lock.release();
    await expect(stat(join(folder, LOCK))).rejects.toMatchObject({ code: 'ENOENT' });
    await (await lockDataFolder(folder)).release();
  });

  it('a live holder keeps it, and the error names its pid', async () => {
    const holder = await otherProcess();
    children.push(holder.child);
    await writeFile(join(folder, LOCK), JSON.stringify({ pid: holder.child.pid, started: holder.started }));
    const error = await lockDataFolder(folder).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(DataFolderLockedError);
    expect((error as Error).message).toContain(`(pid ${holder.child.pid})`);
    expect(await dataFolderHolder(folder)).toBe(holder.child.pid);
    // Untouched.
    expect(JSON.parse(await readFile(join(folder, LOCK), 'utf8'))).toEqual({
      pid: holder.child.pid,
      started: holder.started,
    });
  });

  it('a dead holder, a pid now used by another process, or a torn lock file does not block', async () => {
    const reused = await otherProcess();
    children.push(reused.child);
    const stale = [
      JSON.stringify({ pid: await exitedPid() }),
      JSON.stringify({ pid: reused.child.pid, started: `${Number(reused.started) - 1}` }),
      '{"pid": 12',
    ];
    for (const content of stale) {
      await writeFile(join(folder, LOCK), content);
      expect(await dataFolderHolder(folder)).toBeUndefined();
      const lock = await lockDataFolder(folder);
      expect(JSON.parse(await readFile(join(folder, LOCK), 'utf8'))).toMatchObject({ pid: process.pid });
      await lock.release();
    }
  });

  it('release leaves a lock that is not its own', async () => {
    const lock = await lockDataFolder(folder);
    const other = await otherProcess();
    children.push(other.child);
    // As if an operator had deleted ours and another process had taken the folder since.
    await writeFile(join(folder, LOCK), JSON.stringify({ pid: other.child.pid, started: other.started }));
    await lock.release();
    expect(await dataFolderHolder(folder)).toBe(other.child.pid);
  });
});

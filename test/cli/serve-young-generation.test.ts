// `paygate serve` runs with a small young generation (bin/paygate.js): the
// process replaces itself, keeping its pid, with one started with
// --max-semi-space-size, so an idle gateway stays within its memory target.
// An operator's own setting, or PAYGATE_SEMI_SPACE_MB=0, wins.
import { once } from 'node:events';
import { readFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startPaygate } from '../support/cli.ts';

async function commandLine(pid: number): Promise<string[]> {
  return (await readFile(`/proc/${pid}/cmdline`, 'utf8')).split('\0').filter(Boolean);
}

describe('paygate serve and the young generation', () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0)) await cleanup();
  });

  async function serve(env: Record<string, string | undefined>) {
    const dataDir = await mkdtemp(join(tmpdir(), 'paygate-v8-'));
    const started = await startPaygate(['--port', '0'], { PAYGATE_DATA_DIR: dataDir, ...env });
    cleanups.push(async () => {
      const exited = once(started.child, 'exit');
      started.child.kill('SIGKILL');
      await exited;
      await rm(dataDir, { recursive: true, force: true });
    });
    return started;
  }

  it('the serving process is the one spawned (same pid) and runs with --max-semi-space-size=4', async () => {
    const { child } = await serve({});
    expect(await commandLine(child.pid!)).toContain('--max-semi-space-size=4');
  });

  it('PAYGATE_SEMI_SPACE_MB sets it, and 0 leaves V8 its own choice', async () => {
    const eight = await serve({ PAYGATE_SEMI_SPACE_MB: '8' });
    expect(await commandLine(eight.child.pid!)).toContain('--max-semi-space-size=8');
    const own = await serve({ PAYGATE_SEMI_SPACE_MB: '0' });
    expect((await commandLine(own.child.pid!)).some((argument) => argument.startsWith('--max-semi-space-size'))).toBe(
      false,
    );
  });
});

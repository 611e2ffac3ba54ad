// The `paygate` process itself, once per command: bin/paygate.js starts on the
// pinned runtime, reaches the command, and turns its result into the exit code
// and output. What the commands do is tested in-process (runPaygateInProcess);
// here only what a child process adds. No bound on time decides a result: a
// slow start under load only makes these take longer.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { commands } from '../../src/cli/commands.ts';
import { runPaygate } from '../support/cli.ts';

describe('the paygate process', () => {
  let dataDir: string;
  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'paygate-process-'));
  });
  afterAll(async () => {
    await rm(dataDir, { recursive: true, force: true });
  });

  it.concurrent.each(commands.map((command) => [command.words.join(' '), command] as const))(
    '`paygate %s` with an unknown option exits 2 with the message and its usage',
    async (_, command) => {
      const result = await runPaygate([...command.words, '--no-such-option'], { PAYGATE_DATA_DIR: dataDir });
      expect(result.code, result.stderr).toBe(2);
      expect(result.stderr).toContain("Unknown option '--no-such-option'");
      expect(result.stderr).toContain(`Usage: ${command.usage}`);
      expect(result.stdout).toBe('');
    },
  );

  it.concurrent(
    '`paygate help` exits 0 listing every command; a bare `paygate` exits 2 with the same list',
    async () => {
      const help = await runPaygate(['help'], {});
      expect(help.code, help.stderr).toBe(0);
      for (const command of commands) expect(help.stdout).toContain(command.summary);
      const bare = await runPaygate([], {});
      expect(bare.code).toBe(2);
      expect(bare.stdout).toContain('Usage: paygate <command>');
    },
  );

  it.concurrent('`paygate migrate` exits 0 and prints what it applied', async () => {
    const folder = await mkdtemp(join(tmpdir(), 'paygate-process-migrate-'));
    try {
      const result = await runPaygate(['migrate'], { PAYGATE_DATA_DIR: folder });
      expect(result.code, result.stderr).toBe(0);
      expect(result.stdout).toContain('applied 0001_foundation');
      expect(result.stdout).toContain('migrations up to date (pglite)');
    } finally {
      await rm(folder, { recursive: true, force: true });
    }
  });

  it.concurrent('a bad environment variable exits 2 naming it, with no stack trace', async () => {
    const result = await runPaygate(['migrate'], { PAYGATE_DATA_DIR: dataDir, PAYGATE_RATE_LIMIT_PER_MINUTE: 'lots' });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('PAYGATE_RATE_LIMIT_PER_MINUTE must be a whole number');
    expect(result.stderr).not.toMatch(/\n\s+at /);
  });
});

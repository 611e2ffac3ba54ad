// A command that cannot start says why in one line naming the setting or path to
// fix, with no stack trace (LOG_LEVEL=debug adds one), and exits 2 for a wrong
// configuration, 1 for an environment that failed (a server unreachable, a port taken).
import { execFileSync } from 'node:child_process';
import { mkdtemp, rm, rmdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runPaygate, type CliResult } from '../support/cli.ts';
import { TEST_DATABASE_URL } from '../support/databases.ts';
import { freePort } from '../support/free-port.ts';

const isRoot = process.getuid?.() === 0;

function expectOneLine(result: CliResult, code: number, ...mentions: string[]): void {
  expect(result.code, result.stderr).toBe(code);
  const lines = result.stderr.trim().split('\n');
  expect(lines, result.stderr).toHaveLength(1);
  expect(result.stderr).not.toMatch(/^\s+at /m);
  for (const mention of mentions) expect(result.stderr).toContain(mention);
}

describe('clean start errors', () => {
  let dataDir: string;
  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'paygate-start-errors-'));
  });
  afterAll(() => rm(dataDir, { recursive: true, force: true }));

  it('a DATABASE_URL whose host does not resolve names DATABASE_URL and exits 2', async () => {
    expectOneLine(
      await runPaygate(['migrate'], {
        PAYGATE_DATA_DIR: dataDir,
        DATABASE_URL: 'postgres://postgres@paygate-no-such-host.invalid:5432/x',
      }),
      2,
      'DATABASE_URL',
      'paygate-no-such-host.invalid',
    );
  });

  it('a DATABASE_URL with nothing listening names DATABASE_URL and exits 1', async () => {
    const port = await freePort();
    expectOneLine(
      await runPaygate(['migrate'], {
        PAYGATE_DATA_DIR: dataDir,
        DATABASE_URL: `postgres://postgres@127.0.0.1:${port}/x`,
      }),
      1,
      'DATABASE_URL',
      `127.0.0.1:${port}`,
    );
  });

  it('a malformed DATABASE_URL names it and exits 2', async () => {
    expectOneLine(
      await runPaygate(['migrate'], { PAYGATE_DATA_DIR: dataDir, DATABASE_URL: 'postgres//nowhere' }),
      2,
      'DATABASE_URL',
    );
  });

  it.runIf(TEST_DATABASE_URL)(
    'DATABASE_URL credentials the server refuses (unknown user) name DATABASE_URL, not the password, and exit 2',
    async () => {
      const url = new URL(TEST_DATABASE_URL!);
      url.username = 'paygate_no_such_role';
      url.password = 'secret-password';
      const result = await runPaygate(['migrate'], { PAYGATE_DATA_DIR: dataDir, DATABASE_URL: url.toString() });
      expectOneLine(result, 2, 'DATABASE_URL', 'paygate_no_such_role');
      expect(result.stderr).not.toContain('secret-password');
    },
  );

  it.runIf(TEST_DATABASE_URL)(
    'a DATABASE_URL naming a database that does not exist names DATABASE_URL and exits 2',
    async () => {
      const url = new URL(TEST_DATABASE_URL!);
      url.pathname = '/paygate_no_such_database';
      expectOneLine(
        await runPaygate(['migrate'], { PAYGATE_DATA_DIR: dataDir, DATABASE_URL: url.toString() }),
        2,
        'DATABASE_URL',
        'paygate_no_such_database',
      );
    },
  );

  it('a PAYGATE_DATA_DIR below a file names PAYGATE_DATA_DIR and the path, and exits 2', async () => {
    const file = join(dataDir, 'a-file');
    await writeFile(file, 'not a folder');
    expectOneLine(await runPaygate(['migrate'], { PAYGATE_DATA_DIR: join(file, 'data') }), 2, 'PAYGATE_DATA_DIR', file);
  });

  it.runIf(isRoot)(
    'a PAYGATE_DATA_DIR on a read-only file system names PAYGATE_DATA_DIR and the path, and exits 2',
    async () => {
      const mountPoint = await mkdtemp(join(tmpdir(), 'paygate-ro-'));
      execFileSync('mount', ['-t', 'tmpfs', '-o', 'ro,size=1m', 'tmpfs', mountPoint]);
      try {
        expectOneLine(
          await runPaygate(['migrate'], { PAYGATE_DATA_DIR: join(mountPoint, 'data') }),
          2,
          'PAYGATE_DATA_DIR',
          mountPoint,
        );
      } finally {
        execFileSync('umount', [mountPoint]);
        await rmdir(mountPoint);
      }
    },
  );

  it('a bad PAYGATE_ROOT_KEY names it and exits 2', async () => {
    expectOneLine(
      await runPaygate(['migrate'], { PAYGATE_DATA_DIR: dataDir, PAYGATE_ROOT_KEY: 'too-short' }),
      2,
      'PAYGATE_ROOT_KEY',
    );
  });

  it('LOG_LEVEL=debug adds the stack trace', async () => {
    const port = await freePort();
    const result = await runPaygate(['migrate'], {
      PAYGATE_DATA_DIR: dataDir,
      DATABASE_URL: `postgres://postgres@127.0.0.1:${port}/x`,
      LOG_LEVEL: 'debug',
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('DATABASE_URL');
    expect(result.stderr).toMatch(/^\s+at /m);
  });
});

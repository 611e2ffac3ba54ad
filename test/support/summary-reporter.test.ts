// The closing line must count every kind of failure. Each fixture file is run
// by a real vitest child process with only the summary reporter, and its
// closing line and exit code are read.
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);
const root = fileURLToPath(new URL('../..', import.meta.url));
const vitestBin = fileURLToPath(new URL('../../node_modules/vitest/vitest.mjs', import.meta.url));

async function runFixture(name: string): Promise<{ line: string; exitCode: number; output: string }> {
  return runVitest([
    '--config',
    'test/support/reporter-fixtures/vitest.config.ts',
    `test/support/reporter-fixtures/${name}.fixture.ts`,
  ]);
}

async function runVitest(vitestArgs: string[]): Promise<{ line: string; exitCode: number; output: string }> {
  const args = [vitestBin, 'run', ...vitestArgs];
  let output: string;
  let exitCode = 0;
  try {
    const result = await run(process.execPath, args, { cwd: root, env: { ...process.env, CI: '1' } });
    output = result.stdout + result.stderr;
  } catch (error) {
    const failure = error as { code: number; stdout: string; stderr: string };
    exitCode = failure.code;
    output = failure.stdout + failure.stderr;
  }
  const line =
    output
      .split('\n')
      .filter((candidate) => candidate.startsWith('Tests: '))
      .at(-1) ?? '(no closing line)';
  return { line, exitCode, output };
}

describe('the closing summary line', () => {
  it.each([
    ['passing', 'Tests: 2 passed, 0 failed, 1 skipped', 0],
    ['failing-test', 'Tests: 1 passed, 1 failed, 0 skipped', 1],
    // The two tests of a suite whose beforeAll threw are skipped; the hook is the failure.
    ['before-all-throws', 'Tests: 0 passed, 1 failed, 2 skipped', 1],
    ['after-all-throws', 'Tests: 1 passed, 1 failed, 0 skipped', 1],
    ['import-error', 'Tests: 0 passed, 1 failed, 0 skipped', 1],
    ['unhandled-rejection', 'Tests: 1 passed, 1 failed, 0 skipped', 1],
  ] as const)('%s: %s, exit code %i', async (fixture, expectedLine, expectedExitCode) => {
    const { line, exitCode, output } = await runFixture(fixture);
    expect(line, output).toBe(expectedLine);
    expect(exitCode).toBe(expectedExitCode);
  });

  it('names each failure outside a test case on its own line', async () => {
    const { output } = await runFixture('before-all-throws');
    expect(output).toContain(
      'failed outside a test: test/support/reporter-fixtures/before-all-throws.fixture.ts > a suite whose set-up fails: set-up failed',
    );
  });

  it('counts the tests of every project of the run, as npm test runs unit, integration and browser', async () => {
    const { line, exitCode, output } = await runVitest([
      '--config',
      'test/support/reporter-fixtures/vitest.projects.config.ts',
    ]);
    expect(line, output).toBe('Tests: 3 passed, 1 failed, 1 skipped');
    expect(exitCode).toBe(1);
  });
});

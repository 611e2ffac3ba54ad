// The real `paygate` process: help without any configuration, and the completion
// script it prints, sourced in a real bash and asked what it completes.
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { existsSync } from 'node:fs';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { commands } from '../../src/cli/commands.ts';
import { runPaygate } from '../support/cli.ts';

const run = promisify(execFile);

it('paygate key create --help answers from a real process with no configuration at all', async () => {
  const help = await runPaygate(['key', 'create', '--help'], {
    PAYGATE_ROOT_KEY: undefined,
    DATABASE_URL: 'not a url',
    PAYGATE_DATA_DIR: '/nonexistent/paygate',
  });
  expect(help).toMatchObject({ code: 0, stderr: '' });
  expect(help.stdout).toMatch(/^Usage: paygate key create --shop SHOP_ID --scopes /);
  expect(help.stdout).toContain('Examples:\n  paygate key create --shop');
});

describe('paygate completion bash', () => {
  let folder: string;
  let script: string;
  beforeAll(async () => {
    folder = await mkdtemp(join(tmpdir(), 'paygate-completion-'));
    const printed = await runPaygate(['completion', 'bash'], {});
    expect(printed.code, printed.stderr).toBe(0);
    script = join(folder, 'paygate.bash');
    await writeFile(script, printed.stdout);
  });
  afterAll(async () => {
    await rm(folder, { recursive: true, force: true });
  });

  /** What bash offers for each command line (the last word is the one being completed), sorted. */
  async function completions(lines: readonly (readonly string[])[]): Promise<string[][]> {
    const calls = lines.map((words) => `offer paygate ${words.map((word) => `'${word}'`).join(' ')}`);
    const program = [
      `source '${script}'`,
      'offer() { COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMPREPLY=(); _paygate; printf "%s\\n" "${COMPREPLY[*]}"; }',
      ...calls,
    ].join('\n');
    const { stdout } = await run('bash', ['--norc', '--noprofile', '-c', program]);
    return stdout
      .split('\n')
      .slice(0, lines.length)
      .map((line) => (line === '' ? [] : line.split(' ').sort()));
  }

  it('registers itself for paygate', async () => {
    const { stdout } = await run('bash', ['--norc', '--noprofile', '-c', `source '${script}'; complete -p paygate`]);
    expect(stdout.trim()).toBe('complete -F _paygate paygate');
  });

  it('completes command words, help <command>, option values and the shells', async () => {
    const topLevel = [...new Set(commands.map((entry) => entry.words[0]!)), 'help'].sort();
    expect(
      await completions([
        [''],
        ['cr'],
        ['crypto', 'sw'],
        ['shop', 'methods', ''],
        ['help', 'key', 'c'],
        ['serve', '--role', ''],
        ['withdrawal', 'list', '--status', 'a'],
        ['completion', ''],
        ['key', 'revoke', '--h'],
        ['nonsense', ''],
      ]),
    ).toEqual([
      topLevel,
      ['crypto'],
      ['sweeps'],
      ['list', 'set'],
      ['create'],
      ['all', 'api', 'worker'],
      ['awaiting_approval'],
      ['bash', 'zsh'],
      ['--help'],
      [],
    ]);
  });

  it("completes every command's options from the registry", async () => {
    const offered = await completions(commands.map((entry) => [...entry.words, '--']));
    expect(offered).toEqual(commands.map((entry) => [...entry.options.map((option) => option.flag), '--help'].sort()));
  });

  it('skips option values while walking to the command', async () => {
    expect(await completions([['shop', 'methods', 'set', '--shop', 'shop_1', '--method', 's']])).toEqual([
      ['sberpay', 'sbp'],
    ]);
  });
});

// zsh's compadd exists only inside a completion widget: outside one, a function of that
// name stands in for it and prints what it was given (zsh itself filters by the prefix).
const ZSH = ['/usr/bin/zsh', '/bin/zsh'].find((path) => existsSync(path));

describe.skipIf(ZSH === undefined)('paygate completion zsh', () => {
  it('offers the same words, sourced or autoloaded from $fpath', async () => {
    const folder = await mkdtemp(join(tmpdir(), 'paygate-zsh-'));
    try {
      const printed = await runPaygate(['completion', 'zsh'], {});
      expect(printed.code, printed.stderr).toBe(0);
      expect(printed.stdout.split('\n')[0]).toBe('#compdef paygate');
      await writeFile(join(folder, '_paygate'), printed.stdout);
      const offer = 'offer() { words=("$@"); CURRENT=$#; _paygate; }';
      const standIn = 'compadd() { shift; print -r -- "${(o)@}"; }; compdef() { print -r -- "compdef $*"; }';
      const sourced = await run(ZSH!, [
        '-f',
        '-c',
        `${standIn}; source '${folder}/_paygate'; ${offer}; offer paygate shop methods ''; offer paygate serve --role ''`,
      ]);
      expect(sourced.stdout.split('\n')).toEqual(['compdef _paygate paygate', 'list set', 'all api worker', '']);
      const autoloaded = await run(ZSH!, [
        '-f',
        '-c',
        `${standIn}; fpath=('${folder}' $fpath); autoload -Uz _paygate; ${offer}; offer paygate completion ''`,
      ]);
      expect(autoloaded.stdout).toBe('bash zsh\n');
    } finally {
      await rm(folder, { recursive: true, force: true });
    }
  });
});

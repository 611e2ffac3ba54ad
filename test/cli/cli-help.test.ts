// Help on every command and group, the "did you mean" of an unknown command, --json on
// every listing command, and the options each help names being the ones its command
// parses. In-process through runCli with a CliIo that captures lines; the real process
// is test/cli/cli-completion.test.ts's.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CliIo } from '../../src/cli/cli-command.ts';
import { commands } from '../../src/cli/commands.ts';
import { runCli } from '../../src/cli/main.ts';
import { table } from '../../src/cli/table.ts';
import { CUSTODY_PAGE_MAX } from '../../src/crypto/receiving/custody-service.ts';
import { WITHDRAWAL_LIST_LIMIT_MAX } from '../../src/crypto/withdrawals/withdrawal-service.ts';
import { WITHDRAWAL_STATUSES } from '../../src/crypto/withdrawals/withdrawals-tables.ts';
import { API_KEY_SCOPES } from '../../src/http/api-scopes.ts';
import { SUSPENSE_LIST_LIMIT_MAX } from '../../src/payments/suspense-service.ts';
import { backends, createServerDatabase, dropServerDatabase } from '../support/databases.ts';
import { TEST_ROOT_KEY } from '../support/keyring.ts';

interface Run {
  readonly code: number;
  readonly out: string;
  readonly err: string;
}

async function cli(argv: string[], env: Record<string, string | undefined>): Promise<Run> {
  const out: string[] = [];
  const err: string[] = [];
  const io: CliIo = { env, out: (line) => out.push(line), err: (line) => err.push(line) };
  const code = await runCli(argv, io);
  return { code, out: out.join('\n'), err: err.join('\n') };
}

// A configuration that cannot load: help that loaded it would fail.
const BROKEN_ENV = { DATABASE_URL: 'not a url', PORT: 'not a port' };

describe('paygate help', () => {
  it.each(commands.map((entry) => [entry.words.join(' '), entry] as const))(
    '"%s --help" prints its usage, options and examples, and exits 0 without configuration',
    async (_name, entry) => {
      const viaFlag = await cli([...entry.words, '--help'], BROKEN_ENV);
      expect(viaFlag).toMatchObject({ code: 0, err: '' });
      expect(viaFlag.out.split('\n')[0]).toBe(`Usage: ${entry.usage}`);
      expect(viaFlag.out).toContain(entry.summary);
      for (const option of entry.options)
        expect(viaFlag.out).toMatch(new RegExp(`^  ${option.flag}\\b.*  ${escape(option.description)}$`, 'm'));
      expect(viaFlag.out).toMatch(/^ {2}-h, --help +show this help$/m);
      expect(entry.examples.length).toBeGreaterThanOrEqual(1);
      expect(entry.examples.length).toBeLessThanOrEqual(3);
      for (const example of entry.examples)
        expect(
          example.startsWith(`paygate ${entry.words.join(' ')}`) ||
            example.includes(` paygate ${entry.words.join(' ')}`),
        ).toBe(true);
      expect(viaFlag.out).toContain(`Examples:\n${entry.examples.map((example) => `  ${example}`).join('\n')}`);
      // The same through -h, after other arguments, and through `paygate help <command>`.
      expect(await cli([...entry.words, '--json', '-h'], BROKEN_ENV)).toEqual(viaFlag);
      expect(await cli(['help', ...entry.words], BROKEN_ENV)).toEqual(viaFlag);
    },
  );

  it.each(commands.map((entry) => [entry.words.join(' '), entry] as const))(
    '"%s" parses every option its help names',
    async (_name, entry) => {
      const dataDir = await mkdtemp(join(tmpdir(), 'paygate-help-'));
      try {
        const env = { PAYGATE_DATA_DIR: dataDir, PAYGATE_ROOT_KEY: TEST_ROOT_KEY, LOG_LEVEL: 'silent' };
        for (const option of entry.options) {
          // A value option without its value, a switch with one: both refused by the parser
          // before the command does anything, and neither as an unknown option.
          const run = await cli([...entry.words, option.value ? option.flag : `${option.flag}=x`], env);
          expect(run.code, `${option.flag}: ${run.err}`).toBe(2);
          expect(run.err).not.toContain('Unknown option');
          expect(run.err).toContain(option.flag);
        }
        const unknown = await cli([...entry.words, '--no-such-option'], env);
        expect(unknown.code).toBe(2);
        expect(unknown.err).toContain("Unknown option '--no-such-option'");
        expect(unknown.err).toContain(`Usage: ${entry.usage}`);
      } finally {
        await rm(dataDir, { recursive: true, force: true });
      }
    },
  );

  it('paygate --help, -h and help list every command and say how to get a command’s help', async () => {
    const help = await cli(['--help'], BROKEN_ENV);
    expect(help.code).toBe(0);
    for (const entry of commands)
      expect(help.out).toMatch(new RegExp(`^  ${entry.words.join(' ')} +${escape(entry.summary)}$`, 'm'));
    expect(help.out).toContain('paygate <command> --help');
    expect(help.out).toContain('paygate completion bash');
    expect(await cli(['-h'], BROKEN_ENV)).toEqual(help);
    expect(await cli(['help'], BROKEN_ENV)).toEqual(help);
    // No command at all: the same list, as a usage error.
    expect(await cli([], BROKEN_ENV)).toEqual({ ...help, code: 2 });
  });

  it('a group lists its commands: with --help or help exit 0, alone exit 2', async () => {
    const shop = await cli(['shop', '--help'], BROKEN_ENV);
    expect(shop.code).toBe(0);
    expect(shop.out.split('\n')[0]).toBe('Usage: paygate shop <command> [options]');
    const listed = [...shop.out.matchAll(/^ {2}(shop [a-z -]+?) {2,}/gm)].map((match) => match[1]);
    expect(listed).toEqual(commands.filter((entry) => entry.words[0] === 'shop').map((entry) => entry.words.join(' ')));
    expect(await cli(['help', 'shop'], BROKEN_ENV)).toEqual(shop);

    const sweeps = await cli(['crypto', 'sweeps'], BROKEN_ENV);
    expect(sweeps.code).toBe(2);
    expect(sweeps.out).toBe('');
    expect(sweeps.err).toContain('crypto sweeps list');
    expect(sweeps.err).toContain('crypto sweeps retry');
    expect(sweeps.err).not.toContain('crypto addresses');
  });

  it('an unknown command is refused with exit 2, suggesting the nearest command', async () => {
    const typo = await cli(['merchant', 'craete', '--name', 'x'], BROKEN_ENV);
    expect(typo).toMatchObject({ code: 2, out: '' });
    expect(typo.err).toContain('paygate: unknown command "merchant craete"');
    expect(typo.err).toContain('Did you mean "paygate merchant create"?');

    const deeper = await cli(['shop', 'methds', 'list', '--shop', 'shop_x'], BROKEN_ENV);
    expect(deeper.code).toBe(2);
    expect(deeper.err).toContain('Did you mean "paygate shop methods list"?');
    expect(deeper.err).toContain('Usage: paygate shop <command>');

    const helpTypo = await cli(['help', 'widthdrawal', 'list'], BROKEN_ENV);
    expect(helpTypo.code).toBe(2);
    expect(helpTypo.err).toContain('Did you mean "paygate withdrawal list"?');

    const nothingNear = await cli(['frobnicate'], BROKEN_ENV);
    expect(nothingNear.code).toBe(2);
    expect(nothingNear.err).not.toContain('Did you mean');
    expect(nothingNear.err).toContain('Run "paygate --help" for the commands.');
  });

  it('the registry states the domain’s own lists and bounds', async () => {
    const help = async (...words: string[]) => (await cli([...words, '--help'], BROKEN_ENV)).out;
    expect(await help('key', 'create')).toContain(`--scopes ${API_KEY_SCOPES.join(',')}`);
    expect(await help('withdrawal', 'list')).toContain(`only those in STATUS: ${WITHDRAWAL_STATUSES.join(', ')}`);
    expect(await help('withdrawal', 'list')).toContain(`1..${WITHDRAWAL_LIST_LIMIT_MAX} (default 100)`);
    expect(await help('payments', 'suspense', 'list')).toContain(`1..${SUSPENSE_LIST_LIMIT_MAX} (default 100)`);
    expect(await help('crypto', 'addresses')).toContain(`1..${CUSTODY_PAGE_MAX} (default 100)`);
  });
});

describe('the table formatter', () => {
  it('aligns columns under their headers, amounts to the right, with no trailing spaces', () => {
    const lines = table(
      [
        { id: 'a', amount: '5.00', note: '' },
        { id: 'longer-id', amount: '1500.50', note: 'x' },
      ],
      [
        { header: 'ID', value: (row) => row.id },
        { header: 'AMOUNT', value: (row) => row.amount, align: 'right' },
        { header: 'NOTE', value: (row) => row.note },
      ],
    );
    expect(lines).toEqual(['ID          AMOUNT  NOTE', 'a             5.00', 'longer-id  1500.50  x']);
  });
});

describe.each(backends)('listing commands on %s', (backend) => {
  let env: Record<string, string | undefined>;
  let dataDir: string;
  let databaseUrl: string | undefined;
  let shopId: string;
  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'paygate-lists-'));
    databaseUrl = backend === 'postgres' ? await createServerDatabase() : undefined;
    env = {
      PAYGATE_DATA_DIR: dataDir,
      DATABASE_URL: databaseUrl,
      PAYGATE_ROOT_KEY: TEST_ROOT_KEY,
      LOG_LEVEL: 'silent',
      PAYGATE_TRON_HOT_WALLET_CEILING_USDT: '1000',
    };
    const created = await cli(
      ['merchant', 'create', '--name', 'Lists', '--email', 'lists@example.test', '--json'],
      env,
    );
    expect(created.code, created.err).toBe(0);
    shopId = (JSON.parse(created.out) as { shop_id: string }).shop_id;
  });
  afterAll(async () => {
    await rm(dataDir, { recursive: true, force: true });
    if (databaseUrl) await dropServerDatabase(databaseUrl);
  });

  /** The arguments a listing needs besides --json; a listing missing here runs with none. */
  const argumentsOf = (words: string): string[] =>
    ({
      'shop methods list': ['--shop', shopId],
      'shop connector list': ['--shop', shopId],
      'crypto sweeps list': ['--address', 'TLa2f6VPqDgRE67v1736s7bJ8Ray5wYjU7'],
    })[words] ?? [];

  // `events list` reads a gateway's API, not the database: test/cli/trigger.test.ts runs it against one.
  const listings = commands.filter((entry) => entry.lists && entry.words.join(' ') !== 'events list');

  it('every listing command is marked as one and offers --json', () => {
    expect(listings.map((entry) => entry.words.join(' '))).toEqual(
      expect.arrayContaining([
        'shop methods list',
        'payments suspense list',
        'crypto addresses',
        'crypto sweeps list',
        'crypto deposits unconfirmed',
        'crypto keys list',
        'withdrawal list',
        'crypto hot-wallet',
      ]),
    );
    for (const entry of listings) expect(entry.options.map((option) => option.flag)).toContain('--json');
  });

  it.each(listings.map((entry) => [entry.words.join(' '), entry] as const))(
    '"%s --json" prints one JSON array',
    async (name, entry) => {
      const run = await cli([...entry.words, ...argumentsOf(name), '--json'], env);
      expect(run.code, run.err).toBe(0);
      expect(run.out.split('\n')).toHaveLength(1);
      expect(Array.isArray(JSON.parse(run.out))).toBe(true);
    },
  );

  it('without --json a listing is an aligned table with a header', async () => {
    const run = await cli(['shop', 'methods', 'list', '--shop', shopId], env);
    expect(run.code, run.err).toBe(0);
    const [header, ...rows] = run.out.split('\n');
    expect(header).toMatch(/^METHOD +ENABLED +MIN RUB +MAX RUB +PAYER FEE %$/);
    const methods = JSON.parse((await cli(['shop', 'methods', 'list', '--shop', shopId, '--json'], env)).out) as {
      method: string;
      enabled: boolean;
      max_amount: string;
    }[];
    expect(rows).toHaveLength(methods.length);
    methods.forEach((method, index) => {
      const row = rows[index]!;
      expect(row.startsWith(method.method)).toBe(true);
      // Each cell sits under its header: the flag starts where ENABLED does, the amount ends where MAX RUB does.
      expect(row.indexOf(method.enabled ? 'on' : 'off', method.method.length)).toBe(header!.indexOf('ENABLED'));
      expect(row.indexOf(method.max_amount) + method.max_amount.length).toBe(
        header!.indexOf('MAX RUB') + 'MAX RUB'.length,
      );
    });
    const empty = await cli(['withdrawal', 'list'], env);
    expect(empty).toMatchObject({ code: 0, out: 'no withdrawals' });
  });
});

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

// CLI commands beside a running gateway. On the embedded database the gateway holds
// the data folder alone (a second `serve` exits 1 naming its pid; a kill -9'd one
// does not block the next start) and CLI commands run inside it over its admin
// socket; on PostgreSQL they write directly and the gateway hears it. Either way a
// revoked key is refused at once and after a restart, and a merchant created beside
// the gateway persists. `backup` works while the gateway runs; `restore` refuses then.
import type { ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HDKey } from '@scure/bip32';
import { mnemonicToSeedSync } from '@scure/bip39';
import { request } from 'undici';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { TRON_ACCOUNT_PATH } from '../../src/crypto/keys/hd-keys.ts';
import { lastJsonLine, runPaygate, startPaygate } from '../support/cli.ts';
import { eventually } from '../support/eventually.ts';
import { backends, createServerDatabase, dropServerDatabase } from '../support/databases.ts';

const MNEMONIC = 'abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about';
const ACCOUNT_XPUB = HDKey.fromMasterSeed(mnemonicToSeedSync(MNEMONIC)).derive(TRON_ACCOUNT_PATH).publicExtendedKey;

/** A safety net only: each scenario starts several real processes, slow on a loaded machine. */
const SCENARIO_TIMEOUT_MS = 300_000;

type Running = Awaited<ReturnType<typeof startPaygate>>;

const running = new Set<ChildProcess>();

async function serve(env: Record<string, string | undefined>): Promise<Running> {
  const gateway = await startPaygate(['--port', '0'], env);
  running.add(gateway.child);
  return gateway;
}

async function stop(gateway: Running, signal: NodeJS.Signals = 'SIGTERM'): Promise<number | null> {
  const exited = new Promise<number | null>((resolve) => gateway.child.once('exit', (code) => resolve(code)));
  if (gateway.child.exitCode === null && gateway.child.signalCode === null) gateway.child.kill(signal);
  else return gateway.child.exitCode;
  const code = await exited;
  running.delete(gateway.child);
  return code;
}

async function accountStatus(url: string, apiKey: string): Promise<number> {
  const response = await request(`${url}/v1/account`, { headers: { authorization: `Bearer ${apiKey}` } });
  await response.body.dump();
  return response.statusCode;
}

async function createMerchant(
  env: Record<string, string | undefined>,
  name: string,
): Promise<{ shop_id: string; api_key: string }> {
  const created = await runPaygate(
    ['merchant', 'create', '--name', name, '--email', `${name.toLowerCase()}@example.test`, '--json'],
    env,
  );
  expect(created.stderr).toBe('');
  expect(created.code).toBe(0);
  return lastJsonLine(created.stdout);
}

afterEach(async () => {
  for (const child of running) child.kill('SIGKILL');
  running.clear();
});

describe.each(backends)('CLI beside a running gateway on %s', (backend) => {
  let dataDir: string;
  let databaseUrl: string | undefined;
  let env: Record<string, string | undefined>;
  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'paygate-writer-'));
    databaseUrl = backend === 'postgres' ? await createServerDatabase() : undefined;
    env = { PAYGATE_DATA_DIR: dataDir, DATABASE_URL: databaseUrl };
  });
  afterAll(async () => {
    await rm(dataDir, { recursive: true, force: true });
    if (databaseUrl) await dropServerDatabase(databaseUrl);
  });

  it(
    'a key revoked with the CLI gets 401 once the running gateway hears of it, and after a restart; a merchant created beside the gateway persists',
    async () => {
      const gateway = await serve(env);
      const merchant = await createMerchant(env, 'Beside');
      const keyCreated = await runPaygate(
        ['key', 'create', '--shop', merchant.shop_id, '--scopes', 'read', '--json'],
        env,
      );
      expect(keyCreated.code).toBe(0);
      const key = lastJsonLine<{ key_id: string; api_key: string }>(keyCreated.stdout);
      // Both keys are now in the gateway's key cache.
      expect(await accountStatus(gateway.url, merchant.api_key)).toBe(200);
      expect(await accountStatus(gateway.url, key.api_key)).toBe(200);

      const revoked = await runPaygate(['key', 'revoke', key.key_id], env);
      expect(revoked).toMatchObject({ code: 0, stdout: `revoked ${key.key_id}\n` });
      // The running gateway hears of the revocation (its cached key would otherwise answer for minutes).
      await eventually(
        () => accountStatus(gateway.url, key.api_key),
        (status) => status === 401,
      );
      expect(await accountStatus(gateway.url, merchant.api_key)).toBe(200);

      expect(await stop(gateway)).toBe(0);
      const restarted = await serve(env);
      expect(await accountStatus(restarted.url, key.api_key)).toBe(401);
      expect(await accountStatus(restarted.url, merchant.api_key)).toBe(200);
      expect(await stop(restarted)).toBe(0);
    },
    SCENARIO_TIMEOUT_MS,
  );

  it(
    'backup and restore name the PostgreSQL tools on a server, and otherwise need --to / --from',
    async () => {
      if (backend === 'postgres') {
        const file = join(dataDir, 'refused.tgz');
        const backup = await runPaygate(['backup', '--to', file], env);
        expect(backup).toMatchObject({ code: 1, stdout: '' });
        expect(backup.stderr).toContain('pg_dump');
        const restore = await runPaygate(['restore', '--from', file], env);
        expect(restore).toMatchObject({ code: 1, stdout: '' });
        expect(restore.stderr).toContain('pg_restore');
        await expect(stat(file)).rejects.toMatchObject({ code: 'ENOENT' });
      } else {
        const backup = await runPaygate(['backup'], env);
        expect(backup.code).toBe(2);
        expect(backup.stderr).toContain('--to FILE is required');
        const restore = await runPaygate(['restore'], env);
        expect(restore.code).toBe(2);
        expect(restore.stderr).toContain('--from FILE is required');
      }
    },
    SCENARIO_TIMEOUT_MS,
  );
});

describe('one process per embedded data folder', () => {
  let dataDir: string;
  let env: Record<string, string | undefined>;
  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'paygate-lock-'));
    env = { PAYGATE_DATA_DIR: dataDir };
  });
  afterAll(async () => {
    await rm(dataDir, { recursive: true, force: true });
  });

  it(
    'a second serve on the folder exits 1 naming the pid that holds it; a kill -9 leaves no lock that blocks the next start',
    async () => {
      const first = await serve(env);
      const second = await runPaygate(['serve', '--port', '0'], env);
      expect(second.code).toBe(1);
      expect(second.stderr.trim().split('\n')).toEqual([
        expect.stringContaining(`in use by another paygate process (pid ${first.child.pid})`),
      ]);
      // The first gateway still serves, and CLI commands still go through it, standard input too.
      await createMerchant(env, 'During');
      const imported = await runPaygate(['crypto', 'keys', 'import'], env, { stdin: `${MNEMONIC}\n` });
      expect(imported.stderr).toBe('');
      expect(imported).toMatchObject({
        code: 0,
        stdout: expect.stringContaining(`sealed the live signing key (account xpub ${ACCOUNT_XPUB})`),
      });
      // `migrate` does not run beside a gateway: it names it.
      const migrate = await runPaygate(['migrate'], env);
      expect(migrate.code).toBe(1);
      expect(migrate.stderr).toContain(`pid ${first.child.pid}`);

      expect(await stop(first, 'SIGKILL')).toBe(null);
      const lock = JSON.parse(await readFile(join(dataDir, 'paygate.lock'), 'utf8')) as { pid: number };
      expect(lock.pid).toBe(first.child.pid);
      // With no gateway running (a stale lock and socket left), a CLI command opens the folder itself.
      const merchant = await createMerchant(env, 'Afterwards');
      const next = await serve(env);
      expect(await accountStatus(next.url, merchant.api_key)).toBe(200);
      expect(await stop(next)).toBe(0);
      await expect(stat(join(dataDir, 'paygate.lock'))).rejects.toMatchObject({ code: 'ENOENT' });
    },
    SCENARIO_TIMEOUT_MS,
  );

  it(
    'a backup taken while the gateway runs restores into a new folder with its data and without later writes',
    async () => {
      const gateway = await serve(env);
      const before = await createMerchant(env, 'Before');
      const file = join(dataDir, 'backup.tgz');
      const backup = await runPaygate(['backup', '--to', file], env);
      expect(backup.code).toBe(0);
      expect(backup.stdout).toContain(`backed up the embedded database to ${file}`);
      expect((await stat(file)).mode & 0o777).toBe(0o600);
      // An existing file is never replaced.
      expect((await runPaygate(['backup', '--to', file], env)).code).toBe(1);
      const after = await createMerchant(env, 'After');
      // No restore into a folder a gateway has open.
      const refused = await runPaygate(['restore', '--from', file, '--force'], env);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain(`pid ${gateway.child.pid}`);
      expect(refused.stderr).toContain('stop the gateway before restoring');
      expect(await stop(gateway)).toBe(0);

      const restoredDir = await mkdtemp(join(tmpdir(), 'paygate-restored-'));
      try {
        const restoredEnv = { PAYGATE_DATA_DIR: restoredDir };
        const restore = await runPaygate(['restore', '--from', file], restoredEnv);
        expect(restore.stderr).toBe('');
        expect(restore.code).toBe(0);
        // A folder that has a database is replaced only with --force.
        expect((await runPaygate(['restore', '--from', file], restoredEnv)).code).toBe(1);
        const restored = await serve(restoredEnv);
        expect(await accountStatus(restored.url, before.api_key)).toBe(200);
        expect(await accountStatus(restored.url, after.api_key)).toBe(401);
        expect(await stop(restored)).toBe(0);
      } finally {
        await rm(restoredDir, { recursive: true, force: true });
      }
    },
    SCENARIO_TIMEOUT_MS,
  );
});

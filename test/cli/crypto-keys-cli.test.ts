// `paygate crypto keys import` in real processes: the key from stdin or a file
// (never argv) sealed into the database; a clear key file refused at start,
// naming the command that seals it.
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HDKey } from '@scure/bip32';
import { mnemonicToSeedSync } from '@scure/bip39';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { TRON_ACCOUNT_PATH } from '../../src/crypto/keys/hd-keys.ts';
import { backends, createServerDatabase, dropServerDatabase } from '../support/databases.ts';
import { lastJsonLine, runPaygate, runPaygateInProcess } from '../support/cli.ts';

const MNEMONIC = 'abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about';
const ACCOUNT_XPUB = HDKey.fromMasterSeed(mnemonicToSeedSync(MNEMONIC)).derive(TRON_ACCOUNT_PATH).publicExtendedKey;
const OTHER_MNEMONIC = 'legal winner thank year wave sausage worth useful legal winner thank yellow';
/** A guard only: each command is a process opening the database, slow on a loaded machine. */
const GUARD_MS = 300_000;

describe.each(backends)('paygate crypto keys on %s', (backend) => {
  let dataDir: string;
  let env: Record<string, string | undefined>;
  let databaseUrl: string | undefined;
  beforeEach(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'paygate-keys-cli-'));
    databaseUrl = backend === 'postgres' ? await createServerDatabase() : undefined;
    env = { PAYGATE_DATA_DIR: dataDir, DATABASE_URL: databaseUrl };
  });
  afterEach(async () => {
    if (databaseUrl) await dropServerDatabase(databaseUrl);
    await rm(dataDir, { recursive: true, force: true });
  });

  const secretFile = async (content: string) => {
    const path = join(dataDir, 'signer-key');
    await writeFile(path, content, { mode: 0o600 });
    await chmod(path, 0o600);
    return path;
  };

  it(
    'import seals the key read from stdin; list shows its xpub, never the key; the same key again changes nothing, another is refused',
    async () => {
      const imported = await runPaygateInProcess(['crypto', 'keys', 'import'], env, { stdin: `${MNEMONIC}\n` });
      expect(imported.code, imported.stderr).toBe(0);
      expect(imported.stdout).toContain(`sealed the live signing key (account xpub ${ACCOUNT_XPUB})`);
      expect(imported.stdout + imported.stderr).not.toMatch(/abandon/);

      const listed = await runPaygateInProcess(['crypto', 'keys', 'list', '--json'], env);
      expect(listed.code, listed.stderr).toBe(0);
      expect(lastJsonLine<{ book: string; xpub: string }[]>(listed.stdout)).toEqual([
        expect.objectContaining({ book: 'live', xpub: ACCOUNT_XPUB }),
      ]);
      expect(listed.stdout).not.toMatch(/abandon|v1\./);

      const again = await runPaygateInProcess(['crypto', 'keys', 'import'], env, { stdin: MNEMONIC });
      expect(again.code, again.stderr).toBe(0);
      expect(again.stdout).toContain('already sealed; nothing changed');
      const other = await runPaygateInProcess(['crypto', 'keys', 'import'], env, { stdin: OTHER_MNEMONIC });
      expect(other.code).toBe(1);
      expect(other.stderr).toContain(`account xpub ${ACCOUNT_XPUB}) is already stored`);
    },
    GUARD_MS,
  );

  it(
    'import --file reads a 0600 file and says to delete the clear copy; the key is never taken from argv',
    async () => {
      const path = await secretFile(`${MNEMONIC}\n`);
      const imported = await runPaygateInProcess(['crypto', 'keys', 'import', '--file', path], env);
      expect(imported.code, imported.stderr).toBe(0);
      expect(imported.stdout).toContain(`delete the clear copy now: ${path}`);
      const argv = await runPaygateInProcess(['crypto', 'keys', 'import', ...MNEMONIC.split(' ')], env);
      expect(argv.code).toBe(2);
      expect(argv.stderr + argv.stdout).not.toContain('sealed the live signing key');
    },
    GUARD_MS,
  );

  it(
    'serve refuses PAYGATE_TRON_SIGNER_KEY_FILE (a key in clear), naming `paygate crypto keys import`',
    async () => {
      const path = await secretFile(MNEMONIC);
      const refused = await runPaygate(['serve', '--port', '0'], { ...env, PAYGATE_TRON_SIGNER_KEY_FILE: path });
      expect(refused.code).toBe(2);
      expect(refused.stderr).toContain('PAYGATE_TRON_SIGNER_KEY_FILE');
      expect(refused.stderr).toContain(`paygate crypto keys import --file ${path}`);
      expect(refused.stderr).not.toMatch(/abandon/);
    },
    GUARD_MS,
  );
});

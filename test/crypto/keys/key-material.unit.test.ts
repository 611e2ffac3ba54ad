import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HDKey } from '@scure/bip32';
import { mnemonicToSeedSync } from '@scure/bip39';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ConfigError } from '../../../src/config.ts';
import { TRON_ACCOUNT_PATH } from '../../../src/crypto/keys/hd-keys.ts';
import { loadApiRoleKeys, loadSignerKeys } from '../../../src/crypto/keys/key-material.ts';

const MNEMONIC = 'abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about';
const FIRST_ADDRESS = 'TUEZSdKsoDHQMeZwihtdoBiN46zxhGWYdH';
const master = HDKey.fromMasterSeed(mnemonicToSeedSync(MNEMONIC));
const ACCOUNT_XPUB = master.derive(TRON_ACCOUNT_PATH).publicExtendedKey;
const SETTING = 'PAYGATE_TRON_KEY_FILE';

let folder: string;
let previousUmask: number;

beforeEach(async () => {
  folder = await mkdtemp(join(tmpdir(), 'paygate-keys-'));
  previousUmask = process.umask(0o000); // the most permissive umask: nothing may rely on it
});

afterEach(async () => {
  process.umask(previousUmask);
  await rm(folder, { recursive: true, force: true });
});

async function keyFile(content: string, mode: number): Promise<string> {
  const path = join(folder, 'key');
  await writeFile(path, content);
  await chmod(path, mode);
  return path;
}

async function refusal(promise: Promise<unknown>): Promise<ConfigError> {
  const error = await promise.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(ConfigError);
  return error as ConfigError;
}

describe('key files: readable by their owner only', () => {
  it('accepts 0600 and the stricter 0400', async () => {
    for (const mode of [0o600, 0o400]) {
      const keys = await loadSignerKeys(await keyFile(`${MNEMONIC}\n`, mode), SETTING);
      expect(keys.depositAddressKey.address(0)).toBe(FIRST_ADDRESS);
    }
  });

  it.each([0o644, 0o640, 0o604, 0o660, 0o666])(
    'refuses mode %o, naming the setting and the fix, never the content',
    async (mode) => {
      const path = await keyFile(MNEMONIC, mode);
      const error = await refusal(loadSignerKeys(path, SETTING));
      expect(error.message).toContain(SETTING);
      expect(error.message).toContain(`mode 0${mode.toString(8)}`);
      expect(error.message).toContain(`chmod 600 ${path}`);
      expect(error.message).not.toContain('abandon');
    },
  );

  it('refuses a missing file, a folder, an empty file and an oversized one', async () => {
    expect((await refusal(loadSignerKeys(join(folder, 'absent'), SETTING))).message).toMatch(/cannot be read: ENOENT/);
    const subfolder = join(folder, 'sub');
    await mkdir(subfolder, { mode: 0o700 });
    expect((await refusal(loadSignerKeys(subfolder, SETTING))).message).toMatch(/not a regular file/);
    expect((await refusal(loadSignerKeys(await keyFile(' \n', 0o600), SETTING))).message).toMatch(/is empty/);
    expect((await refusal(loadSignerKeys(await keyFile('a'.repeat(4097), 0o600), SETTING))).message).toMatch(
      /larger than a key file/,
    );
  });

  it('refuses a mnemonic with a bad checksum without echoing its words', async () => {
    const error = await refusal(loadSignerKeys(await keyFile(MNEMONIC.replace('about', 'zoo'), 0o600), SETTING));
    expect(error.message).toMatch(/not a valid BIP39 mnemonic/);
    expect(error.message).not.toContain('abandon');
    expect(error.message).not.toContain('zoo');
  });
});

describe('roles', () => {
  it('the signer loads a mnemonic or an xprv and can derive private keys', async () => {
    const fromMnemonic = await loadSignerKeys(await keyFile(MNEMONIC, 0o600), SETTING);
    const fromXprv = await loadSignerKeys(await keyFile(`${master.privateExtendedKey}\n`, 0o600), SETTING);
    for (const keys of [fromMnemonic, fromXprv]) {
      expect(keys.source).toBe('file');
      expect(keys.depositAddressKey.xpub).toBe(ACCOUNT_XPUB);
      expect(keys.signingKey?.privateKey(0)).toHaveLength(32);
    }
  });

  it('the signer refuses an xpub', async () => {
    expect((await refusal(loadSignerKeys(await keyFile(ACCOUNT_XPUB, 0o600), SETTING))).message).toMatch(
      /needs the mnemonic or the xprv/,
    );
  });

  it('the API role loads the account xpub and holds no signing key', async () => {
    const keys = await loadApiRoleKeys(await keyFile(`${ACCOUNT_XPUB}\n`, 0o600), SETTING);
    expect(keys.signingKey).toBeUndefined();
    expect(keys.depositAddressKey.address(0)).toBe(FIRST_ADDRESS);
    expect(JSON.stringify(keys)).not.toMatch(/xprv|abandon/);
  });

  it('the API role refuses a mnemonic and an xprv (it never holds a private key)', async () => {
    for (const secret of [MNEMONIC, master.privateExtendedKey]) {
      const error = await refusal(loadApiRoleKeys(await keyFile(secret, 0o600), SETTING));
      expect(error.message).toMatch(/never holds a mnemonic or an xprv/);
      expect(error.message).not.toContain(secret.slice(0, 12));
    }
  });

  it('the API role refuses a master xpub with a message about the path', async () => {
    expect((await refusal(loadApiRoleKeys(await keyFile(master.publicExtendedKey, 0o600), SETTING))).message).toMatch(
      /depth 0/,
    );
  });
});

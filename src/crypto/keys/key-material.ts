// Key files. The API role's file (PAYGATE_TRON_XPUB_FILE) holds the account xpub
// alone. A signing key (mnemonic or xprv) is read in clear only to be sealed:
// `paygate crypto keys import --file`, and a sandbox seed an earlier version left
// in the data folder (sealed-signing-keys.ts stores both sealed). A key file must
// be readable by its owner only (mode 0600 or stricter), or it is refused naming
// the setting. No function here logs or echoes key content: errors name the
// setting and the file, never what is inside.
import { constants } from 'node:fs';
import { lstat, open, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { ConfigError } from '../../config.ts';
import {
  depositAddressKeyFromXpub,
  HdKeyError,
  signingKeyFromMnemonic,
  signingKeyFromXprv,
  type DepositAddressKey,
  type DepositSigningKey,
} from './hd-keys.ts';

/** The sandbox seed's file inside the data folder. */
export const SANDBOX_SEED_FILE = 'sandbox-tron-seed';
/** A mnemonic of 24 words, an xprv or an xpub is far below this. */
const KEY_FILE_MAX_BYTES = 4096;

/** The keys a process loaded: every role derives addresses; only the signing role can sign. */
export type LoadedKeys = {
  /** `file`: named by configuration; `sandbox-seed`: generated in the data folder. */
  readonly source: 'file' | 'sandbox-seed';
  readonly path: string;
  readonly depositAddressKey: DepositAddressKey;
  /** Absent in the API role. */
  readonly signingKey: DepositSigningKey | undefined;
};

/** The API role's keys: the file named by `setting` must hold the account xpub and nothing private. */
export async function loadApiRoleKeys(path: string, setting: string): Promise<LoadedKeys> {
  const content = await readKeyFile(path, setting);
  if (!content.startsWith('xpub')) {
    throw new ConfigError(
      setting,
      `names ${path}, which must hold the account's extended public key (xpub…, m/44'/195'/0'); the API role never holds a mnemonic or an xprv`,
    );
  }
  return {
    source: 'file',
    path,
    depositAddressKey: asKey(setting, path, () => depositAddressKeyFromXpub(content)),
    signingKey: undefined,
  };
}

/** The signing role's keys: the file named by `setting` holds a BIP39 mnemonic or an xprv. */
export async function loadSignerKeys(path: string, setting: string): Promise<LoadedKeys & { readonly text: string }> {
  const content = await readKeyFile(path, setting);
  if (content.startsWith('xpub'))
    throw new ConfigError(
      setting,
      `names ${path}, which holds an xpub; the signing role needs the mnemonic or the xprv`,
    );
  const signingKey = asKey(setting, path, () =>
    content.startsWith('xprv') ? signingKeyFromXprv(content) : signingKeyFromMnemonic(content),
  );
  return { source: 'file', path, depositAddressKey: signingKey, signingKey, text: content };
}

/**
 * The sandbox seed an earlier version wrote in clear to `<dataDir>/sandbox-tron-seed`,
 * or undefined when there is none. Read once, to be sealed (sealed-signing-keys.ts).
 */
export async function readClearSandboxSeed(
  dataDir: string,
): Promise<(LoadedKeys & { readonly mnemonic: string }) | undefined> {
  const path = join(dataDir, SANDBOX_SEED_FILE);
  if (!(await exists(path))) return undefined;
  const setting = 'the sandbox seed';
  const mnemonic = await readKeyFile(path, setting);
  const signingKey = asKey(setting, path, () => signingKeyFromMnemonic(mnemonic));
  return { source: 'sandbox-seed', path, depositAddressKey: signingKey, signingKey, mnemonic };
}

/** A signing key from its text (a BIP39 mnemonic or an xprv), e.g. read from stdin; `origin` names where it came from in errors. */
export function signingKeyFromText(text: string, origin: string): DepositSigningKey {
  const content = text.trim();
  if (content === '') throw new ConfigError(origin, 'is empty');
  if (content.length > KEY_FILE_MAX_BYTES)
    throw new ConfigError(origin, `is larger than a key (${KEY_FILE_MAX_BYTES} bytes)`);
  if (content.startsWith('xpub'))
    throw new ConfigError(origin, 'holds an xpub; the signing key is the mnemonic or the xprv');
  try {
    return content.startsWith('xprv') ? signingKeyFromXprv(content) : signingKeyFromMnemonic(content);
  } catch (error) {
    if (error instanceof HdKeyError) throw new ConfigError(origin, `${error.message}`);
    throw error;
  }
}

async function exists(path: string): Promise<boolean> {
  try {
    await lstat(path);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw error;
  }
}

/** The trimmed text of a key file that only its owner may read. */
async function readKeyFile(path: string, setting: string): Promise<string> {
  let mode: number;
  try {
    const info = await stat(path);
    if (!info.isFile()) throw new ConfigError(setting, `names ${path}, which is not a regular file`);
    mode = info.mode;
  } catch (error) {
    if (error instanceof ConfigError) throw error;
    throw new ConfigError(
      setting,
      `names ${path}, which cannot be read: ${(error as NodeJS.ErrnoException).code ?? 'error'}`,
    );
  }
  if ((mode & 0o077) !== 0) {
    const octal = (mode & 0o777).toString(8).padStart(4, '0');
    throw new ConfigError(
      setting,
      `names ${path} with mode ${octal}: a key file must be readable by its owner only (chmod 600 ${path})`,
    );
  }
  // O_NOFOLLOW is not used: secret mounts are often symlinks; the mode checked is the target's.
  const handle = await open(path, constants.O_RDONLY);
  try {
    const buffer = Buffer.alloc(KEY_FILE_MAX_BYTES + 1);
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    if (bytesRead > KEY_FILE_MAX_BYTES)
      throw new ConfigError(setting, `names ${path}, which is larger than a key file (${KEY_FILE_MAX_BYTES} bytes)`);
    const content = buffer.subarray(0, bytesRead).toString('utf8').trim();
    buffer.fill(0);
    if (content === '') throw new ConfigError(setting, `names ${path}, which is empty`);
    return content;
  } finally {
    await handle.close();
  }
}

/** Turns a key parsing failure into a configuration error that names the setting and the file, not the key. */
function asKey<T>(setting: string, path: string, parse: () => T): T {
  try {
    return parse();
  } catch (error) {
    if (error instanceof HdKeyError) throw new ConfigError(setting, `names ${path}, whose content ${error.message}`);
    throw error;
  }
}

// Where the HD key comes from. A live installation names a key file in its
// configuration: the signing role's file holds a BIP39 mnemonic or an xprv, the
// API role's file the account xpub alone. A key file must be readable by its
// owner only (mode 0600 or stricter), or start is refused naming the setting.
// Sandbox shops and the embedded default use a sandbox seed that the gateway
// generates once into its data folder. No function here logs or echoes key
// content: errors name the setting and the file, never what is inside.
import { constants } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { chmod, link, lstat, mkdir, open, stat, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { generateMnemonic } from '@scure/bip39';
import { wordlist as english } from '@scure/bip39/wordlists/english.js';
import { ConfigError } from '../../config.ts';
import { depositAddressKeyFromXpub, HdKeyError, signingKeyFromMnemonic, signingKeyFromXprv, type DepositAddressKey, type DepositSigningKey } from './hd-keys.ts';

/** The sandbox seed's file inside the data folder. */
export const SANDBOX_SEED_FILE = 'sandbox-tron-seed';
/** A mnemonic of 24 words, an xprv or an xpub is far below this. */
const KEY_FILE_MAX_BYTES = 4096;
/** 256 bits of entropy: a 24-word mnemonic. */
const SANDBOX_MNEMONIC_STRENGTH_BITS = 256;

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
    throw new ConfigError(setting, `names ${path}, which must hold the account's extended public key (xpub…, m/44'/195'/0'); the API role never holds a mnemonic or an xprv`);
  }
  return { source: 'file', path, depositAddressKey: asKey(setting, path, () => depositAddressKeyFromXpub(content)), signingKey: undefined };
}

/** The signing role's keys: the file named by `setting` holds a BIP39 mnemonic or an xprv. */
export async function loadSignerKeys(path: string, setting: string): Promise<LoadedKeys> {
  const content = await readKeyFile(path, setting);
  if (content.startsWith('xpub')) throw new ConfigError(setting, `names ${path}, which holds an xpub; the signing role needs the mnemonic or the xprv`);
  const signingKey = asKey(setting, path, () => (content.startsWith('xprv') ? signingKeyFromXprv(content) : signingKeyFromMnemonic(content)));
  return { source: 'file', path, depositAddressKey: signingKey, signingKey };
}

/**
 * The sandbox seed: on first start a fresh 24-word mnemonic is written to
 * `<dataDir>/sandbox-tron-seed` (file 0600, folder 0700); later starts read the
 * same one, so sandbox deposit addresses survive a restart.
 */
export async function ensureSandboxSeed(dataDir: string): Promise<LoadedKeys> {
  const setting = 'the sandbox seed';
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  await chmod(dataDir, 0o700);
  const path = join(dataDir, SANDBOX_SEED_FILE);
  if (!(await exists(path))) await writeSeedOnce(path);
  const content = await readKeyFile(path, setting);
  const signingKey = asKey(setting, path, () => signingKeyFromMnemonic(content));
  return { source: 'sandbox-seed', path, depositAddressKey: signingKey, signingKey };
}

/**
 * Writes a fresh mnemonic to a temporary file, then links it into place: a
 * second process starting at the same moment either wins the link or reads the
 * complete seed of the winner, never a half-written file.
 */
async function writeSeedOnce(path: string): Promise<void> {
  const temporary = `${path}.${randomBytes(8).toString('hex')}.tmp`;
  const handle = await open(temporary, 'wx', 0o600);
  try {
    await handle.chmod(0o600);
    await handle.writeFile(`${generateMnemonic(english, SANDBOX_MNEMONIC_STRENGTH_BITS)}\n`);
    await handle.sync();
  } finally {
    await handle.close();
  }
  try {
    await link(temporary, path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  } finally {
    await unlink(temporary);
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
    throw new ConfigError(setting, `names ${path}, which cannot be read: ${(error as NodeJS.ErrnoException).code ?? 'error'}`);
  }
  if ((mode & 0o077) !== 0) {
    const octal = (mode & 0o777).toString(8).padStart(4, '0');
    throw new ConfigError(setting, `names ${path} with mode ${octal}: a key file must be readable by its owner only (chmod 600 ${path})`);
  }
  // O_NOFOLLOW is not used: secret mounts are often symlinks; the mode checked is the target's.
  const handle = await open(path, constants.O_RDONLY);
  try {
    const buffer = Buffer.alloc(KEY_FILE_MAX_BYTES + 1);
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    if (bytesRead > KEY_FILE_MAX_BYTES) throw new ConfigError(setting, `names ${path}, which is larger than a key file (${KEY_FILE_MAX_BYTES} bytes)`);
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

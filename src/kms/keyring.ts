// The root keys of envelope encryption. The current key wraps new data keys;
// previous keys (after a rotation) only unwrap until `paygate kms rotate` has
// re-wrapped every data key under the current one. A key is named by its id,
// the first 8 bytes of its SHA-256, stored beside every wrapped data key, so a
// sealed value says which root key opens it without revealing anything.
import { createHash, randomBytes } from 'node:crypto';
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';

const ROOT_KEY_BYTES = 32;

export interface RootKey {
  readonly id: string;
  readonly key: Buffer;
}

export interface Keyring {
  readonly current: RootKey;
  /** Every key that can unwrap: the current one first, then the previous ones. */
  find(id: string): RootKey | undefined;
  readonly previousIds: readonly string[];
}

export class RootKeyError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RootKeyError';
  }
}

export function rootKeyFromBase64(encoded: string, origin: string): RootKey {
  const trimmed = encoded.trim();
  if (!/^[A-Za-z0-9+/]{43}=$/.test(trimmed)) {
    throw new RootKeyError(
      `${origin} must be ${ROOT_KEY_BYTES} random bytes in base64 (44 characters; "paygate kms generate-key" prints one)`,
    );
  }
  const key = Buffer.from(trimmed, 'base64');
  return { id: createHash('sha256').update(key).digest('hex').slice(0, 16), key };
}

export function createKeyring(current: RootKey, previous: readonly RootKey[] = []): Keyring {
  const byId = new Map<string, RootKey>([current, ...previous].map((rootKey) => [rootKey.id, rootKey]));
  return {
    current,
    find: (id) => byId.get(id),
    previousIds: previous.map((rootKey) => rootKey.id).filter((id) => id !== current.id),
  };
}

export function generateRootKey(): string {
  return randomBytes(ROOT_KEY_BYTES).toString('base64');
}

/** A keyring with a fresh random root key, for a process whose sealed values never outlive it (benchmarks, the OpenAPI export). */
export function throwawayKeyring(): Keyring {
  return createKeyring(rootKeyFromBase64(generateRootKey(), 'a throwaway root key'));
}

/** Reads a root key file; with `createIfMissing`, generates one first (the embedded default), readable by the owner only. */
export async function readRootKeyFile(path: string, options: { createIfMissing: boolean }): Promise<RootKey> {
  let encoded: string;
  try {
    encoded = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT' || !options.createIfMissing) {
      throw new RootKeyError(`cannot read the root key file ${path}: ${(error as Error).message}`);
    }
    await mkdir(dirname(path), { recursive: true, mode: 0o700 });
    encoded = `${generateRootKey()}\n`;
    // "wx": never overwrite a key another process wrote a moment ago.
    await writeFile(path, encoded, { mode: 0o600, flag: 'wx' }).catch(async (writeError: NodeJS.ErrnoException) => {
      if (writeError.code !== 'EEXIST') throw writeError;
      encoded = await readFile(path, 'utf8');
    });
    await chmod(path, 0o600);
  }
  return rootKeyFromBase64(encoded, `the root key file ${path}`);
}

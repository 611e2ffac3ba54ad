// The keyring from configuration: the current root key from PAYGATE_ROOT_KEY or
// PAYGATE_ROOT_KEY_FILE (on the embedded default, a file generated into the data
// folder on first start), plus the previous keys kept for a rotation.
import { join } from 'node:path';
import { ConfigError, type Config } from '../config.ts';
import {
  createKeyring,
  readRootKeyFile,
  RootKeyError,
  rootKeyFromBase64,
  type Keyring,
  type RootKey,
} from './keyring.ts';

const EMBEDDED_ROOT_KEY_FILE = 'root-key';

export async function loadKeyring(config: Config): Promise<Keyring> {
  if (!config.rootKey && !config.rootKeyFile && config.databaseUrl) {
    // Several processes share a server database: each must hold the same key, so none may invent one.
    throw new ConfigError(
      'PAYGATE_ROOT_KEY',
      'or PAYGATE_ROOT_KEY_FILE is required with DATABASE_URL (`paygate kms generate-key` prints a new key)',
    );
  }
  let current: RootKey;
  try {
    current = config.rootKey
      ? rootKeyFromBase64(config.rootKey, 'PAYGATE_ROOT_KEY')
      : await readRootKeyFile(config.rootKeyFile ?? join(config.dataDir, EMBEDDED_ROOT_KEY_FILE), {
          // Only the embedded default makes its own key.
          createIfMissing: config.rootKeyFile === undefined,
        });
  } catch (error) {
    if (error instanceof RootKeyError)
      throw new ConfigError(config.rootKeyFile ? 'PAYGATE_ROOT_KEY_FILE' : 'PAYGATE_DATA_DIR', `: ${error.message}`);
    throw error;
  }
  const previous = config.previousRootKeys.map((encoded, index) =>
    rootKeyFromBase64(encoded, `PAYGATE_ROOT_KEYS_PREVIOUS entry ${index + 1}`),
  );
  return createKeyring(current, previous);
}

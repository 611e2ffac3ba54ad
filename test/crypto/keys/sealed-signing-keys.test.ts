// The signing keys at rest: sealed by envelope encryption in the database,
// opened only by the signing role; the clear sandbox seed of an earlier version
// sealed on first start and its file deleted.
import { chmod, mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HDKey } from '@scure/bip32';
import { mnemonicToSeedSync } from '@scure/bip39';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ConfigError } from '../../../src/config.ts';
import type { AppContext } from '../../../src/context.ts';
import { TRON_ACCOUNT_PATH } from '../../../src/crypto/keys/hd-keys.ts';
import { SANDBOX_SEED_FILE } from '../../../src/crypto/keys/key-material.ts';
import {
  ensureSealedSandboxSeed,
  importSigningKey,
  openSigningKey,
  rewrapSigningKeys,
  SigningKeyImportError,
  type SealedKeyStore,
} from '../../../src/crypto/keys/sealed-signing-keys.ts';
import { createCryptoChain } from '../../../src/crypto/chain/crypto-chain.ts';
import { SealedValueError } from '../../../src/kms/envelope.ts';
import { createKeyring, throwawayKeyring } from '../../../src/kms/keyring.ts';
import { createTestContext } from '../../support/app.ts';
import { backends, type TestDatabase } from '../../support/databases.ts';

const MNEMONIC = 'abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about';
const FIRST_ADDRESS = 'TUEZSdKsoDHQMeZwihtdoBiN46zxhGWYdH';
const OTHER_MNEMONIC = 'legal winner thank year wave sausage worth useful legal winner thank yellow';
const master = HDKey.fromMasterSeed(mnemonicToSeedSync(MNEMONIC));
const ACCOUNT_XPUB = master.derive(TRON_ACCOUNT_PATH).publicExtendedKey;

describe.each(backends)('sealed signing keys on %s', (backend) => {
  let context: AppContext;
  let database: TestDatabase;
  let store: SealedKeyStore;
  let folder: string;
  beforeEach(async () => {
    ({ context, database } = await createTestContext(backend));
    store = context;
    folder = await mkdtemp(join(tmpdir(), 'paygate-sealed-keys-'));
  });
  afterEach(async () => {
    await database.close();
    await rm(folder, { recursive: true, force: true });
  });

  const storedRow = () =>
    context.db.selectFrom('crypto_signing_keys').selectAll().where('book', '=', 'live').executeTakeFirstOrThrow();

  it('an imported key is stored sealed (no word of it in the row) and opens to the same key', async () => {
    const imported = await importSigningKey(store, 'live', `  ${MNEMONIC.replaceAll(' ', '\n ')}\n`, {
      origin: 'standard input',
    });
    expect(imported).toEqual({ xpub: ACCOUNT_XPUB, outcome: 'imported' });
    const row = await storedRow();
    expect(row.xpub).toBe(ACCOUNT_XPUB);
    expect(row.sealed_key).toMatch(/^v1\./);
    expect(row.sealed_key).not.toMatch(/abandon|about/);
    const opened = await openSigningKey(store, 'live');
    expect(opened?.address(0)).toBe(FIRST_ADDRESS);
    expect(opened?.xpub).toBe(ACCOUNT_XPUB);
  });

  it('an xprv is imported like a mnemonic, to the same account', async () => {
    expect(await importSigningKey(store, 'live', master.privateExtendedKey, { origin: 'standard input' })).toEqual({
      xpub: ACCOUNT_XPUB,
      outcome: 'imported',
    });
    expect((await openSigningKey(store, 'live'))?.address(0)).toBe(FIRST_ADDRESS);
  });

  it('the same key again changes nothing; another key is refused and the stored one stays', async () => {
    await importSigningKey(store, 'live', MNEMONIC, { origin: 'standard input' });
    const before = await storedRow();
    expect(await importSigningKey(store, 'live', MNEMONIC, { origin: 'standard input' })).toEqual({
      xpub: ACCOUNT_XPUB,
      outcome: 'already_imported',
    });
    await expect(importSigningKey(store, 'live', OTHER_MNEMONIC, { origin: 'standard input' })).rejects.toThrow(
      SigningKeyImportError,
    );
    expect(await storedRow()).toEqual(before);
  });

  it('a key that is not the configured xpub’s account is refused, and a bad key names its origin, not its content', async () => {
    const otherXpub = HDKey.fromMasterSeed(mnemonicToSeedSync(OTHER_MNEMONIC)).derive(
      TRON_ACCOUNT_PATH,
    ).publicExtendedKey;
    await expect(
      importSigningKey(store, 'live', MNEMONIC, { origin: 'standard input', expectedXpub: otherXpub }),
    ).rejects.toThrow(/not the key of PAYGATE_TRON_XPUB_FILE/);
    const bad = await importSigningKey(store, 'live', 'abandon abandon typo', { origin: 'standard input' }).catch(
      (error: unknown) => error,
    );
    expect(bad).toBeInstanceOf(ConfigError);
    expect((bad as Error).message).toContain('standard input');
    expect((bad as Error).message).not.toContain('typo');
    expect(await context.db.selectFrom('crypto_signing_keys').selectAll().execute()).toEqual([]);
  });

  it('a sealed key does not open under another root key, nor moved to another book', async () => {
    await importSigningKey(store, 'live', MNEMONIC, { origin: 'standard input' });
    await expect(openSigningKey({ ...store, keyring: throwawayKeyring() }, 'live')).rejects.toThrow(SealedValueError);
    const row = await storedRow();
    await context.db
      .insertInto('crypto_signing_keys')
      .values({ ...row, book: 'sandbox' })
      .execute();
    await expect(openSigningKey(store, 'sandbox')).rejects.toThrow(SealedValueError);
  });

  it('after a root key rotation, kms rotate re-wraps the sealed keys: the new root key alone opens them', async () => {
    await importSigningKey(store, 'live', MNEMONIC, { origin: 'standard input' });
    const next = throwawayKeyring();
    const rotating = { ...store, keyring: createKeyring(next.current, [context.keyring.current]) };
    expect(await rewrapSigningKeys(rotating)).toBe(1);
    expect(await rewrapSigningKeys(rotating)).toBe(0);
    expect((await openSigningKey({ ...store, keyring: next }, 'live'))?.address(0)).toBe(FIRST_ADDRESS);
    await expect(openSigningKey(store, 'live')).rejects.toThrow(SealedValueError);
  });

  it('a clear sandbox seed of an earlier version is sealed on first start and its file deleted; later starts read the sealed one', async () => {
    const file = join(folder, SANDBOX_SEED_FILE);
    await writeFile(file, `${MNEMONIC}\n`, { mode: 0o600 });
    await chmod(file, 0o600);
    expect(await ensureSealedSandboxSeed(store, folder)).toBe(ACCOUNT_XPUB);
    expect(await readdir(folder)).toEqual([]);
    const row = await context.db
      .selectFrom('crypto_signing_keys')
      .selectAll()
      .where('book', '=', 'sandbox')
      .executeTakeFirstOrThrow();
    expect(row.sealed_key).not.toMatch(/abandon/);
    expect(await ensureSealedSandboxSeed(store, folder)).toBe(ACCOUNT_XPUB);
    expect((await openSigningKey(store, 'sandbox'))?.address(0)).toBe(FIRST_ADDRESS);
  });

  it('a clear sandbox seed readable by others is refused, not sealed', async () => {
    const file = join(folder, SANDBOX_SEED_FILE);
    await writeFile(file, MNEMONIC);
    await chmod(file, 0o644);
    await expect(ensureSealedSandboxSeed(store, folder)).rejects.toThrow(/readable by its owner only/);
    expect((await stat(file)).isFile()).toBe(true);
    expect(await context.db.selectFrom('crypto_signing_keys').selectAll().execute()).toEqual([]);
  });

  it('without a clear seed, a fresh one is generated sealed, once, whatever the number of simultaneous starts', async () => {
    const xpubs = await Promise.all(Array.from({ length: 6 }, () => ensureSealedSandboxSeed(store, folder)));
    expect(new Set(xpubs).size).toBe(1);
    expect(await readdir(folder)).toEqual([]);
    const opened = await openSigningKey(store, 'sandbox');
    expect(opened?.xpub).toBe(xpubs[0]);
  });

  it('the API role derives sandbox addresses from the stored xpub without opening the sealed seed; the signing role opens it', async () => {
    const logger = context.logger;
    const signer = createCryptoChain({
      config: context.config,
      dataDir: undefined,
      logger,
      keyStore: store,
      sandboxClock: 'manual',
    });
    // A process that cannot open the seal (another root key) still derives the same addresses: it never opens it.
    const api = createCryptoChain({
      config: context.config,
      dataDir: undefined,
      logger,
      keyStore: { ...store, keyring: throwawayKeyring() },
      sandboxServes: false,
    });
    try {
      const signing = await signer.forMode('sandbox');
      const deriving = await api.forMode('sandbox');
      expect(deriving.addressKey.address(3)).toBe(signing.addressKey.address(3));
      expect((await signing.signingKey()).address(3)).toBe(signing.addressKey.address(3));
      await expect(deriving.signingKey()).rejects.toThrow(SealedValueError);
    } finally {
      await signer.close();
      await api.close();
    }
  });

  it('live signing without an imported key fails naming `paygate crypto keys import`; after the import it signs with that key', async () => {
    const xpubFile = join(folder, 'xpub');
    await writeFile(xpubFile, ACCOUNT_XPUB, { mode: 0o600 });
    await chmod(xpubFile, 0o600);
    const chain = createCryptoChain({
      config: { ...context.config, tronXpubFile: xpubFile, tronNodeUrls: ['http://127.0.0.1:9'] },
      dataDir: undefined,
      logger: context.logger,
      keyStore: store,
    });
    try {
      const live = await chain.forMode('live');
      const missing = await live.signingKey().catch((error: unknown) => error);
      expect(missing).toBeInstanceOf(ConfigError);
      expect((missing as Error).message).toContain('paygate crypto keys import');
      await importSigningKey(store, 'live', MNEMONIC, { origin: 'standard input' });
      expect((await live.signingKey()).address(0)).toBe(FIRST_ADDRESS);
    } finally {
      await chain.close();
    }
  });
});

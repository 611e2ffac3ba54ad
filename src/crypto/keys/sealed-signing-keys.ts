// The HD signing keys at rest: each book's mnemonic or xprv is stored sealed by
// envelope encryption (src/kms/) in crypto_signing_keys, bound to its book and
// xpub, so neither the database, its WAL, a backup nor the data folder holds a
// key that can sign. The live key enters only through `paygate crypto keys
// import` (stdin or a file, never argv); the sandbox seed is generated sealed on
// first use, and a clear seed file an earlier version wrote is sealed and then
// deleted. The account xpub is stored in clear beside it: the API role derives
// addresses from it and never opens the sealed key. Only the signing role opens
// it, when it first signs.
import { generateMnemonic } from '@scure/bip39';
import { wordlist as english } from '@scure/bip39/wordlists/english.js';
import { unlink } from 'node:fs/promises';
import type { Logger } from 'pino';
import type { Clock } from '../../clock.ts';
import type { Db } from '../../db/transaction.ts';
import { needsRewrap, open, rewrap, seal } from '../../kms/envelope.ts';
import type { Keyring } from '../../kms/keyring.ts';
import { signingKeyFromMnemonic, type DepositSigningKey } from './hd-keys.ts';
import { readClearSandboxSeed, signingKeyFromText } from './key-material.ts';
import * as repository from './signing-key-repository.ts';
import type { KeyBook } from './signing-key-tables.ts';

export type { KeyBook } from './signing-key-tables.ts';

/** What opening and storing sealed keys needs: the database and the root keys. */
export interface SealedKeyStore {
  readonly db: Db;
  readonly keyring: Keyring;
  readonly clock: Clock;
  readonly logger: Logger;
}

/** 256 bits of entropy: a 24-word mnemonic. */
const SANDBOX_MNEMONIC_STRENGTH_BITS = 256;

const context = (book: KeyBook, xpub: string) => `tron_signing_key:${book}:${xpub}`;

/** A refused import: another key is stored for the book, or the key is not the configured xpub's. */
export class SigningKeyImportError extends Error {
  override readonly name = 'SigningKeyImportError';
}

/** Whitespace of a mnemonic collapsed, so the stored text is what `signingKeyFromMnemonic` reads. */
function normalized(text: string): string {
  return text.trim().split(/\s+/).join(' ');
}

/**
 * Seals a signing key (mnemonic or xprv text) for `book`. The same key again
 * changes nothing ('already_imported'); another key when one is stored is
 * refused: the addresses and the hot wallet of the stored one would be orphaned.
 * With `expectedXpub` (PAYGATE_TRON_XPUB_FILE's), a key of another account is refused.
 */
export async function importSigningKey(
  store: SealedKeyStore,
  book: KeyBook,
  text: string,
  options: { readonly origin: string; readonly expectedXpub?: string | undefined },
): Promise<{ readonly xpub: string; readonly outcome: 'imported' | 'already_imported' }> {
  const key = signingKeyFromText(text, options.origin);
  if (options.expectedXpub !== undefined && key.xpub !== options.expectedXpub) {
    throw new SigningKeyImportError(
      `${options.origin} is not the key of PAYGATE_TRON_XPUB_FILE: its account xpub is ${key.xpub}, the file holds ${options.expectedXpub}`,
    );
  }
  const stored = await repository.findSigningKey(store.db, book);
  if (stored) return sameOrRefused(stored, key, book);
  const inserted = await repository.insertSigningKeyIfAbsent(store.db, {
    book,
    xpub: key.xpub,
    sealed_key: seal(store.keyring, normalized(text), context(book, key.xpub)),
    created_at: store.clock.now(),
  });
  if (inserted) return { xpub: key.xpub, outcome: 'imported' };
  // Another import won the race: the same key is fine, another is refused.
  return sameOrRefused((await repository.findSigningKey(store.db, book))!, key, book);
}

function sameOrRefused(
  stored: repository.SigningKeyRow,
  key: DepositSigningKey,
  book: KeyBook,
): { xpub: string; outcome: 'already_imported' } {
  if (stored.xpub === key.xpub) return { xpub: key.xpub, outcome: 'already_imported' };
  throw new SigningKeyImportError(
    `another ${book} signing key (account xpub ${stored.xpub}) is already stored; replacing it would orphan its deposit addresses and hot wallet, so it is refused`,
  );
}

/** The book's account xpub, without opening the sealed key (what the API role needs); undefined when none is stored. */
async function storedXpub(store: Pick<SealedKeyStore, 'db'>, book: KeyBook): Promise<string | undefined> {
  return (await repository.findSigningKey(store.db, book))?.xpub;
}

/** Opens the book's sealed signing key (signing role only); undefined when none is stored. */
export async function openSigningKey(store: SealedKeyStore, book: KeyBook): Promise<DepositSigningKey | undefined> {
  const row = await repository.findSigningKey(store.db, book);
  if (!row) return undefined;
  const key = signingKeyFromText(
    open(store.keyring, row.sealed_key, context(book, row.xpub)),
    `the sealed ${book} signing key`,
  );
  // The context binds the xpub already; a mismatch here would be a broken invariant, not bad input.
  if (key.xpub !== row.xpub) throw new Error(`the sealed ${book} signing key does not derive its stored xpub`);
  return key;
}

/**
 * The sandbox seed's xpub, made on first use: a clear seed file an earlier
 * version left in `dataDir` is sealed (and then deleted), otherwise a fresh
 * 24-word mnemonic is. Concurrent first starts store one seed: the first insert
 * wins and every starter reads it back. A clear file whose seed lost that race
 * (another process stored a different one) is kept, and reported.
 */
export async function ensureSealedSandboxSeed(store: SealedKeyStore, dataDir: string | undefined): Promise<string> {
  const existing = await storedXpub(store, 'sandbox');
  const clear = dataDir === undefined ? undefined : await readClearSandboxSeed(dataDir);
  if (existing !== undefined && clear === undefined) return existing;
  if (existing === undefined) {
    const mnemonic = clear?.mnemonic ?? generateMnemonic(english, SANDBOX_MNEMONIC_STRENGTH_BITS);
    const xpub = clear?.signingKey?.xpub ?? signingKeyFromMnemonic(mnemonic).xpub;
    await repository.insertSigningKeyIfAbsent(store.db, {
      book: 'sandbox',
      xpub,
      sealed_key: seal(store.keyring, normalized(mnemonic), context('sandbox', xpub)),
      created_at: store.clock.now(),
    });
  }
  const xpub = (await storedXpub(store, 'sandbox'))!;
  if (clear !== undefined) {
    if (clear.signingKey?.xpub === xpub) {
      await unlink(clear.path).catch((error: NodeJS.ErrnoException) => {
        if (error.code !== 'ENOENT') throw error;
      });
      store.logger.info({ file: clear.path }, 'the sandbox seed is stored sealed; its clear file was deleted');
    } else {
      store.logger.warn(
        { file: clear.path, xpub },
        'a clear sandbox seed file holds another seed than the stored one: left in place, not used',
      );
    }
  }
  return xpub;
}

/** Every stored signing key (`paygate crypto keys list`). */
export function listSigningKeys(db: Db): Promise<repository.SigningKeyRow[]> {
  return repository.listSigningKeys(db);
}

/** After a root key rotation: re-wraps every sealed signing key under the current root key; returns how many changed. */
export async function rewrapSigningKeys(store: Pick<SealedKeyStore, 'db' | 'keyring'>): Promise<number> {
  let changed = 0;
  for (const row of await repository.listSigningKeys(store.db)) {
    if (!needsRewrap(store.keyring, row.sealed_key)) continue;
    if (await repository.replaceSealedKey(store.db, row.book, row.sealed_key, rewrap(store.keyring, row.sealed_key)))
      changed += 1;
  }
  return changed;
}

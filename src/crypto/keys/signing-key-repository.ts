// The SQL of the sealed signing keys (crypto_signing_keys, migration 0029).
import type { Executor } from '../../db/transaction.ts';
import type { KeyBook, SigningKeyTables } from './signing-key-tables.ts';

export interface SigningKeyRow {
  readonly book: KeyBook;
  readonly xpub: string;
  readonly sealed_key: string;
  readonly created_at: Date;
}

export async function findSigningKey(
  db: Executor<SigningKeyTables>,
  book: KeyBook,
): Promise<SigningKeyRow | undefined> {
  return db.selectFrom('crypto_signing_keys').selectAll().where('book', '=', book).executeTakeFirst();
}

/** Inserts the book's key unless one is stored already (the first writer wins); true when this one was stored. */
export async function insertSigningKeyIfAbsent(db: Executor<SigningKeyTables>, row: SigningKeyRow): Promise<boolean> {
  const inserted = await db
    .insertInto('crypto_signing_keys')
    .values(row)
    .onConflict((conflict) => conflict.column('book').doNothing())
    .returning('book')
    .executeTakeFirst();
  return inserted !== undefined;
}

export async function listSigningKeys(db: Executor<SigningKeyTables>): Promise<SigningKeyRow[]> {
  return db.selectFrom('crypto_signing_keys').selectAll().orderBy('book').execute();
}

/** Compare-and-set: replaces the sealed value only if it is still `from` (a key rotation). */
export async function replaceSealedKey(
  db: Executor<SigningKeyTables>,
  book: KeyBook,
  from: string,
  to: string,
): Promise<boolean> {
  const updated = await db
    .updateTable('crypto_signing_keys')
    .set({ sealed_key: to })
    .where('book', '=', book)
    .where('sealed_key', '=', from)
    .executeTakeFirst();
  return updated.numUpdatedRows > 0n;
}

// SQL of custody reconciliation: its runs, each book's pause state and the
// operators' acknowledgements (migration 0027). Only src/crypto/custody/ writes them.
import type { Insertable, Selectable } from 'kysely';
import type { Executor, Tx } from '../../db/transaction.ts';
import type { LedgerBook } from '../../ledger/ledger-service.ts';
import type { CustodyAsset, CustodyTables } from './custody-tables.ts';

export type ReconciliationRow = Selectable<CustodyTables['crypto_custody_reconciliations']>;
export type BookStateRow = Selectable<CustodyTables['crypto_custody_books']>;
export type AcknowledgementRow = Selectable<CustodyTables['crypto_custody_acknowledgements']>;

export async function insertReconciliation(
  tx: Tx<CustodyTables>,
  row: Insertable<CustodyTables['crypto_custody_reconciliations']>,
): Promise<ReconciliationRow> {
  return tx.insertInto('crypto_custody_reconciliations').values(row).returningAll().executeTakeFirstOrThrow();
}

/** The book's state row, created on first use, locked for the rest of the transaction. */
export async function lockBookState(
  tx: Tx<CustodyTables>,
  book: LedgerBook,
  asset: CustodyAsset,
  now: Date,
): Promise<BookStateRow> {
  await tx
    .insertInto('crypto_custody_books')
    .values({
      book,
      asset,
      paused_since: null,
      paused_by_reconciliation: null,
      accepted_shortfall_micro: 0n,
      updated_at: now,
    })
    .onConflict((conflict) => conflict.columns(['book', 'asset']).doNothing())
    .execute();
  return tx
    .selectFrom('crypto_custody_books')
    .selectAll()
    .where('book', '=', book)
    .where('asset', '=', asset)
    .forUpdate()
    .executeTakeFirstOrThrow();
}

export async function updateBookState(
  tx: Tx<CustodyTables>,
  book: LedgerBook,
  asset: CustodyAsset,
  patch: Pick<BookStateRow, 'paused_since' | 'paused_by_reconciliation' | 'accepted_shortfall_micro' | 'updated_at'>,
): Promise<void> {
  await tx.updateTable('crypto_custody_books').set(patch).where('book', '=', book).where('asset', '=', asset).execute();
}

export async function findBookState(
  db: Executor<CustodyTables>,
  book: LedgerBook,
  asset: CustodyAsset,
): Promise<BookStateRow | undefined> {
  return db
    .selectFrom('crypto_custody_books')
    .selectAll()
    .where('book', '=', book)
    .where('asset', '=', asset)
    .executeTakeFirst();
}

/** The newest runs of a book, newest first; `judged` leaves out runs that failed to read. */
export async function latestReconciliations(
  db: Executor<CustodyTables>,
  book: LedgerBook,
  asset: CustodyAsset,
  options: { readonly limit: number; readonly judged?: boolean },
): Promise<ReconciliationRow[]> {
  let query = db
    .selectFrom('crypto_custody_reconciliations')
    .selectAll()
    .where('book', '=', book)
    .where('asset', '=', asset);
  if (options.judged) query = query.where('outcome', '<>', 'failed');
  return query.orderBy('started_at', 'desc').orderBy('id', 'desc').limit(options.limit).execute();
}

export async function insertAcknowledgement(
  tx: Tx<CustodyTables>,
  row: Insertable<CustodyTables['crypto_custody_acknowledgements']>,
): Promise<AcknowledgementRow> {
  return tx.insertInto('crypto_custody_acknowledgements').values(row).returningAll().executeTakeFirstOrThrow();
}

// The SQL of cold-storage moves (crypto_cold_moves, migration 0029).
import type { Insertable, Selectable, Updateable } from 'kysely';
import type { Executor, Tx } from '../../db/transaction.ts';
import type { ColdMoveStatus, ColdStorageTables } from './cold-storage-tables.ts';

export type ColdMoveRow = Selectable<ColdStorageTables['crypto_cold_moves']>;
export const ONE_IN_FLIGHT_INDEX = 'crypto_cold_moves_one_in_flight_idx';

export async function insertMove(
  tx: Tx<ColdStorageTables>,
  row: Insertable<ColdStorageTables['crypto_cold_moves']>,
): Promise<void> {
  await tx.insertInto('crypto_cold_moves').values(row).execute();
}

export async function lockMove(tx: Tx<ColdStorageTables>, id: string): Promise<ColdMoveRow | undefined> {
  return tx.selectFrom('crypto_cold_moves').selectAll().where('id', '=', id).forUpdate().executeTakeFirst();
}

/** Compare-and-set on the status. */
export async function updateMove(
  tx: Tx<ColdStorageTables>,
  id: string,
  from: ColdMoveStatus,
  patch: Updateable<ColdStorageTables['crypto_cold_moves']>,
): Promise<void> {
  await tx.updateTable('crypto_cold_moves').set(patch).where('id', '=', id).where('status', '=', from).execute();
}

export async function moveInFlight(
  db: Executor<ColdStorageTables>,
  chain: ColdMoveRow['chain'],
): Promise<ColdMoveRow | undefined> {
  return db
    .selectFrom('crypto_cold_moves')
    .selectAll()
    .where('chain', '=', chain)
    .where('status', '=', 'sending')
    .executeTakeFirst();
}

export async function recentMoves(
  db: Executor<ColdStorageTables>,
  chain: ColdMoveRow['chain'],
  limit: number,
): Promise<ColdMoveRow[]> {
  return db
    .selectFrom('crypto_cold_moves')
    .selectAll()
    .where('chain', '=', chain)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
    .execute();
}

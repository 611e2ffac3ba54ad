// SQL of cabinet sessions: a row per signed-in browser, found by its token's hash.
import type { Insertable, Selectable, Updateable } from 'kysely';
import type { Executor } from '../../db/transaction.ts';
import type { CabinetTables } from '../cabinet-tables.ts';

export type SessionRow = Selectable<CabinetTables['cabinet_sessions']>;
type Db = Executor<CabinetTables>;

export async function insertSession(db: Db, row: Insertable<CabinetTables['cabinet_sessions']>): Promise<void> {
  await db.insertInto('cabinet_sessions').values(row).execute();
}

export function findLiveSessionByTokenHash(db: Db, tokenHash: Uint8Array): Promise<SessionRow | undefined> {
  return db
    .selectFrom('cabinet_sessions')
    .selectAll()
    .where('token_hash', '=', tokenHash)
    .where('ended_at', 'is', null)
    .executeTakeFirst();
}

export async function updateSession(
  db: Db,
  sessionId: string,
  changes: Updateable<CabinetTables['cabinet_sessions']>,
): Promise<void> {
  await db.updateTable('cabinet_sessions').set(changes).where('id', '=', sessionId).execute();
}

export async function endSession(db: Db, userId: string, sessionId: string, at: Date): Promise<number> {
  const result = await db
    .updateTable('cabinet_sessions')
    .set({ ended_at: at })
    .where('id', '=', sessionId)
    .where('user_id', '=', userId)
    .where('ended_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

/** Ends every live session of the user but `exceptSessionId`; returns how many ended. */
export async function endSessionsOf(db: Db, userId: string, at: Date, exceptSessionId?: string): Promise<number> {
  let query = db
    .updateTable('cabinet_sessions')
    .set({ ended_at: at })
    .where('user_id', '=', userId)
    .where('ended_at', 'is', null);
  if (exceptSessionId !== undefined) query = query.where('id', '!=', exceptSessionId);
  const result = await query.executeTakeFirst();
  return Number(result.numUpdatedRows);
}

export function liveSessionsOf(db: Db, userId: string, now: Date): Promise<SessionRow[]> {
  return db
    .selectFrom('cabinet_sessions')
    .selectAll()
    .where('user_id', '=', userId)
    .where('ended_at', 'is', null)
    .where('expires_at', '>', now)
    .orderBy('last_seen_at', 'desc')
    .limit(100)
    .execute();
}

// SQL of team invitations (cabinet_invites): stored by the SHA-256 of their token.
import { sql, type Insertable, type Selectable } from 'kysely';
import type { Executor } from '../../db/transaction.ts';
import type { CabinetTables } from '../cabinet-tables.ts';

export type InviteRow = Selectable<CabinetTables['cabinet_invites']>;
type Db = Executor<CabinetTables>;

/**
 * Holds the merchant's invitations until the transaction ends: two invitations
 * of one email sent at once (a form sent twice) are decided one after the other,
 * so the second sees the first and is refused.
 */
export async function lockInvitesOf(db: Db, merchantId: string): Promise<void> {
  await sql`select pg_advisory_xact_lock(hashtext(${`paygate.invites.${merchantId}`}))`.execute(db);
}

export async function insertInvite(db: Db, row: Insertable<CabinetTables['cabinet_invites']>): Promise<void> {
  await db.insertInto('cabinet_invites').values(row).execute();
}

/** The invitation of a token, locked when `forUpdate` (accepting reads it under lock: a link works once). */
export function findInviteByTokenHash(
  db: Db,
  tokenHash: Uint8Array,
  forUpdate = false,
): Promise<InviteRow | undefined> {
  const query = db.selectFrom('cabinet_invites').selectAll().where('token_hash', '=', tokenHash);
  return (forUpdate ? query.forUpdate() : query).executeTakeFirst();
}

/** Invitations neither accepted nor revoked nor past their end, newest first. */
export function pendingInvitesOf(db: Db, merchantId: string, now: Date): Promise<InviteRow[]> {
  return db
    .selectFrom('cabinet_invites')
    .selectAll()
    .where('merchant_id', '=', merchantId)
    .where('accepted_at', 'is', null)
    .where('revoked_at', 'is', null)
    .where('expires_at', '>', now)
    .orderBy('created_at', 'desc')
    .execute();
}

export async function markAccepted(db: Db, inviteId: string, at: Date): Promise<void> {
  await db.updateTable('cabinet_invites').set({ accepted_at: at }).where('id', '=', inviteId).execute();
}

/** Revokes a pending invitation of the merchant; the number of rows changed (0: none such, or no longer pending). */
export async function revokeInvite(db: Db, merchantId: string, inviteId: string, at: Date): Promise<InviteRow[]> {
  return db
    .updateTable('cabinet_invites')
    .set({ revoked_at: at })
    .where('id', '=', inviteId)
    .where('merchant_id', '=', merchantId)
    .where('accepted_at', 'is', null)
    .where('revoked_at', 'is', null)
    .returningAll()
    .execute();
}

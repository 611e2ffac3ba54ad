// SQL of the sign-once executor: outgoing transfers, their signed attempts, and
// the executor's lease per chain.
import type { Insertable, Selectable } from 'kysely';
import type { Executor, Tx } from '../../db/transaction.ts';
import type { SendingTables } from './sending-tables.ts';

export type OutgoingTransferRow = Selectable<SendingTables['crypto_outgoing_transfers']>;
export type OutgoingAttemptRow = Selectable<SendingTables['crypto_outgoing_attempts']>;

export async function insertTransfer(tx: Tx, row: Insertable<SendingTables['crypto_outgoing_transfers']>): Promise<OutgoingTransferRow> {
  return tx.insertInto('crypto_outgoing_transfers').values(row).returningAll().executeTakeFirstOrThrow();
}

export async function findTransfer(db: Executor, id: string): Promise<OutgoingTransferRow | undefined> {
  return db.selectFrom('crypto_outgoing_transfers').selectAll().where('id', '=', id).executeTakeFirst();
}

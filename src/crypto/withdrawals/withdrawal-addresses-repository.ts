// SQL of the merchant's withdrawal address book (migration 0034).
import type { Insertable, Selectable } from 'kysely';
import type { Executor, Tx } from '../../db/transaction.ts';
import type { WithdrawalTables } from './withdrawals-tables.ts';

export type WithdrawalAddressRow = Selectable<WithdrawalTables['crypto_withdrawal_addresses']>;
type ChainName = WithdrawalAddressRow['chain'];

/** The partial unique index on (merchant_id, chain, address) of live entries: it decides between concurrent additions. */
export const WITHDRAWAL_ADDRESS_LIVE_INDEX = 'crypto_withdrawal_addresses_live_key';

/** A book holds at most this many live addresses (the page lists them all). */
export const WITHDRAWAL_ADDRESSES_MAX = 200;

export async function insertAddress(
  tx: Tx<WithdrawalTables>,
  row: Insertable<WithdrawalTables['crypto_withdrawal_addresses']>,
): Promise<WithdrawalAddressRow> {
  return tx.insertInto('crypto_withdrawal_addresses').values(row).returningAll().executeTakeFirstOrThrow();
}

/** The live entries of a book, newest first (at most WITHDRAWAL_ADDRESSES_MAX). */
export async function liveAddresses(
  db: Executor<WithdrawalTables>,
  merchantId: string,
  chain: ChainName,
): Promise<WithdrawalAddressRow[]> {
  return db
    .selectFrom('crypto_withdrawal_addresses')
    .selectAll()
    .where('merchant_id', '=', merchantId)
    .where('chain', '=', chain)
    .where('removed_at', 'is', null)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(WITHDRAWAL_ADDRESSES_MAX)
    .execute();
}

export async function findAddress(
  db: Executor<WithdrawalTables>,
  addressId: string,
): Promise<WithdrawalAddressRow | undefined> {
  return db.selectFrom('crypto_withdrawal_addresses').selectAll().where('id', '=', addressId).executeTakeFirst();
}

/** The entry, locked until the transaction ends (an approval reads it so a removal cannot pass it). */
export async function lockAddress(
  tx: Tx<WithdrawalTables>,
  addressId: string,
): Promise<WithdrawalAddressRow | undefined> {
  return tx
    .selectFrom('crypto_withdrawal_addresses')
    .selectAll()
    .where('id', '=', addressId)
    .forUpdate()
    .executeTakeFirst();
}

/** Marks a live entry removed; undefined when there is no such live entry. */
export async function removeAddress(
  tx: Tx<WithdrawalTables>,
  addressId: string,
  merchantId: string,
  removedBy: string,
  at: Date,
): Promise<WithdrawalAddressRow | undefined> {
  return tx
    .updateTable('crypto_withdrawal_addresses')
    .set({ removed_at: at, removed_by: removedBy })
    .where('id', '=', addressId)
    .where('merchant_id', '=', merchantId)
    .where('removed_at', 'is', null)
    .returningAll()
    .executeTakeFirst();
}

// SQL of cabinet withdrawals and of the merchant's single-person rule.
import { sql, type Insertable, type Selectable } from 'kysely';
import type { Executor, Tx } from '../../db/transaction.ts';
import { newestFirstPage, type ListWindow } from '../../db/list-page.ts';
import type { WithdrawalStatus, WithdrawalTables } from './withdrawals-tables.ts';

export type WithdrawalRow = Selectable<WithdrawalTables['crypto_withdrawals']>;

type ChainName = WithdrawalRow['chain'];

/** The merchant's "single person may withdraw up to" in micro-USDT for a book; null: every withdrawal waits. */
export async function singlePersonMax(
  db: Executor<WithdrawalTables>,
  merchantId: string,
  chain: ChainName,
): Promise<bigint | null> {
  const row = await db
    .selectFrom('crypto_withdrawal_rules')
    .select('single_person_max_micro')
    .where('merchant_id', '=', merchantId)
    .where('chain', '=', chain)
    .executeTakeFirst();
  return row?.single_person_max_micro ?? null;
}

/**
 * The merchant's single-person limit for a book, its rule row locked until the transaction ends: requests
 * under one rule then pass the check one at a time, each seeing what the one before it inserted.
 */
export async function lockSinglePersonMax(
  tx: Tx<WithdrawalTables>,
  merchantId: string,
  chain: ChainName,
): Promise<bigint | null> {
  const row = await tx
    .selectFrom('crypto_withdrawal_rules')
    .select('single_person_max_micro')
    .where('merchant_id', '=', merchantId)
    .where('chain', '=', chain)
    .forUpdate()
    .executeTakeFirst();
  return row?.single_person_max_micro ?? null;
}

/** Who asked, as the single-person budget counts them: a cabinet user by id, an operator by name. */
export interface Requester {
  readonly userId: string | null;
  readonly name: string;
}

/**
 * The amounts one requester sent without a second person since `since`: withdrawals never decided
 * (queued at creation under the rule) that did not fail. Rejected and cancelled ones were decided, so
 * they are out, and so are those a second person approved.
 */
export async function singlePersonSentSince(
  db: Executor<WithdrawalTables>,
  merchantId: string,
  chain: ChainName,
  requester: Requester,
  since: Date,
): Promise<bigint> {
  let builder = db
    .selectFrom('crypto_withdrawals')
    .select(sql<bigint>`coalesce(sum(amount_micro), 0)::int8`.as('total'))
    .where('merchant_id', '=', merchantId)
    .where('chain', '=', chain)
    .where('created_at', '>', since)
    .where('decided_by', 'is', null)
    .where('status', 'in', ['pending', 'processing', 'completed']);
  builder =
    requester.userId !== null
      ? builder.where('requested_by_user_id', '=', requester.userId)
      : builder
          .where('requested_by_user_id', 'is', null)
          .where(sql<string>`lower(requested_by)`, '=', requester.name.toLowerCase());
  const row = await builder.executeTakeFirstOrThrow();
  return BigInt(row.total);
}

export async function saveSinglePersonMax(
  db: Executor<WithdrawalTables>,
  merchantId: string,
  chain: ChainName,
  maxMicro: bigint | null,
  at: Date,
): Promise<void> {
  await db
    .insertInto('crypto_withdrawal_rules')
    .values({ merchant_id: merchantId, chain, single_person_max_micro: maxMicro, updated_at: at })
    .onConflict((oc) =>
      oc.columns(['merchant_id', 'chain']).doUpdateSet({ single_person_max_micro: maxMicro, updated_at: at }),
    )
    .execute();
}

export async function insertWithdrawal(
  tx: Tx<WithdrawalTables>,
  row: Insertable<WithdrawalTables['crypto_withdrawals']>,
): Promise<WithdrawalRow> {
  return tx.insertInto('crypto_withdrawals').values(row).returningAll().executeTakeFirstOrThrow();
}

/** The unique index on (merchant_id, chain, external_id) (migration 0024): it decides between concurrent requests. */
export const WITHDRAWAL_EXTERNAL_ID_INDEX = 'crypto_withdrawals_external_id_key';

export async function findByExternalId(
  db: Executor<WithdrawalTables>,
  merchantId: string,
  chain: WithdrawalRow['chain'],
  externalId: string,
): Promise<WithdrawalRow | undefined> {
  return db
    .selectFrom('crypto_withdrawals')
    .selectAll()
    .where('merchant_id', '=', merchantId)
    .where('chain', '=', chain)
    .where('external_id', '=', externalId)
    .executeTakeFirst();
}

export async function findWithdrawal(
  db: Executor<WithdrawalTables>,
  withdrawalId: string,
): Promise<WithdrawalRow | undefined> {
  return db.selectFrom('crypto_withdrawals').selectAll().where('id', '=', withdrawalId).executeTakeFirst();
}

export async function lockWithdrawal(
  tx: Tx<WithdrawalTables>,
  withdrawalId: string,
): Promise<WithdrawalRow | undefined> {
  return tx.selectFrom('crypto_withdrawals').selectAll().where('id', '=', withdrawalId).forUpdate().executeTakeFirst();
}

export async function updateWithdrawal(
  tx: Tx<WithdrawalTables>,
  withdrawalId: string,
  changes: Partial<
    Pick<
      WithdrawalRow,
      | 'outgoing_transfer_id'
      | 'tx_hash'
      | 'error_code'
      | 'error_message'
      | 'network_fee_actual_micro'
      | 'decided_by'
      | 'decided_by_user_id'
      | 'decided_at'
      | 'reject_reason'
      | 'completed_at'
    >
  > & { status: WithdrawalStatus; updated_at: Date },
): Promise<WithdrawalRow> {
  return tx
    .updateTable('crypto_withdrawals')
    .set(changes)
    .where('id', '=', withdrawalId)
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function listWithdrawals(
  db: Executor<WithdrawalTables>,
  query: ListWindow & {
    merchantId?: string | undefined;
    shopId?: string | undefined;
    status?: WithdrawalStatus | undefined;
  },
): Promise<WithdrawalRow[]> {
  let builder = db.selectFrom('crypto_withdrawals').selectAll();
  if (query.merchantId !== undefined) builder = builder.where('merchant_id', '=', query.merchantId);
  if (query.shopId !== undefined) builder = builder.where('shop_id', '=', query.shopId);
  if (query.status !== undefined) builder = builder.where('status', '=', query.status);
  return newestFirstPage(builder, query);
}

/** The shop of each withdrawal among `ids` (the executor tells a sandbox chain whose each transfer is). */
export async function shopsOfWithdrawals(
  db: Executor<WithdrawalTables>,
  ids: readonly string[],
): Promise<Map<string, string>> {
  if (ids.length === 0) return new Map();
  const rows = await db.selectFrom('crypto_withdrawals').select(['id', 'shop_id']).where('id', 'in', ids).execute();
  return new Map(rows.map((row) => [row.id, row.shop_id]));
}

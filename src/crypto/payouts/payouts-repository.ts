// SQL of payouts: per-shop settings, payouts, batches.
import { sql, type Insertable, type RawBuilder, type Selectable } from 'kysely';
import type { Executor, Tx } from '../../db/transaction.ts';
import { newestFirstPage, withinRange, type ListRange, type ListWindow } from '../../db/list-page.ts';
import { isDepositAddressSql } from '../receiving/address-allocation.ts';
import type { BatchStatus, PayoutStatus, PayoutTables } from './payouts-tables.ts';

export type PayoutRow = Selectable<PayoutTables['crypto_payouts']>;
export type BatchRow = Selectable<PayoutTables['crypto_payout_batches']>;
export type PayoutSettingsRow = Selectable<PayoutTables['crypto_payout_settings']>;

/** The unique (shop, external_id) of payouts: a batch item or a payout created elsewhere holds the id. */
export const PAYOUT_EXTERNAL_ID_CONSTRAINT = 'crypto_payouts_shop_id_external_id_key';
/** Rows per multi-row INSERT of batch items (15 columns each: far below PostgreSQL's parameter limit). */
const INSERT_CHUNK = 500;

export async function findSettings(db: Executor<PayoutTables>, shopId: string): Promise<PayoutSettingsRow | undefined> {
  return db.selectFrom('crypto_payout_settings').selectAll().where('shop_id', '=', shopId).executeTakeFirst();
}

export async function upsertSettings(
  db: Executor<PayoutTables>,
  row: Insertable<PayoutTables['crypto_payout_settings']>,
): Promise<void> {
  await db
    .insertInto('crypto_payout_settings')
    .values(row)
    .onConflict((oc) => oc.column('shop_id').doUpdateSet({ ...row }))
    .execute();
}

export async function insertPayouts(
  tx: Tx<PayoutTables>,
  rows: readonly Insertable<PayoutTables['crypto_payouts']>[],
): Promise<PayoutRow[]> {
  const inserted: PayoutRow[] = [];
  for (let start = 0; start < rows.length; start += INSERT_CHUNK) {
    inserted.push(
      ...(await tx
        .insertInto('crypto_payouts')
        .values(rows.slice(start, start + INSERT_CHUNK))
        .returningAll()
        .execute()),
    );
  }
  return inserted;
}

/** The CTE of the payouts' creating statement that holds the new payout rows (their events and records join it on `id`). */
export const NEW_PAYOUTS_CTE = 'new_payouts';
/** The CTE of the payouts' creating statement that holds the ids of the queued outgoing transfers. */
const NEW_OUTGOING_CTE = 'new_outgoing';

/** The parts of the payouts' creating statement. */
export interface ReservedPayoutsParts {
  readonly reservation: RawBuilder<unknown>;
  /** Data-modifying statement of the outgoing transfers, `returning id`. */
  readonly outgoing: RawBuilder<unknown>;
  readonly payouts: readonly Insertable<PayoutTables['crypto_payouts']>[];
  /** Data-modifying statement of the idempotency records (joining NEW_PAYOUTS_CTE). */
  readonly records: RawBuilder<unknown>;
  /** `name as (…)` CTEs joining NEW_PAYOUTS_CTE (the webhook events). */
  readonly dependents: readonly RawBuilder<unknown>[];
}

/**
 * The ONE statement (one round trip, no transaction) that creates single
 * payouts, each standing or falling on its own: the ledger's reservation CTEs first;
 * the outgoing transfers, each queued only with its reservation (`outgoing`
 * joins the reservation's written CTE); each payout row only with its outgoing
 * transfer; then the CTEs that join NEW_PAYOUTS_CTE (the idempotency records,
 * the webhook events). It yields the payouts written; one whose reservation was
 * refused is absent (and nothing of it was written). A unique key already taken
 * (a record, an external_id) fails the whole statement. Its text is the same
 * for any number of payouts (the rows travel as arrays).
 */
export function reservedPayoutsStatement(parts: ReservedPayoutsParts): RawBuilder<PayoutRow> {
  const instant = (value: Date | string | null | undefined) =>
    value === null || value === undefined ? null : new Date(value).toISOString();
  const column = <T>(pick: (row: Insertable<PayoutTables['crypto_payouts']>) => T) => parts.payouts.map(pick);
  return sql<PayoutRow>`
    with recursive ${parts.reservation},
    ${sql.id(NEW_OUTGOING_CTE)} as (${parts.outgoing}),
    ${sql.id(NEW_PAYOUTS_CTE)} as (
      insert into crypto_payouts (id, shop_id, external_id, batch_id, batch_index, network, chain, network_mode, recipient_address, amount_micro, network_fee_micro,
        service_fee_micro, total_debit_micro, trx_usdt_rate_micro, network_fee_actual_micro, status, outgoing_transfer_id, tx_hash, error_code,
        error_message, created_at, updated_at, completed_at)
      select p.id, p.shop_id, p.external_id, null, null, p.network, p.chain, p.network_mode, p.recipient_address, p.amount_micro, p.network_fee_micro,
             p.service_fee_micro, p.total_debit_micro, p.trx_usdt_rate_micro, null, p.status, p.outgoing_transfer_id, null, null, null,
             p.created_at, p.updated_at, null
        from unnest(${column((r) => r.id)}::text[], ${column((r) => r.shop_id)}::text[], ${column((r) => r.external_id)}::text[], ${column((r) => r.network)}::text[],
                    ${column((r) => r.chain)}::text[], ${column((r) => r.network_mode)}::text[], ${column((r) => r.recipient_address)}::text[], ${column((r) => r.amount_micro.toString())}::int8[],
                    ${column((r) => r.network_fee_micro.toString())}::int8[], ${column((r) => r.service_fee_micro.toString())}::int8[],
                    ${column((r) => r.total_debit_micro.toString())}::int8[], ${column((r) => r.trx_usdt_rate_micro.toString())}::int8[], ${column((r) => r.status)}::text[],
                    ${column((r) => r.outgoing_transfer_id ?? null)}::text[], ${column((r) => instant(r.created_at))}::timestamptz[], ${column((r) => instant(r.updated_at))}::timestamptz[])
               with ordinality as p(id, shop_id, external_id, network, chain, network_mode, recipient_address, amount_micro, network_fee_micro, service_fee_micro,
                    total_debit_micro, trx_usdt_rate_micro, status, outgoing_transfer_id, created_at, updated_at, position)
        join ${sql.table(NEW_OUTGOING_CTE)} o on o.id = p.outgoing_transfer_id
       order by p.position
      returning *
    ), new_payout_records as (${parts.records}),
    ${sql.join(parts.dependents)}
    select * from ${sql.table(NEW_PAYOUTS_CTE)}`;
}

export async function insertBatch(
  tx: Tx<PayoutTables>,
  row: Insertable<PayoutTables['crypto_payout_batches']>,
): Promise<BatchRow> {
  return tx.insertInto('crypto_payout_batches').values(row).returningAll().executeTakeFirstOrThrow();
}

export async function findPayoutOfShop(
  db: Executor<PayoutTables>,
  shopId: string,
  payoutId: string,
): Promise<PayoutRow | undefined> {
  return db
    .selectFrom('crypto_payouts')
    .selectAll()
    .where('id', '=', payoutId)
    .where('shop_id', '=', shopId)
    .executeTakeFirst();
}

/** What creating a single payout reads first: its shop's payout settings row (if any), the shop's payout holding its external_id (a single payout or a batch item), if any, and whether the recipient is a deposit address of ours. */
export interface CreationState {
  readonly settings: PayoutSettingsRow | undefined;
  readonly payout: PayoutRow | undefined;
  readonly recipientIsDepositAddress: boolean;
}

export interface CreationQuery {
  readonly shopId: string;
  readonly externalId: string;
  readonly recipient: string;
}

/** The creation state of each query, in the order given, in one statement (concurrent creations read together). */
export async function findCreationStates(
  db: Executor<PayoutTables>,
  queries: readonly CreationQuery[],
): Promise<CreationState[]> {
  const asked = sql<{ shop_id: string; external_id: string; recipient: string; position: string }>`(
    select * from unnest(${queries.map((q) => q.shopId)}::text[], ${queries.map((q) => q.externalId)}::text[], ${queries.map((q) => q.recipient)}::text[])
      with ordinality as u(shop_id, external_id, recipient, position))`;
  const rows = await db
    .selectFrom(asked.as('q'))
    .leftJoin('crypto_payout_settings as s', 's.shop_id', 'q.shop_id')
    .leftJoin('crypto_payouts as p', (join) =>
      join.onRef('p.shop_id', '=', 'q.shop_id').onRef('p.external_id', '=', 'q.external_id'),
    )
    .selectAll('p')
    .select([
      's.shop_id as settings_shop_id',
      's.enabled as settings_enabled',
      's.min_amount_micro as settings_min_amount_micro',
      's.max_amount_micro as settings_max_amount_micro',
      's.service_fee_fixed_micro as settings_service_fee_fixed_micro',
      's.service_fee_bps as settings_service_fee_bps',
      's.updated_at as settings_updated_at',
      isDepositAddressSql(sql.ref('q.recipient')).as('recipient_is_deposit_address'),
    ])
    .orderBy('q.position')
    .execute();
  if (rows.length !== queries.length)
    throw new Error(`payout creation states: ${rows.length} rows for ${queries.length} queries`);
  return rows.map((row) => {
    const {
      settings_shop_id,
      settings_enabled,
      settings_min_amount_micro,
      settings_max_amount_micro,
      settings_service_fee_fixed_micro,
      settings_service_fee_bps,
      settings_updated_at,
      recipient_is_deposit_address,
      ...payout
    } = row;
    const settings =
      settings_shop_id === null
        ? undefined
        : {
            shop_id: settings_shop_id,
            enabled: settings_enabled!,
            min_amount_micro: settings_min_amount_micro!,
            max_amount_micro: settings_max_amount_micro!,
            service_fee_fixed_micro: settings_service_fee_fixed_micro!,
            service_fee_bps: settings_service_fee_bps!,
            updated_at: settings_updated_at!,
          };
    return {
      settings,
      payout: payout.id === null ? undefined : (payout as PayoutRow),
      recipientIsDepositAddress: recipient_is_deposit_address,
    };
  });
}

export async function findBatchOfShop(
  db: Executor<PayoutTables>,
  shopId: string,
  batchId: string,
): Promise<BatchRow | undefined> {
  return db
    .selectFrom('crypto_payout_batches')
    .selectAll()
    .where('id', '=', batchId)
    .where('shop_id', '=', shopId)
    .executeTakeFirst();
}

/** The external_ids among `externalIds` that payouts of the shop already hold. */
export async function takenExternalIds(
  db: Executor<PayoutTables>,
  shopId: string,
  externalIds: readonly string[],
): Promise<string[]> {
  if (externalIds.length === 0) return [];
  const rows = await db
    .selectFrom('crypto_payouts')
    .select('external_id')
    .where('shop_id', '=', shopId)
    .where('external_id', 'in', externalIds)
    .execute();
  return rows.map((row) => row.external_id);
}

/** Which payouts of a shop a list holds: the API's filters, and the cabinet's window and search. */
export interface PayoutListFilter {
  readonly shopId: string;
  readonly status?: PayoutStatus | undefined;
  readonly externalId?: string | undefined;
  /** The cabinet's window: created between, amount (the recipient's) between. */
  readonly range?: ListRange | undefined;
  /** An exact payout id, external_id, recipient address or tx hash. */
  readonly search?: string | undefined;
}

export async function listPayouts(
  db: Executor<PayoutTables>,
  query: ListWindow & PayoutListFilter,
): Promise<PayoutRow[]> {
  let builder = db.selectFrom('crypto_payouts').selectAll().where('shop_id', '=', query.shopId);
  if (query.status !== undefined) builder = builder.where('status', '=', query.status);
  if (query.externalId !== undefined) builder = builder.where('external_id', '=', query.externalId);
  if (query.range) builder = withinRange(builder, query.range, 'amount_micro');
  const search = query.search;
  if (search !== undefined)
    builder = builder.where((eb) =>
      eb.or([
        eb('id', '=', search),
        eb('external_id', '=', search),
        eb('recipient_address', '=', search),
        eb('tx_hash', '=', search),
      ]),
    );
  return newestFirstPage(builder, query);
}

/** Which batches of a shop a list holds. */
export interface BatchListFilter {
  readonly shopId: string;
  readonly status?: BatchStatus | undefined;
  /** Created between; total debit between. */
  readonly range?: ListRange | undefined;
  /** An exact batch id or external_id. */
  readonly search?: string | undefined;
}

export async function listBatches(
  db: Executor<PayoutTables>,
  query: ListWindow & BatchListFilter,
): Promise<BatchRow[]> {
  let builder = db.selectFrom('crypto_payout_batches').selectAll().where('shop_id', '=', query.shopId);
  if (query.status !== undefined) builder = builder.where('status', '=', query.status);
  if (query.range) builder = withinRange(builder, query.range, 'total_debit_micro');
  const search = query.search;
  if (search !== undefined)
    builder = builder.where((eb) => eb.or([eb('id', '=', search), eb('external_id', '=', search)]));
  return newestFirstPage(builder, query);
}

/** The items of each batch per state (batches without items are absent). */
export async function itemCountsOfBatches(
  db: Executor<PayoutTables>,
  batchIds: readonly string[],
): Promise<Map<string, Record<PayoutStatus, number>>> {
  const counts = new Map<string, Record<PayoutStatus, number>>();
  if (batchIds.length === 0) return counts;
  const rows = await db
    .selectFrom('crypto_payouts')
    .select(['batch_id', 'status', (eb) => eb.fn.countAll<string>().as('count')])
    .where('batch_id', 'in', batchIds)
    .groupBy(['batch_id', 'status'])
    .execute();
  for (const row of rows) {
    const batchId = row.batch_id!;
    const of = counts.get(batchId) ?? { pending: 0, processing: 0, completed: 0, failed: 0 };
    of[row.status] = Number(row.count);
    counts.set(batchId, of);
  }
  return counts;
}

/** A batch's items in the order they were given. */
export async function batchItems(db: Executor<PayoutTables>, batchId: string): Promise<PayoutRow[]> {
  return db.selectFrom('crypto_payouts').selectAll().where('batch_id', '=', batchId).orderBy('batch_index').execute();
}

export async function batchItemCounts(
  db: Executor<PayoutTables>,
  batchId: string,
): Promise<Record<PayoutStatus, number>> {
  const rows = await db
    .selectFrom('crypto_payouts')
    .select(['status', (eb) => eb.fn.countAll<string>().as('count')])
    .where('batch_id', '=', batchId)
    .groupBy('status')
    .execute();
  const counts: Record<PayoutStatus, number> = { pending: 0, processing: 0, completed: 0, failed: 0 };
  for (const row of rows) counts[row.status] = Number(row.count);
  return counts;
}

/** Locks the payout an outgoing transfer belongs to. */
export async function lockPayout(tx: Tx<PayoutTables>, payoutId: string): Promise<PayoutRow | undefined> {
  return tx.selectFrom('crypto_payouts').selectAll().where('id', '=', payoutId).forUpdate().executeTakeFirst();
}

export async function lockBatch(tx: Tx<PayoutTables>, batchId: string): Promise<BatchRow | undefined> {
  return tx.selectFrom('crypto_payout_batches').selectAll().where('id', '=', batchId).forUpdate().executeTakeFirst();
}

export async function updatePayout(
  tx: Tx<PayoutTables>,
  payoutId: string,
  changes: Partial<
    Pick<PayoutRow, 'status' | 'tx_hash' | 'error_code' | 'error_message' | 'network_fee_actual_micro' | 'completed_at'>
  > & { updated_at: Date },
): Promise<PayoutRow> {
  return tx
    .updateTable('crypto_payouts')
    .set(changes)
    .where('id', '=', payoutId)
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function updateBatch(
  tx: Tx<PayoutTables>,
  batchId: string,
  changes: { status: BatchStatus; updated_at: Date; completed_at?: Date | null },
): Promise<BatchRow> {
  return tx
    .updateTable('crypto_payout_batches')
    .set(changes)
    .where('id', '=', batchId)
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** The shop of each payout among `ids` (the executor tells a sandbox chain whose each transfer is). */
export async function shopsOfPayouts(db: Executor<PayoutTables>, ids: readonly string[]): Promise<Map<string, string>> {
  if (ids.length === 0) return new Map();
  const rows = await db.selectFrom('crypto_payouts').select(['id', 'shop_id']).where('id', 'in', ids).execute();
  return new Map(rows.map((row) => [row.id, row.shop_id]));
}

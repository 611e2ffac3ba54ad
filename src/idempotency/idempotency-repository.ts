// SQL of the idempotency module: the records, keyed (shop, operation, key).
import { sql, type Insertable, type QueryCreator, type RawBuilder, type Selectable } from 'kysely';
import type { Database } from '../db/schema.ts';
import { joinAnchor, type CteAnchor } from '../db/statement-anchor.ts';
import type { Executor } from '../db/transaction.ts';
import type { IdempotencyTables } from './idempotency-tables.ts';

export type IdempotencyRecord = Selectable<IdempotencyTables['idempotency_records']>;
export type NewIdempotencyRecord = Insertable<IdempotencyTables['idempotency_records']>;

/** The constraint a second record for the same key runs into. */
export const RECORD_KEY_CONSTRAINT = 'idempotency_records_pkey';

export interface RecordKey {
  readonly shopId: string;
  readonly operation: string;
  readonly key: string;
}

export async function findRecord(
  db: Executor<IdempotencyTables>,
  at: RecordKey,
): Promise<IdempotencyRecord | undefined> {
  return db
    .selectFrom('idempotency_records')
    .selectAll()
    .where('shop_id', '=', at.shopId)
    .where('operation', '=', at.operation)
    .where('key', '=', at.key)
    .executeTakeFirst();
}

/** A plain insert: a record already there fails the statement (and its transaction) with a unique violation. */
export async function insertRecord(db: Executor<IdempotencyTables>, record: NewIdempotencyRecord): Promise<void> {
  await db.insertInto('idempotency_records').values(record).execute();
}

/**
 * The record and the caller's resource in ONE statement: the resource's insert
 * runs as a data-modifying CTE of the record's insert, so both land or neither
 * does, and a record already there fails the whole statement. One round trip
 * and one commit for a create, instead of a claim, a transaction and a completion.
 */
export async function insertRecordWithResource(
  db: Executor<IdempotencyTables>,
  record: NewIdempotencyRecord,
  insertResource: (creator: QueryCreator<Database>) => { compile: () => unknown } & object,
): Promise<void> {
  // The CTE's name is never read: PostgreSQL runs a data-modifying WITH to completion all the same.
  await db
    .with('created_resource', (creator) => insertResource(creator) as never)
    .insertInto('idempotency_records')
    .values(record)
    .execute();
}

/**
 * Completed records as a data-modifying CTE's statement of a caller that
 * creates their resources in CTEs of its own, each record written only when its
 * resource is: the anchor CTE of the same statement holds its `resource_id`
 * (an invoice's one record; payouts created together, each standing or falling
 * on its own).
 */
export function recordsInsertFrom(records: readonly NewIdempotencyRecord[], anchor: CteAnchor): RawBuilder<unknown> {
  const instant = (value: Date | string | null | undefined) =>
    value === null || value === undefined ? null : new Date(value).toISOString();
  const column = <T>(pick: (record: NewIdempotencyRecord) => T) => records.map(pick);
  return sql`insert into idempotency_records
      (shop_id, operation, key, request_hash, state, lease_token, locked_until, response_status, response_body, resource_id, created_at, expires_at)
    select r.shop_id, r.operation, r.key, r.request_hash, r.state, r.lease_token, r.locked_until, r.response_status, r.response_body, r.resource_id, r.created_at, r.expires_at
      from unnest(${column((r) => r.shop_id)}::text[], ${column((r) => r.operation)}::text[], ${column((r) => r.key)}::text[], ${column((r) => r.request_hash)}::text[],
                  ${column((r) => r.state)}::text[], ${column((r) => r.lease_token)}::text[], ${column((r) => instant(r.locked_until))}::timestamptz[],
                  ${column((r) => r.response_status ?? null)}::int4[], ${column((r) => r.response_body ?? null)}::text[], ${column((r) => r.resource_id ?? null)}::text[],
                  ${column((r) => instant(r.created_at))}::timestamptz[], ${column((r) => instant(r.expires_at))}::timestamptz[])
             as r(shop_id, operation, key, request_hash, state, lease_token, locked_until, response_status, response_body, resource_id, created_at, expires_at)
      ${joinAnchor(anchor, sql.ref('r.resource_id'))}`;
}

/**
 * Deletes the record only if it is still the one that was read (same lease
 * token and state): the compare-and-delete that retires a stale record without
 * ever removing a newer one.
 */
export async function deleteRecordIfUnchanged(
  db: Executor<IdempotencyTables>,
  at: RecordKey,
  leaseToken: string,
  state: IdempotencyRecord['state'],
): Promise<boolean> {
  const deleted = await db
    .deleteFrom('idempotency_records')
    .where('shop_id', '=', at.shopId)
    .where('operation', '=', at.operation)
    .where('key', '=', at.key)
    .where('lease_token', '=', leaseToken)
    .where('state', '=', state)
    .executeTakeFirst();
  return deleted.numDeletedRows === 1n;
}

/** Deletes up to `limit` records past their window that no live request holds, oldest first; returns how many. */
export async function purgeExpiredRecords(db: Executor<IdempotencyTables>, now: Date, limit: number): Promise<number> {
  const result = await sql`
    delete from idempotency_records
     where (shop_id, operation, key) in (
       select shop_id, operation, key from idempotency_records
        where expires_at < ${now} and (state = 'completed' or locked_until < ${now})
        order by expires_at
        limit ${limit})`.execute(db);
  return Number(result.numAffectedRows ?? 0n);
}

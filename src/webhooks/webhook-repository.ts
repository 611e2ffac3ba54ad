// All SQL of the webhooks module: events (the outbox), deliveries (the queue,
// claimed with FOR UPDATE SKIP LOCKED under a lease) and the attempt log.
import { sql, type Insertable, type RawBuilder } from 'kysely';
import { joinAnchor, type CteAnchor } from '../db/statement-anchor.ts';
import type { Executor } from '../db/transaction.ts';
import type { AttemptOutcome, DeliveryStatus, WebhookTables } from './webhook-tables.ts';

export type EventInsert = Insertable<WebhookTables['webhook_events']>;
export type DeliveryInsert = Insertable<WebhookTables['webhook_deliveries']>;

export async function insertEvent(db: Executor<WebhookTables>, row: EventInsert): Promise<void> {
  await db.insertInto('webhook_events').values(row).execute();
}

export async function insertDelivery(db: Executor<WebhookTables>, row: DeliveryInsert): Promise<void> {
  await db.insertInto('webhook_deliveries').values(row).execute();
}

/** A claimed delivery with everything one attempt needs. */
export interface ClaimedDelivery {
  readonly deliveryId: string;
  readonly eventId: string;
  readonly shopId: string;
  readonly url: string;
  readonly attemptCount: number;
  readonly maxAttempts: number;
  readonly leaseToken: string;
  readonly payload: string;
  readonly secret: string;
  readonly previousSecret: string | null;
  readonly previousSecretExpiresAt: Date | null;
}

interface ClaimRow {
  delivery_id: string;
  event_id: string;
  shop_id: string;
  url: string;
  attempt_count: number;
  max_attempts: number;
  lease_token: string;
  payload: string;
  webhook_secret: string;
  previous_webhook_secret: string | null;
  previous_webhook_secret_expires_at: Date | null;
}

/**
 * Claims up to `limit` due deliveries for this worker until `lockedUntil`, in one
 * statement. Rows another worker has locked are skipped, not waited for; rows
 * under another worker's unexpired lease are not due.
 */
export async function claimDueDeliveries(
  db: Executor<WebhookTables>,
  input: { now: Date; lockedUntil: Date; leaseToken: string; limit: number },
): Promise<ClaimedDelivery[]> {
  // The statement lives in migration 0005 as a function, so that its plan can be pinned.
  const result = await sql<ClaimRow>`
    select * from claim_webhook_deliveries(${input.now}, ${input.lockedUntil}, ${input.leaseToken}, ${input.limit})`.execute(
    db,
  );
  return oldestFirst(result.rows);
}

/** Oldest first (ids are time-ordered TypeIDs): a claim's join gives no order of its own. */
function oldestFirst(rows: readonly ClaimRow[]): ClaimedDelivery[] {
  return rows
    .map(toClaimedDelivery)
    .sort((a, b) => (a.deliveryId < b.deliveryId ? -1 : a.deliveryId > b.deliveryId ? 1 : 0));
}

/** A claimed delivery `d` with its event `e` and its shop's endpoint `w`: what an attempt needs. */
const CLAIMED_DELIVERY_COLUMNS = sql`d.id as delivery_id, d.event_id, d.shop_id, d.url, d.attempt_count, d.max_attempts,
  d.lease_token, e.payload, w.webhook_secret, w.previous_webhook_secret, w.previous_webhook_secret_expires_at`;
const CLAIMED_DELIVERY_JOINS = sql`join webhook_events e on e.id = d.event_id
  join webhook_endpoints w on w.shop_id = d.shop_id`;

function toClaimedDelivery(row: ClaimRow): ClaimedDelivery {
  return {
    deliveryId: row.delivery_id,
    eventId: row.event_id,
    shopId: row.shop_id,
    url: row.url,
    attemptCount: Number(row.attempt_count),
    maxAttempts: Number(row.max_attempts),
    leaseToken: row.lease_token,
    payload: row.payload,
    secret: row.webhook_secret,
    previousSecret: row.previous_webhook_secret,
    previousSecretExpiresAt: row.previous_webhook_secret_expires_at,
  };
}

/** A delivery this worker put off at its receiver's pace, and the time it was booked for (epoch ms). */
export interface PacedPostponement {
  readonly id: string;
  readonly untilMs: number;
}

/**
 * Claims deliveries put off at a receiver's pace before their time, when the receiver turns out to
 * have room sooner. Only rows exactly as the postponement left them are taken: still pending,
 * under no lease, due at the booked time (a retry, a resend or another worker's postponement
 * since has moved it, and it is left alone).
 */
export async function claimPacedDeliveries(
  db: Executor<WebhookTables>,
  input: { now: Date; lockedUntil: Date; leaseToken: string; postponements: readonly PacedPostponement[] },
): Promise<ClaimedDelivery[]> {
  if (input.postponements.length === 0) return [];
  const ids = input.postponements.map((item) => item.id);
  const untilMs = input.postponements.map((item) => item.untilMs);
  // Found by key. "Still pending" is not said: a booked next_attempt_at is one (the table's check
  // ties the two). Said, it lets the planner, which counts almost no pending row among a year's
  // delivered ones, take the (status, shop_id, created_at) index and read every pending row for
  // these few (migration 0058 has the measure).
  const result = await sql<ClaimRow>`
    with claimed as (
      update webhook_deliveries
         set locked_until = ${input.lockedUntil}, lease_token = ${input.leaseToken}, updated_at = ${input.now}
       where id = any(array(
               select d.id from webhook_deliveries d
                 join unnest(${ids}::text[], ${untilMs}::float8[]) as p (id, until_ms) on p.id = d.id
                where d.id = any(${ids}::text[])
                  and d.lease_token is null
                  and d.next_attempt_at = to_timestamp(p.until_ms / 1000)
                  for update of d skip locked))
      returning id, event_id, shop_id, url, attempt_count, max_attempts, lease_token
    )
    select ${CLAIMED_DELIVERY_COLUMNS} from claimed d ${CLAIMED_DELIVERY_JOINS}`.execute(db);
  return oldestFirst(result.rows);
}

/** Loads one delivery already claimed under `leaseToken` (the inline test send). */
export async function findClaimedDelivery(
  db: Executor<WebhookTables>,
  deliveryId: string,
  leaseToken: string,
): Promise<ClaimedDelivery | undefined> {
  const result = await sql<ClaimRow>`
    select ${CLAIMED_DELIVERY_COLUMNS} from webhook_deliveries d ${CLAIMED_DELIVERY_JOINS}
     where d.id = ${deliveryId} and d.lease_token = ${leaseToken}`.execute(db);
  const row = result.rows[0];
  return row ? toClaimedDelivery(row) : undefined;
}

/** One finished attempt, and what it does to its delivery. */
export interface AttemptRecord {
  readonly attemptId: string;
  readonly attemptNumber: number;
  readonly deliveryId: string;
  readonly eventId: string;
  /** Where the attempt was sent. */
  readonly url: string;
  readonly leaseToken: string;
  readonly startedAt: Date;
  readonly durationMs: number;
  readonly outcome: AttemptOutcome;
  readonly statusCode: number | null;
  readonly error: string | null;
  readonly responseBody: string | null;
  /** The delivery's status after this attempt. */
  readonly status: DeliveryStatus;
  /** When the next attempt is due (also logged on the attempt); null when none is. */
  readonly nextAttemptAt: Date | null;
  readonly now: Date;
}

/**
 * Logs the attempts and, for each delivery whose lease this worker still holds,
 * moves it on and releases it: one statement for the whole batch, so a crash
 * leaves either all of it or none. Returns the ids of the deliveries updated
 * (an attempt whose lease had been lost is logged but changes nothing).
 */
export async function recordAttempts(
  db: Executor<WebhookTables>,
  records: readonly AttemptRecord[],
): Promise<Set<string>> {
  if (records.length === 0) return new Set();
  // One JSON parameter for the whole batch: far cheaper to build and send than a dozen parameters
  // per row. Times go as epoch milliseconds, which serialize several times faster than Dates.
  const rows = JSON.stringify(
    records.map((record) => ({
      id: record.attemptId,
      delivery_id: record.deliveryId,
      event_id: record.eventId,
      url: record.url,
      lease_token: record.leaseToken,
      attempt_number: record.attemptNumber,
      started_ms: record.startedAt.getTime(),
      duration_ms: record.durationMs,
      outcome: record.outcome,
      status_code: record.statusCode,
      error: record.error,
      response_body: record.responseBody,
      status: record.status,
      next_ms: record.nextAttemptAt === null ? null : record.nextAttemptAt.getTime(),
      now_ms: record.now.getTime(),
    })),
  );
  // The ids as an array too: the planner sizes `= any(array)` exactly and looks the rows up by key;
  // joined only to json_to_recordset (always estimated at 100 rows) it may scan the whole table.
  const ids = records.map((record) => record.deliveryId);
  const result = await sql<{ id: string }>`
    with input as (
      select r.id, r.delivery_id, r.event_id, r.url, r.lease_token, r.attempt_number, to_timestamp(r.started_ms / 1000) as started_at, r.duration_ms,
             r.outcome, r.status_code, r.error, r.response_body, r.status, to_timestamp(r.next_ms / 1000) as next_attempt_at,
             to_timestamp(r.now_ms / 1000) as now
        from json_to_recordset(${rows}::json) as r (
          id text, delivery_id text, event_id text, url text, lease_token text, attempt_number int, started_ms float8, duration_ms int, outcome text,
          status_code int, error text, response_body text, status text, next_ms float8, now_ms float8)
    ),
    attempt as (
      insert into webhook_attempts
        (id, delivery_id, event_id, attempt_number, url, started_at, duration_ms, outcome, status_code, error, response_body, next_retry_at)
      select id, delivery_id, event_id, attempt_number, url, started_at, duration_ms, outcome, status_code, error, response_body, next_attempt_at
        from input
    )
    update webhook_deliveries d
       set status = i.status, attempt_count = d.attempt_count + 1, next_attempt_at = i.next_attempt_at,
           last_attempt_at = i.started_at, locked_until = null, lease_token = null, updated_at = i.now
      from input i
     where d.id = any(${ids}::text[]) and d.id = i.delivery_id and d.lease_token = i.lease_token
    returning d.id`.execute(db);
  return new Set(result.rows.map((row) => row.id));
}

/** `recordAttempts` for one attempt; false when the lease had been lost. */
export async function recordAttempt(db: Executor<WebhookTables>, record: AttemptRecord): Promise<boolean> {
  return (await recordAttempts(db, [record])).has(record.deliveryId);
}

/** Gives back claimed deliveries that were never attempted (a stopping worker). */
export async function releaseDeliveries(
  db: Executor<WebhookTables>,
  claims: readonly { id: string; leaseToken: string }[],
): Promise<void> {
  for (const claim of claims) {
    await db
      .updateTable('webhook_deliveries')
      .set({ locked_until: null, lease_token: null })
      .where('id', '=', claim.id)
      .where('lease_token', '=', claim.leaseToken)
      .execute();
  }
}

/**
 * Puts off claimed deliveries without counting an attempt, each until its own
 * time, and releases them: claims pass them by until then. Only rows still
 * under the given lease move, and none is brought forward.
 */
export async function postponeDeliveries(
  db: Executor<WebhookTables>,
  postponements: readonly { id: string; leaseToken: string; until: Date }[],
  now: Date,
): Promise<void> {
  if (postponements.length === 0) return;
  const ids = postponements.map((item) => item.id);
  const tokens = postponements.map((item) => item.leaseToken);
  const untilMs = postponements.map((item) => item.until.getTime());
  // Found by key through the id array, as in recordAttempts. Pending is said as "has a next
  // attempt" (the same, by the table's check), for the reason given in claimPacedDeliveries.
  await sql`
    update webhook_deliveries d
       set next_attempt_at = greatest(d.next_attempt_at, to_timestamp(c.until_ms / 1000)), locked_until = null, lease_token = null, updated_at = ${now}
      from unnest(${ids}::text[], ${tokens}::text[], ${untilMs}::float8[]) as c (id, lease_token, until_ms)
     where d.id = any(${ids}::text[]) and d.id = c.id and d.lease_token = c.lease_token and d.next_attempt_at is not null`.execute(
    db,
  );
}

/**
 * When a worker next has something to claim, as far as the table says after `now`: the
 * earliest retry or postponement still ahead, or the earliest lease (another worker's
 * attempt in flight) to run out. Undefined when neither exists.
 */
export async function nextDeliveryDueAt(db: Executor<WebhookTables>, now: Date): Promise<Date | undefined> {
  // A function (migration 0058) so that its plan is pinned to the due index on a year-old table.
  const result = await sql<{ due: Date | null }>`select webhook_deliveries_next_due_at(${now}) as due`.execute(db);
  return result.rows[0]?.due ?? undefined;
}

export async function countDueDeliveries(db: Executor<WebhookTables>, now: Date): Promise<number> {
  const row = await db
    .selectFrom('webhook_deliveries')
    .select((eb) => eb.fn.countAll<bigint>().as('count'))
    .where('status', '=', 'pending')
    .where('next_attempt_at', '<=', now)
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

// ---- the API's reads and writes ----

export type EventStatus = DeliveryStatus | 'no_destination';

export interface EventRow {
  id: string;
  type: string;
  created_at: Date;
  payload: string;
  destination_url: string | null;
  delivery_id: string | null;
  status: DeliveryStatus | null;
  attempt_count: number | null;
  next_attempt_at: Date | null;
  last_attempt_at: Date | null;
}

export interface PageKey {
  readonly at: Date;
  readonly id: string;
}

function eventsQuery(db: Executor<WebhookTables>, shopId: string) {
  return db
    .selectFrom('webhook_events as e')
    .leftJoin('webhook_deliveries as d', 'd.event_id', 'e.id')
    .select([
      'e.id',
      'e.type',
      'e.created_at',
      'e.payload',
      'e.destination_url',
      'd.id as delivery_id',
      'd.status',
      'd.attempt_count',
      'd.next_attempt_at',
      'd.last_attempt_at',
    ])
    .where('e.shop_id', '=', shopId);
}

export interface EventListFilter {
  readonly type?: string | undefined;
  readonly status?: EventStatus | undefined;
  /** Events created at or after this instant, and before `createdBefore`. */
  readonly createdFrom?: Date | undefined;
  readonly createdBefore?: Date | undefined;
  readonly eventId?: string | undefined;
  /** Events about this object (its id in `subject_ids`, the GIN index of migration 0035). */
  readonly subjectId?: string | undefined;
  readonly after?: PageKey | undefined;
  readonly limit: number;
}

export async function listEvents(
  db: Executor<WebhookTables>,
  shopId: string,
  filter: EventListFilter,
): Promise<EventRow[]> {
  let query = eventsQuery(db, shopId);
  if (filter.type !== undefined) query = query.where('e.type', '=', filter.type);
  if (filter.createdFrom !== undefined) query = query.where('e.created_at', '>=', filter.createdFrom);
  if (filter.createdBefore !== undefined) query = query.where('e.created_at', '<', filter.createdBefore);
  if (filter.eventId !== undefined) query = query.where('e.id', '=', filter.eventId);
  if (filter.subjectId !== undefined)
    query = query.where(sql<boolean>`e.subject_ids @> array[${filter.subjectId}]::text[]`);
  if (filter.status === 'no_destination') query = query.where('d.id', 'is', null);
  else if (filter.status !== undefined) query = query.where('d.status', '=', filter.status);
  if (filter.after) query = query.where(sql<boolean>`(e.created_at, e.id) < (${filter.after.at}, ${filter.after.id})`);
  return query.orderBy('e.created_at', 'desc').orderBy('e.id', 'desc').limit(filter.limit).execute();
}

/** Up to `limit` of the shop's events about one object, oldest first, with their delivery. */
export async function eventsAbout(
  db: Executor<WebhookTables>,
  shopId: string,
  subjectId: string,
  limit: number,
): Promise<EventRow[]> {
  return eventsQuery(db, shopId)
    .where(sql<boolean>`e.subject_ids @> array[${subjectId}]::text[]`)
    .orderBy('e.created_at')
    .orderBy('e.id')
    .limit(limit)
    .execute();
}

/** The ids of the objects the shop's event is about (migration 0035); empty for an unknown event. */
export async function eventSubjectIds(db: Executor<WebhookTables>, shopId: string, eventId: string): Promise<string[]> {
  const row = await db
    .selectFrom('webhook_events')
    .select('subject_ids')
    .where('id', '=', eventId)
    .where('shop_id', '=', shopId)
    .executeTakeFirst();
  return row?.subject_ids ?? [];
}

export async function findEvent(
  db: Executor<WebhookTables>,
  shopId: string,
  eventId: string,
): Promise<EventRow | undefined> {
  return eventsQuery(db, shopId).where('e.id', '=', eventId).executeTakeFirst();
}

export async function listAttempts(
  db: Executor<WebhookTables>,
  eventId: string,
  filter: { after?: PageKey | undefined; limit: number },
) {
  let query = db.selectFrom('webhook_attempts').selectAll().where('event_id', '=', eventId);
  if (filter.after) query = query.where(sql<boolean>`(started_at, id) < (${filter.after.at}, ${filter.after.id})`);
  return query.orderBy('started_at', 'desc').orderBy('id', 'desc').limit(filter.limit).execute();
}

/** Makes a delivery due at `now`. A finished one gets exactly one more automatic attempt. */
export async function requeueDelivery(db: Executor<WebhookTables>, deliveryId: string, now: Date): Promise<void> {
  await requeueDeliveries(db, [deliveryId], now);
}

/** `requeueDelivery` for many deliveries in one statement. */
async function requeueDeliveries(
  db: Executor<WebhookTables>,
  deliveryIds: readonly string[],
  now: Date,
): Promise<void> {
  if (deliveryIds.length === 0) return;
  await db
    .updateTable('webhook_deliveries')
    .set((eb) => ({
      max_attempts: eb
        .case()
        .when('status', '=', 'pending')
        .then(eb.ref('max_attempts'))
        .else(eb(eb.ref('attempt_count'), '+', 1))
        .end(),
      status: 'pending',
      next_attempt_at: now,
      updated_at: now,
    }))
    .where('id', 'in', [...deliveryIds])
    .execute();
}

/**
 * Requeues a shop's failed deliveries of events created at or after `since`,
 * oldest first, at most `limit` of them (locked, so two runs do not take the
 * same ones). Returns how many it requeued and whether failed ones remain.
 */
export async function requeueFailedSince(
  db: Executor<WebhookTables>,
  shopId: string,
  input: { since: Date; limit: number; now: Date },
): Promise<{ requeued: number; more: boolean }> {
  const rows = await db
    .selectFrom('webhook_deliveries')
    .select('id')
    .where('shop_id', '=', shopId)
    .where('status', '=', 'failed')
    .where('created_at', '>=', input.since)
    .orderBy('created_at')
    .orderBy('id')
    .limit(input.limit + 1)
    .forUpdate()
    .execute();
  const taken = rows.slice(0, input.limit).map((row) => row.id);
  await requeueDeliveries(db, taken, input.now);
  return { requeued: taken.length, more: rows.length > input.limit };
}

export interface ShopWebhookSettings {
  webhook_url: string | null;
  webhook_secret: string;
  previous_webhook_secret: string | null;
  previous_webhook_secret_expires_at: Date | null;
}

/** A new shop's endpoint row: no URL yet, its first signing secret (sealed). */
export async function insertEndpoint(db: Executor<WebhookTables>, shopId: string, sealedSecret: string): Promise<void> {
  await db
    .insertInto('webhook_endpoints')
    .values({
      shop_id: shopId,
      webhook_url: null,
      webhook_secret: sealedSecret,
      previous_webhook_secret: null,
      previous_webhook_secret_expires_at: null,
    })
    .execute();
}

export async function findShopWebhookSettings(
  db: Executor<WebhookTables>,
  shopId: string,
): Promise<ShopWebhookSettings | undefined> {
  return db
    .selectFrom('webhook_endpoints')
    .select(['webhook_url', 'webhook_secret', 'previous_webhook_secret', 'previous_webhook_secret_expires_at'])
    .where('shop_id', '=', shopId)
    .forUpdate()
    .executeTakeFirst();
}

export async function updateShopWebhookSettings(
  db: Executor<WebhookTables>,
  shopId: string,
  changes: Partial<ShopWebhookSettings>,
): Promise<void> {
  await db.updateTable('webhook_endpoints').set(changes).where('shop_id', '=', shopId).execute();
}

export interface StoredShopSecrets {
  id: string;
  webhook_secret: string;
  previous_webhook_secret: string | null;
}

/** Shops' stored signing secrets, in id order after `afterId` (sealing and re-wrapping walk them in batches). */
export async function listShopSecrets(
  db: Executor<WebhookTables>,
  afterId: string,
  limit: number,
): Promise<StoredShopSecrets[]> {
  return db
    .selectFrom('webhook_endpoints')
    .select(['shop_id as id', 'webhook_secret', 'previous_webhook_secret'])
    .where('shop_id', '>', afterId)
    .orderBy('shop_id')
    .limit(limit)
    .execute();
}

/** Replaces a shop's stored secrets only if they are still what was read; true when it did. */
export async function replaceShopSecrets(
  db: Executor<WebhookTables>,
  shopId: string,
  change: { from: Omit<StoredShopSecrets, 'id'>; to: Omit<StoredShopSecrets, 'id'> },
): Promise<boolean> {
  const result = await db
    .updateTable('webhook_endpoints')
    .set(change.to)
    .where('shop_id', '=', shopId)
    .where('webhook_secret', '=', change.from.webhook_secret)
    .where((eb) =>
      change.from.previous_webhook_secret === null
        ? eb('previous_webhook_secret', 'is', null)
        : eb('previous_webhook_secret', '=', change.from.previous_webhook_secret),
    )
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

export type AttemptRow = Awaited<ReturnType<typeof listAttempts>>[number];
/** Event payloads (JSON texts) as rows `p(payload, n)`, n from 1, each payload's text exactly as given (see insertEvents). */
function payloadsByPosition(payloads: readonly string[]): RawBuilder<unknown> {
  return sql`json_array_elements(${`[${payloads.join(',')}]`}::json) with ordinality as p(payload, n)`;
}

/**
 * Many events created at one moment, in one statement (a batch of state changes
 * writing their outbox rows together). The payloads travel as ONE json array,
 * split by json_array_elements (which hands back each element's text as sent):
 * as a text[] every payload would be escaped element by element on both sides,
 * three times the cost for a batch of thousands.
 */
/** Subject ids travel joined by commas, which no id of ours holds; none: an empty array. */
function subjectsText(ids: readonly string[] | undefined): string {
  return (ids ?? []).join(',');
}

export async function insertEvents(
  db: Executor<WebhookTables>,
  rows: readonly Omit<EventInsert, 'created_at'>[],
  createdAt: Date,
): Promise<void> {
  if (rows.length === 0) return;
  await sql`
    insert into webhook_events (id, shop_id, type, payload, destination_url, created_at, subject_ids)
    select e.id, e.shop_id, e.type, p.payload::text, e.destination_url, ${createdAt.toISOString()}::timestamptz, string_to_array(e.subjects, ',')
      from unnest(${rows.map((row) => row.id)}::text[], ${rows.map((row) => row.shop_id)}::text[], ${rows.map((row) => row.type)}::text[],
                  ${rows.map((row) => row.destination_url ?? null)}::text[], ${rows.map((row) => subjectsText(row.subject_ids))}::text[])
                  with ordinality as e(id, shop_id, type, destination_url, subjects, n)
      join ${payloadsByPosition(rows.map((row) => row.payload))} using (n)
     order by n`.execute(db);
}

/** The first deliveries of events created at `at`: due at once, unclaimed. */
export async function insertDeliveries(
  db: Executor<WebhookTables>,
  rows: readonly Pick<DeliveryInsert, 'id' | 'event_id' | 'shop_id' | 'url'>[],
  at: Date,
  maxAttempts: number,
): Promise<void> {
  if (rows.length === 0) return;
  const when = at.toISOString();
  await sql`
    insert into webhook_deliveries (id, event_id, shop_id, url, max_attempts, next_attempt_at, locked_until, lease_token, created_at, updated_at)
    select d.id, d.event_id, d.shop_id, d.url, ${maxAttempts}::int4, ${when}::timestamptz, null, null, ${when}::timestamptz, ${when}::timestamptz
      from unnest(${rows.map((row) => row.id)}::text[], ${rows.map((row) => row.event_id)}::text[], ${rows.map((row) => row.shop_id)}::text[],
                  ${rows.map((row) => row.url)}::text[]) as d(id, event_id, shop_id, url)`.execute(db);
}

/** The webhook URL of each of these shops that has one. */
export async function shopWebhookUrls(
  db: Executor<WebhookTables>,
  shopIds: readonly string[],
): Promise<Map<string, string>> {
  if (shopIds.length === 0) return new Map();
  const rows = await db
    .selectFrom('webhook_endpoints')
    .select(['shop_id', 'webhook_url'])
    .where('shop_id', 'in', [...shopIds])
    .execute();
  return new Map(
    rows.flatMap((row) => (row.webhook_url === null ? [] : [[row.shop_id, row.webhook_url] as [string, string]])),
  );
}

/**
 * Shop events and their first deliveries as two data-modifying CTEs
 * (`<name>_event`, `<name>_delivery`) of a caller's statement: each event is
 * written only when the anchor CTE holds its `anchorKey`; its delivery only when
 * the shop has a webhook URL (read in the same statement), due at once. The
 * payloads travel as one json array (see insertEvents).
 */
export function shopEventsInsertFrom(
  events: readonly {
    readonly id: string;
    readonly shopId: string;
    readonly type: string;
    readonly payload: string;
    readonly subjectIds: readonly string[];
    readonly deliveryId: string;
    readonly anchorKey: string;
  }[],
  createdAt: Date,
  maxAttempts: number,
  anchor: CteAnchor,
  name: string,
): RawBuilder<unknown> {
  const at = createdAt.toISOString();
  return sql`${sql.id(`${name}_event`)} as (
      insert into webhook_events (id, shop_id, type, payload, destination_url, created_at, subject_ids)
      select e.id, e.shop_id, e.type, p.payload::text, (select webhook_url from webhook_endpoints w where w.shop_id = e.shop_id), ${at}::timestamptz,
             string_to_array(e.subjects, ',')
        from unnest(${events.map((e) => e.id)}::text[], ${events.map((e) => e.shopId)}::text[], ${events.map((e) => e.type)}::text[],
                    ${events.map((e) => e.anchorKey)}::text[], ${events.map((e) => subjectsText(e.subjectIds))}::text[])
                    with ordinality as e(id, shop_id, type, anchor_key, subjects, n)
        join ${payloadsByPosition(events.map((e) => e.payload))} using (n)
        ${joinAnchor(anchor, sql.ref('e.anchor_key'))}
       order by n
      returning id, shop_id, destination_url
    ), ${sql.id(`${name}_delivery`)} as (
      insert into webhook_deliveries (id, event_id, shop_id, url, max_attempts, next_attempt_at, locked_until, lease_token, created_at, updated_at)
      select d.delivery_id, e.id, e.shop_id, e.destination_url, ${maxAttempts}::int4, ${at}::timestamptz, null, null, ${at}::timestamptz, ${at}::timestamptz
        from ${sql.table(`${name}_event`)} e
        join unnest(${events.map((e) => e.id)}::text[], ${events.map((e) => e.deliveryId)}::text[]) as d(event_id, delivery_id) on d.event_id = e.id
       where e.destination_url is not null
      returning 1
    )`;
}

/** A position in a shop's event stream: after the event `eventId` of the transaction `txId` (xid8 as text). */
export interface StreamPosition {
  readonly txId: string;
  readonly eventId: string;
}

export interface StreamedEventRow {
  readonly id: string;
  readonly type: string;
  readonly payload: string;
  readonly txId: string;
  readonly createdAt: Date;
}

/**
 * The shop's events after `after` in stream order, created at `since` or later: only those of
 * transactions older than every transaction still running, so none can commit behind them later.
 * `heldBack` says that events past them are committed but not yet safe to pass (an older
 * transaction is still open): the caller looks again shortly.
 */
export async function eventsAfter(
  db: Executor<WebhookTables>,
  input: { shopId: string; after: StreamPosition; since: Date; limit: number },
): Promise<{ events: StreamedEventRow[]; heldBack: boolean }> {
  const result = await sql<{
    id: string;
    type: string;
    payload: string;
    tx_id: string;
    created_at: Date;
    settled: boolean;
  }>`
    select id, type, payload, tx_id::text as tx_id, created_at,
           tx_id < pg_snapshot_xmin(pg_current_snapshot()) as settled
      from webhook_events
     where shop_id = ${input.shopId}
       and tx_id is not null
       and (tx_id, id) > (${input.after.txId}::xid8, ${input.after.eventId})
       and created_at >= ${input.since}
     order by tx_id, id
     limit ${input.limit}`.execute(db);
  const settled = result.rows.filter((row) => row.settled);
  return {
    events: settled.map((row) => ({
      id: row.id,
      type: row.type,
      payload: row.payload,
      txId: row.tx_id,
      createdAt: row.created_at,
    })),
    heldBack: settled.length < result.rows.length,
  };
}

/** Where the stream stands after the shop's event `eventId`; undefined when the shop has no such streamable event. */
export async function streamPositionOf(
  db: Executor<WebhookTables>,
  shopId: string,
  eventId: string,
): Promise<StreamPosition | undefined> {
  const row = await sql<{ tx_id: string }>`
    select tx_id::text as tx_id from webhook_events
     where id = ${eventId} and shop_id = ${shopId} and tx_id is not null`.execute(db);
  const txId = row.rows[0]?.tx_id;
  return txId === undefined ? undefined : { txId, eventId };
}

/**
 * The position "now": every transaction that may still commit an event is at or after it. Events of
 * transactions already committed past it may still be streamed once (at least once, never missed).
 */
export async function currentStreamPosition(db: Executor<WebhookTables>): Promise<StreamPosition> {
  const row = await sql<{ xmin: string }>`select pg_snapshot_xmin(pg_current_snapshot())::text as xmin`.execute(db);
  const xmin = row.rows[0]?.xmin;
  if (xmin === undefined) throw new Error('the database returned no snapshot');
  // Empty sorts before every event id, so the stream starts with the oldest transaction still running.
  return { txId: xmin, eventId: '' };
}

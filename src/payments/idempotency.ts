// Idempotency-Key handling of POST /v1/payments (spec 4.1, rules 1–5).
//
// A record keyed by (shop_id, key) is claimed with INSERT … ON CONFLICT DO
// NOTHING before any work. The claimant holds a lease (`lease_token`,
// `locked_until`); it completes the record with the exact response bytes in
// the same transaction that creates the payment, or deletes it when the
// request fails, so a 500 leaves nothing behind. A record whose lease ran out
// (its process died mid-request) can be taken over; a record older than 24 h
// is a new key. When the database went away mid-request the delete cannot run
// either: this process then remembers the claim as abandoned, and a retry may
// take it over at once instead of waiting out the lease.
import { sql } from 'kysely';
import { createHash, randomUUID } from 'node:crypto';
import type { Clock } from '../clock.ts';
import type { Db, Executor, Tx } from '../db/transaction.ts';
import { isDatabaseUnavailable } from '../db/database-errors.ts';
import { DuplicateExternalIdError, IdempotencyInProgressError } from '../errors.ts';

export const IDEMPOTENCY_WINDOW_MS = 24 * 60 * 60 * 1000;
export const IDEMPOTENCY_LEASE_MS = 30_000;
export const IDEMPOTENCY_KEY_MAX_LENGTH = 255;
const CLAIM_ATTEMPTS_MAX = 5;
const ABANDONED_LEASES_MAX = 10_000;

/**
 * Lease tokens of claims whose request has already failed here and could not
 * release them (the database was unreachable). Their owner is gone for certain,
 * so their records need not wait for the lease to run out. In-process: a retry
 * that reaches another instance waits for the lease.
 */
const abandonedLeaseTokens = new Set<string>();

function abandonLease(token: string): void {
  if (abandonedLeaseTokens.size >= ABANDONED_LEASES_MAX) {
    abandonedLeaseTokens.delete(abandonedLeaseTokens.values().next().value!);
  }
  abandonedLeaseTokens.add(token);
}

/** JSON with object keys sorted at every level: equal bodies give equal text whatever the key order. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map((item) => canonicalJson(item)).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.keys(value)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${canonicalJson((value as Record<string, unknown>)[key])}`);
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

export function requestHash(body: unknown): string {
  return createHash('sha256').update(canonicalJson(body)).digest('hex');
}

export interface StoredResponse {
  readonly status: number;
  readonly body: string;
}

export interface IdempotencyLease {
  readonly shopId: string;
  readonly key: string;
  readonly token: string;
}

export type ClaimResult = { readonly kind: 'claimed'; readonly lease: IdempotencyLease } | { readonly kind: 'replay'; readonly response: StoredResponse };

/**
 * Claims the key for this request, or returns the stored response of the same
 * request. Throws 409 duplicate_external_id for a different body and 409
 * invalid_request (IdempotencyInProgressError) while the first request runs.
 */
export async function claimIdempotencyKey(db: Db, clock: Clock, shopId: string, key: string, hash: string): Promise<ClaimResult> {
  for (let attempt = 1; attempt <= CLAIM_ATTEMPTS_MAX; attempt++) {
    const token = randomUUID();
    let result: ClaimResult | undefined;
    try {
      result = await claimOnce(db, clock, shopId, key, hash, token);
    } catch (error) {
      // The insert or takeover may have reached the database before the connection broke.
      if (isDatabaseUnavailable(error)) abandonLease(token);
      throw error;
    }
    if (result) return result;
  }
  throw new IdempotencyInProgressError();
}

/**
 * One claim attempt; undefined when the record changed under us and the claim should be retried.
 * No transaction is needed: the insert and the takeover are each one atomic statement, and the
 * takeover is a compare-and-set on the lease token read just before, so two requests can never
 * both hold the key. (Autocommit saves BEGIN and COMMIT, two of a payment's nine round trips.)
 */
async function claimOnce(
  db: Executor,
  clock: Clock,
  shopId: string,
  key: string,
  hash: string,
  token: string,
): Promise<ClaimResult | undefined> {
  const now = clock.now();
  // A fresh in-progress claim held by this request, whether inserted or taken over.
  const claim = {
    request_hash: hash,
    state: 'in_progress' as const,
    lease_token: token,
    locked_until: new Date(now.getTime() + IDEMPOTENCY_LEASE_MS),
    response_status: null,
    response_body: null,
    payment_id: null,
  };
  const inserted = await db
    .insertInto('payment_idempotency_keys')
    .values({ shop_id: shopId, idempotency_key: key, ...claim, created_at: now })
    .onConflict((conflict) => conflict.columns(['shop_id', 'idempotency_key']).doNothing())
    .returning('lease_token')
    .executeTakeFirst();
  if (inserted) return { kind: 'claimed', lease: { shopId, key, token } };

  const existing = await db
    .selectFrom('payment_idempotency_keys')
    .selectAll()
    .where('shop_id', '=', shopId)
    .where('idempotency_key', '=', key)
    .executeTakeFirst();
  if (!existing) return undefined; // its owner failed and deleted it a moment ago: claim again

  const windowOver = existing.created_at.getTime() + IDEMPOTENCY_WINDOW_MS <= now.getTime();
  const leaseOver =
    existing.state === 'in_progress' &&
    (existing.locked_until.getTime() <= now.getTime() || abandonedLeaseTokens.has(existing.lease_token));
  if (windowOver || leaseOver) {
    // Take the record over, but only if nobody else did since we read it, and it did not
    // complete meanwhile (a commit in flight when the connection broke still lands).
    const taken = await db
      .updateTable('payment_idempotency_keys')
      .set({ ...claim, created_at: windowOver ? now : existing.created_at })
      .where('shop_id', '=', shopId)
      .where('idempotency_key', '=', key)
      .where('lease_token', '=', existing.lease_token)
      .where('state', '=', existing.state)
      .returning('lease_token')
      .executeTakeFirst();
    if (!taken) return undefined;
    abandonedLeaseTokens.delete(existing.lease_token);
    return { kind: 'claimed', lease: { shopId, key, token } };
  }
  if (existing.request_hash !== hash) {
    throw new DuplicateExternalIdError(
      'This Idempotency-Key was already used with a different request body; use a new key for a new payment.',
    );
  }
  if (existing.state === 'completed') {
    return { kind: 'replay', response: { status: existing.response_status!, body: existing.response_body! } };
  }
  throw new IdempotencyInProgressError();
}

/**
 * Stores the response inside the transaction that created the resource.
 * Throws (rolling the transaction back) when the lease was lost to a takeover.
 */
export async function completeIdempotencyKey(
  tx: Tx,
  lease: IdempotencyLease,
  response: StoredResponse,
  paymentId: string,
): Promise<void> {
  const updated = await tx
    .updateTable('payment_idempotency_keys')
    .set({ state: 'completed', response_status: response.status, response_body: response.body, payment_id: paymentId })
    .where('shop_id', '=', lease.shopId)
    .where('idempotency_key', '=', lease.key)
    .where('lease_token', '=', lease.token)
    .where('state', '=', 'in_progress')
    .executeTakeFirst();
  if (updated.numUpdatedRows !== 1n) throw new IdempotencyInProgressError();
}

/**
 * Forgets an unfinished claim after a failed request, so the repeat starts afresh.
 * Deleting only an in-progress record is safe even if the failed transaction did
 * commit after all: it completed the record, which is then kept.
 */
export async function releaseIdempotencyKey(db: Db, lease: IdempotencyLease): Promise<void> {
  try {
    await db
      .deleteFrom('payment_idempotency_keys')
      .where('shop_id', '=', lease.shopId)
      .where('idempotency_key', '=', lease.key)
      .where('lease_token', '=', lease.token)
      .where('state', '=', 'in_progress')
      .execute();
  } catch (error) {
    abandonLease(lease.token);
    throw error;
  }
}

/**
 * Deletes up to `limit` records whose 24 h window is over (and that no live
 * request holds), oldest first; returns how many. A key purged is simply new.
 */
export async function purgeExpiredIdempotencyKeys(db: Db, now: Date, limit: number): Promise<number> {
  const cutoff = new Date(now.getTime() - IDEMPOTENCY_WINDOW_MS);
  const result = await sql`
    delete from payment_idempotency_keys
     where (shop_id, idempotency_key) in (
       select shop_id, idempotency_key from payment_idempotency_keys
        where created_at < ${cutoff} and (state = 'completed' or locked_until < ${now})
        order by created_at
        limit ${limit})`.execute(db);
  return Number(result.numAffectedRows ?? 0n);
}

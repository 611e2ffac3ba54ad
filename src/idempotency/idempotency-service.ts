// Idempotency of every create operation. A record keyed (shop, operation, key)
// — the key is an Idempotency-Key header or an external_id — names the first
// request made with it by its fingerprint (the validated, normalized request)
// and what it created. A repeat with the same fingerprint gets the first
// outcome; a different fingerprint is 409 duplicate_external_id; a repeat while
// the first is still running is 409 invalid_request (IdempotencyInProgressError).
//
// Two ways to create under a key, one per shape of work:
// - createAtomically: the work is one INSERT; the record and the resource land in
//   one statement (one round trip). A concurrent duplicate waits on the record's
//   key for the few milliseconds that statement runs, then finds it and replays.
//   createAtomicallyWith: the same for a statement of several rows the caller writes.
// - createUnderKey / createOrReplay (findPrior + recordCreated inside
//   inIdempotentTransaction): the work needs a transaction of several statements
//   (reads, ledger postings); the record is written in that transaction, and a
//   concurrent duplicate that lost the race on it is rolled back and run again,
//   finding the winner's record. priorOutcome answers a repeat before work that
//   calls out.
// The table also has room for an in-progress record under a lease (`state`,
// `lease_token`, `locked_until`): no path writes one now; one left there is
// honoured until its lease ends.
import { randomUUID } from 'node:crypto';
import type { QueryCreator } from 'kysely';
import type { Clock } from '../clock.ts';
import type { Database } from '../db/schema.ts';
import { inTransaction, isUniqueViolation, type Db, type Executor, type Tx } from '../db/transaction.ts';
import { DuplicateExternalIdError, IdempotencyInProgressError } from '../errors.ts';
import * as repository from './idempotency-repository.ts';
import type { IdempotencyRecord, NewIdempotencyRecord, RecordKey } from './idempotency-repository.ts';
import { requestFingerprint } from './request-fingerprint.ts';

// For a module that writes the record inside its own one statement (createAtomicallyWith):
// the records' INSERT as a CTE, the constraint a second record runs into, the row's type.
export { recordsInsertFrom, RECORD_KEY_CONSTRAINT, type NewIdempotencyRecord } from './idempotency-repository.ts';

export const IDEMPOTENCY_KEY_MAX_LENGTH = 255;
/** Bounds the rounds of "the record changed under us, look again". */
const SETTLE_ATTEMPTS_MAX = 5;

/** How one operation's keys behave. */
export interface IdempotencyRule {
  /** What the key names, e.g. 'payment.create'; keys of different operations never meet. */
  readonly operation: string;
  /** How long a key names its first request (spec 4.1: 24 h); null: for as long as the resource exists (external_id rules). */
  readonly windowMs: number | null;
  /** What a repeat gets: the first response byte for byte (spec 4.1), or the resource as it is now (spec 4.2's "the existing payout"). */
  readonly replay: 'stored-response' | 'current-resource';
  /** The 409 duplicate_external_id message for the same key with different parameters. */
  readonly conflictMessage: string;
}

/** One request under a key. */
export interface KeyedRequest {
  readonly shopId: string;
  readonly key: string;
  /** requestFingerprint() of the request as validated and normalized. */
  readonly fingerprint: string;
}

/** A request under `key` of the shop, fingerprinted from its fields as validated and normalized. */
export function keyedRequest(shopId: string, key: string, fields: Readonly<Record<string, unknown>>): KeyedRequest {
  return { shopId, key, fingerprint: requestFingerprint(fields) };
}

export interface StoredResponse {
  readonly status: number;
  readonly body: string;
}

/** What a first request created; `response` is required when the rule replays stored responses. */
export interface Created {
  readonly resourceId: string;
  readonly response?: StoredResponse;
}

/** The outcome of an earlier request with the same key and fingerprint. */
export type Prior =
  | { readonly kind: 'replay'; readonly response: StoredResponse }
  | { readonly kind: 'existing'; readonly resourceId: string };

function recordKey(rule: IdempotencyRule, request: KeyedRequest): RecordKey {
  return { shopId: request.shopId, operation: rule.operation, key: request.key };
}

/** A stored-response rule needs the response it will replay. */
function assertStorable(rule: IdempotencyRule, created: Created): void {
  if (rule.replay === 'stored-response' && !created.response) {
    throw new Error(`idempotency rule ${rule.operation} replays stored responses, but no response was given to store`);
  }
}

/** The record of this request, completed with what it created. */
function completedRecord(
  clock: Clock,
  rule: IdempotencyRule,
  request: KeyedRequest,
  created: Created,
): NewIdempotencyRecord {
  assertStorable(rule, created);
  const now = clock.now();
  return {
    shop_id: request.shopId,
    operation: rule.operation,
    key: request.key,
    request_hash: request.fingerprint,
    state: 'completed',
    lease_token: randomUUID(),
    locked_until: now,
    response_status: created.response?.status ?? null,
    response_body: created.response?.body ?? null,
    resource_id: created.resourceId,
    created_at: now,
    expires_at: rule.windowMs === null ? null : new Date(now.getTime() + rule.windowMs),
  };
}

/**
 * What an existing record means for this request: the prior outcome, a 409
 * (thrown), or 'stale' when the key is free again — its window is over, or it
 * is an unfinished claim whose owner is gone — and the record may be retired.
 */
function judge(rule: IdempotencyRule, request: KeyedRequest, record: IdempotencyRecord, now: Date): Prior | 'stale' {
  const windowOver = record.expires_at !== null && record.expires_at.getTime() <= now.getTime();
  const ownerGone = record.state === 'in_progress' && record.locked_until.getTime() <= now.getTime();
  if (windowOver || ownerGone) return 'stale';
  if (record.request_hash !== request.fingerprint) throw new DuplicateExternalIdError(rule.conflictMessage);
  if (record.state === 'in_progress') throw new IdempotencyInProgressError();
  if (rule.replay === 'stored-response') {
    return { kind: 'replay', response: { status: record.response_status!, body: record.response_body! } };
  }
  return { kind: 'existing', resourceId: record.resource_id! };
}

/**
 * Reads the record that holds the key: its prior outcome, a 409, or undefined
 * when the key is free (no record, or a stale one retired here) and the caller
 * should try to create again.
 */
async function settleExisting(
  db: Executor,
  clock: Clock,
  rule: IdempotencyRule,
  request: KeyedRequest,
): Promise<Prior | undefined> {
  const key = recordKey(rule, request);
  const record = await repository.findRecord(db, key);
  if (!record) return undefined;
  const verdict = judge(rule, request, record, clock.now());
  if (verdict !== 'stale') return verdict;
  // Compare-and-delete: only the record judged stale, never one that replaced it meanwhile.
  await repository.deleteRecordIfUnchanged(db, key, record.lease_token, record.state);
  return undefined;
}

/**
 * Creates the resource and its record in one statement (`insertResource` builds
 * the resource's INSERT), or returns the prior outcome of the key. Any other
 * error of the insert (a clash on the resource's own unique columns) is thrown.
 */
export async function createAtomically(
  db: Db,
  clock: Clock,
  rule: IdempotencyRule,
  request: KeyedRequest,
  created: Created,
  insertResource: (creator: QueryCreator<Database>) => { compile: () => unknown } & object,
): Promise<{ readonly kind: 'created' } | Prior> {
  for (let attempt = 1; attempt <= SETTLE_ATTEMPTS_MAX; attempt++) {
    try {
      await repository.insertRecordWithResource(db, completedRecord(clock, rule, request, created), insertResource);
      return { kind: 'created' };
    } catch (error) {
      if (!isUniqueViolation(error, repository.RECORD_KEY_CONSTRAINT)) throw error;
    }
    const prior = await settleExisting(db, clock, rule, request);
    if (prior) return prior;
  }
  throw new IdempotencyInProgressError();
}

/**
 * createAtomically for work that is one statement the caller writes itself,
 * several rows in data-modifying CTEs with the record among them
 * (repository.recordsInsertFrom): `insert` runs it with this request's record
 * and returns what it created. A unique violation of the record's key, or of one
 * of `keyConstraints` (the resource's own unique key on the same key, which a
 * concurrent duplicate can reach first), means an earlier request holds the key:
 * its outcome is returned; a violation of one of `keyConstraints` with no record
 * for the key is thrown as it is (something else holds the resource's key).
 */
export async function createAtomicallyWith<T>(
  db: Db,
  clock: Clock,
  rule: IdempotencyRule,
  request: KeyedRequest,
  created: Created,
  insert: (record: NewIdempotencyRecord) => Promise<T>,
  keyConstraints: readonly string[] = [],
): Promise<{ readonly kind: 'created'; readonly value: T } | Prior> {
  for (let attempt = 1; attempt <= SETTLE_ATTEMPTS_MAX; attempt++) {
    let violation: unknown;
    try {
      return { kind: 'created', value: await insert(completedRecord(clock, rule, request, created)) };
    } catch (error) {
      if (
        !isUniqueViolation(error, repository.RECORD_KEY_CONSTRAINT) &&
        !keyConstraints.some((constraint) => isUniqueViolation(error, constraint))
      )
        throw error;
      violation = error;
    }
    const prior = await settleExisting(db, clock, rule, request);
    if (prior) return prior;
    // The resource's own key is held by something without a record here (say, a batch item): the caller's to explain.
    if (!isUniqueViolation(violation, repository.RECORD_KEY_CONSTRAINT)) throw violation;
  }
  throw new IdempotencyInProgressError();
}

/**
 * Inside the caller's transaction, once the request is validated: the prior
 * outcome of the key, a 409 (thrown), or undefined when the key is free — the
 * caller then creates and calls recordCreated in the same transaction.
 */
export async function findPrior(
  tx: Tx,
  clock: Clock,
  rule: IdempotencyRule,
  request: KeyedRequest,
): Promise<Prior | undefined> {
  // A stale record is retired inside this transaction; a request that claims the key meanwhile
  // makes recordCreated fail, and inIdempotentTransaction runs the work again.
  return settleExisting(tx, clock, rule, request);
}

/** Writes the record of what this transaction created; a concurrent winner makes it fail with a unique violation. */
export async function recordCreated(
  tx: Tx,
  clock: Clock,
  rule: IdempotencyRule,
  request: KeyedRequest,
  created: Created,
): Promise<void> {
  await repository.insertRecord(tx, completedRecord(clock, rule, request, created));
}

/**
 * A transaction that uses findPrior/recordCreated: when it loses the race for a
 * key to a concurrent request, it is rolled back and run once more, and then
 * finds the winner's record.
 */
export async function inIdempotentTransaction<T>(db: Db, work: (tx: Tx) => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await inTransaction(db, work);
    } catch (error) {
      if (attempt < SETTLE_ATTEMPTS_MAX && isUniqueViolation(error, repository.RECORD_KEY_CONSTRAINT)) continue;
      throw error;
    }
  }
}

/** One create under a key: its rule, the request, and what a repeat is shown. */
export interface KeyedCreation<T> {
  readonly rule: IdempotencyRule;
  readonly request: KeyedRequest;
  /** What a repeat gets, read in the transaction that found the key's prior outcome. */
  readonly showPrior: (tx: Tx, prior: Prior) => Promise<T>;
}

/**
 * Before work that calls out (a chain node, a quote): the key's prior outcome
 * as shown to a repeat, a 409 (thrown), or undefined when the key is free. The
 * transaction of createUnderKey asks again: the key may be taken meanwhile.
 */
export async function priorOutcome<T>(db: Db, clock: Clock, creation: KeyedCreation<T>): Promise<T | undefined> {
  return inTransaction(db, async (tx) => {
    const prior = await findPrior(tx, clock, creation.rule, creation.request);
    return prior && creation.showPrior(tx, prior);
  });
}

/**
 * THE create-under-a-key sequence for work of several statements, inside the
 * caller's idempotent transaction: the key's prior outcome shown, or `create`
 * runs and calls `record` with what it created. Call `record` as soon as the
 * resource's id is known: a concurrent duplicate then waits on the key instead
 * of racing the work, and when it loses, inIdempotentTransaction runs it again
 * and it finds the winner's record.
 */
export async function createOrReplay<T>(
  tx: Tx,
  clock: Clock,
  creation: KeyedCreation<T>,
  create: (record: (created: Created) => Promise<void>) => Promise<T>,
): Promise<T> {
  const prior = await findPrior(tx, clock, creation.rule, creation.request);
  if (prior) return creation.showPrior(tx, prior);
  return create((created) => recordCreated(tx, clock, creation.rule, creation.request, created));
}

/** createOrReplay in its own idempotent transaction. */
export async function createUnderKey<T>(
  db: Db,
  clock: Clock,
  creation: KeyedCreation<T>,
  create: (tx: Tx, record: (created: Created) => Promise<void>) => Promise<T>,
): Promise<T> {
  return inIdempotentTransaction(db, (tx) => createOrReplay(tx, clock, creation, (record) => create(tx, record)));
}

/**
 * The row a 'current-resource' rule's prior outcome names, read by `find`; `resource` names it in
 * the errors. The row commits with its record, so a missing row, like a stored response, is a broken invariant.
 */
export async function priorResource<Row>(
  prior: Prior,
  resource: string,
  find: (resourceId: string) => Promise<Row | undefined>,
): Promise<Row> {
  if (prior.kind !== 'existing') throw new Error(`${resource} idempotency returns the current resource`);
  const row = await find(prior.resourceId);
  if (!row) throw new Error(`${resource} ${prior.resourceId} of an idempotency record is missing`);
  return row;
}

/** Deletes up to `limit` records whose window is over; returns how many. A purged key is simply new. */
export async function purgeExpiredRecords(db: Db, now: Date, limit: number): Promise<number> {
  return repository.purgeExpiredRecords(db, now, limit);
}

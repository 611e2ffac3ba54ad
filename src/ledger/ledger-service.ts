// The ledger's module API. Other modules call these functions INSIDE their own
// transaction (`tx`), so a money movement commits together with the state
// change that caused it, or not at all.
//
//   transfer  posted at once            reserve  pending (a reservation)
//   post      all or part of a reservation, the rest released
//   voidPending  the whole reservation released
//
// Every call is idempotent by the caller's id: a repeat with the same id and the
// same parameters returns the first result and changes nothing; the same id with
// other parameters is 409 duplicate_external_id. `executeLinked` runs a chain of
// them that succeeds or fails as a whole (a payout's amount and its fee).
//
// Concurrency: the touched account rows are locked FOR UPDATE in ascending id
// order (ledger-repository.ts `lockAccounts`), then checked and written. All
// checks happen before the first write, so a refused chain writes nothing; an
// error thrown here must abort the caller's transaction (inTransaction does).
import assert from 'node:assert/strict';
import type { Clock } from '../clock.ts';
import { isUniqueViolation, type Executor, type Tx } from '../db/transaction.ts';
import { InvalidRequestError } from '../errors.ts';
import { newId } from '../ids.ts';
import type { LedgerBook, LedgerCurrency, LedgerTables, TransferStatus } from './ledger-tables.ts';

// What other modules may name of the ledger's model; they never import its tables.
export type { LedgerBook, TransferStatus } from './ledger-tables.ts';
import {
  assertBalanced,
  assertLoneWritten,
  assertTotalsValid,
  assertTransfersWellFormed,
  MAX_AMOUNT_MINOR,
} from './ledger-invariants.ts';
import * as repository from './ledger-repository.ts';
import {
  differentBooks,
  differentCurrencies,
  insufficientFunds,
  noSuchAccount,
  noSuchReservation,
  noSuchTransfer,
  notReservation,
  postAboveReservation,
  reservationClosed,
  reservationExpired,
  reversalAboveRemainder,
  reversalNotPosted,
  transferIdsTaken,
} from './ledger-refusals.ts';
import type { AccountRow, AccountTotals, NewOperation, TransferRow } from './ledger-repository.ts';

export type TransferType =
  | 'payment'
  | 'payment_fee'
  | 'capture_unapplied'
  | 'deposit'
  | 'payout'
  | 'payout_fee'
  | 'network_fee'
  | 'refund'
  | 'transfer'
  | 'withdrawal'
  | 'reversal';

interface LedgerReference {
  /** What caused the movement: `payment`, `payout`, `transfer`, … */
  readonly type: string;
  readonly id: string;
}

export interface TransferInput {
  /** The caller's idempotency id, unique across the ledger, e.g. `payout:po_…:amount`. */
  readonly id: string;
  readonly debitAccountId: string;
  readonly creditAccountId: string;
  /** Minor units (kopecks, micro-USDT), > 0. */
  readonly amount: bigint;
  readonly type: TransferType;
  readonly reference: LedgerReference;
  /**
   * Reservations only: how many seconds it may stay open. Past that it can no
   * longer be posted, and the reservation expiry worker voids it.
   */
  readonly timeoutSeconds?: number | undefined;
}

/** The longest a reservation may stay open: 30 days. */
export const MAX_TIMEOUT_SECONDS = 30 * 24 * 3600;

export interface PostInput {
  readonly id: string;
  /** The caller's id of the reservation to post. */
  readonly pendingId: string;
  /** How much of the reservation to post (1..reserved); the whole of it when omitted. The rest is released. */
  readonly amount?: bigint | undefined;
}

export interface VoidInput {
  readonly id: string;
  readonly pendingId: string;
}

export type LedgerRequest =
  | ({ readonly action: 'transfer' } & TransferInput)
  | ({ readonly action: 'reserve' } & TransferInput)
  | ({ readonly action: 'post' } & PostInput)
  | ({ readonly action: 'void' } & VoidInput);

export interface LedgerTransfer {
  readonly transferId: string;
  /** The caller's idempotency id. */
  readonly externalId: string;
  readonly debitAccountId: string;
  readonly creditAccountId: string;
  readonly amount: bigint;
  readonly currency: LedgerCurrency;
  readonly type: string;
  readonly reference: LedgerReference;
  /** The row's own status: a reservation stays `pending`; its post is `posted`, its void `voided`. */
  readonly status: TransferStatus;
  /** For a post or void: the transfer id (`trf_…`) of the reservation it closes. */
  readonly pendingTransferId: string | null;
  readonly chainId: string;
  readonly createdAt: Date;
  /** A reservation with a timeout: when it runs out. */
  readonly expiresAt: Date | null;
}

export interface ChainResult {
  readonly transfers: LedgerTransfer[];
  /** True when every transfer already existed (an idempotent repeat) and nothing was written. */
  readonly replayed: boolean;
}

/** A batch payout of 500 items reserves an amount and a fee for each under one acceptance. */
export const MAX_CHAIN_LENGTH = 1_000;
const MAX_ID_LENGTH = 300;

function toLedgerTransfer(row: TransferRow): LedgerTransfer {
  return {
    transferId: row.id,
    externalId: row.idempotency_key,
    debitAccountId: row.debit_account_id,
    creditAccountId: row.credit_account_id,
    amount: row.amount,
    currency: row.currency,
    type: row.type,
    reference: { type: row.reference_type, id: row.reference_id },
    status: row.status,
    pendingTransferId: row.pending_id,
    chainId: row.chain_id,
    createdAt: row.created_at,
    expiresAt: row.expires_at,
  };
}

export async function transfer(
  tx: Tx,
  clock: Clock,
  input: TransferInput,
): Promise<LedgerTransfer & { replayed: boolean }> {
  return single(tx, clock, { action: 'transfer', ...input });
}

export async function reserve(
  tx: Tx,
  clock: Clock,
  input: TransferInput,
): Promise<LedgerTransfer & { replayed: boolean }> {
  return single(tx, clock, { action: 'reserve', ...input });
}

export async function post(tx: Tx, clock: Clock, input: PostInput): Promise<LedgerTransfer & { replayed: boolean }> {
  return single(tx, clock, { action: 'post', ...input });
}

export async function voidPending(
  tx: Tx,
  clock: Clock,
  input: VoidInput,
): Promise<LedgerTransfer & { replayed: boolean }> {
  return single(tx, clock, { action: 'void', ...input });
}

async function single(tx: Tx, clock: Clock, request: LedgerRequest): Promise<LedgerTransfer & { replayed: boolean }> {
  const result = await executeLinked(tx, clock, [request]);
  return { ...result.transfers[0]!, replayed: result.replayed };
}

function validateShape(requests: readonly LedgerRequest[]): void {
  if (requests.length === 0 || requests.length > MAX_CHAIN_LENGTH) {
    throw new InvalidRequestError(`a linked chain has 1 to ${MAX_CHAIN_LENGTH} transfers`);
  }
  const ids = new Set<string>();
  const pendingIds = new Set<string>();
  for (const request of requests) {
    if (request.id.length < 1 || request.id.length > MAX_ID_LENGTH)
      throw new InvalidRequestError(`a transfer id has 1 to ${MAX_ID_LENGTH} characters`);
    if (ids.has(request.id)) throw new InvalidRequestError(`transfer id "${request.id}" appears twice in one chain`);
    ids.add(request.id);
    if (request.action === 'transfer' || request.action === 'reserve') {
      if (request.debitAccountId === request.creditAccountId)
        throw new InvalidRequestError('a transfer needs two different accounts');
      if (request.amount <= 0n || request.amount > MAX_AMOUNT_MINOR)
        throw new InvalidRequestError(`amount must be 1 to ${MAX_AMOUNT_MINOR} minor units`);
      if (request.timeoutSeconds !== undefined) {
        if (request.action !== 'reserve') throw new InvalidRequestError('only a reservation can have a timeout');
        if (
          !Number.isInteger(request.timeoutSeconds) ||
          request.timeoutSeconds < 1 ||
          request.timeoutSeconds > MAX_TIMEOUT_SECONDS
        ) {
          throw new InvalidRequestError(`a reservation's timeout is 1 to ${MAX_TIMEOUT_SECONDS} whole seconds`);
        }
      }
      if (
        request.reference.type.length < 1 ||
        request.reference.type.length > 40 ||
        request.reference.id.length < 1 ||
        request.reference.id.length > MAX_ID_LENGTH
      ) {
        throw new InvalidRequestError('a transfer reference needs a type (1..40 characters) and an id');
      }
    } else {
      if (pendingIds.has(request.pendingId))
        throw new InvalidRequestError(`reservation "${request.pendingId}" is closed twice in one chain`);
      pendingIds.add(request.pendingId);
      if (ids.has(request.pendingId))
        throw new InvalidRequestError('a chain cannot post or void a reservation it creates');
      if (request.action === 'post' && request.amount !== undefined && request.amount <= 0n) {
        throw new InvalidRequestError('a posted amount must be greater than zero');
      }
    }
  }
}

/** Does an existing transfer row say the same thing as this request? */
function sameRequest(row: TransferRow, request: LedgerRequest, pending: ReadonlyMap<string, TransferRow>): boolean {
  switch (request.action) {
    case 'transfer':
    case 'reserve':
      return (
        row.status === (request.action === 'transfer' ? 'posted' : 'pending') &&
        row.pending_id === null &&
        row.debit_account_id === request.debitAccountId &&
        row.credit_account_id === request.creditAccountId &&
        row.amount === request.amount &&
        row.type === request.type &&
        row.reference_type === request.reference.type &&
        row.reference_id === request.reference.id &&
        row.timeout_seconds === (request.timeoutSeconds ?? null)
      );
    case 'post': {
      const reservation = pending.get(request.pendingId);
      return (
        row.status === 'posted' &&
        row.pending_id === reservation?.id &&
        row.amount === (request.amount ?? reservation.amount)
      );
    }
    case 'void':
      return row.status === 'voided' && row.pending_id === pending.get(request.pendingId)?.id;
  }
}

function replayOrRefuse(
  requests: readonly LedgerRequest[],
  existing: readonly TransferRow[],
  pending: ReadonlyMap<string, TransferRow>,
): ChainResult {
  const byKey = new Map(existing.map((row) => [row.idempotency_key, row]));
  const rows = requests.map((request) => byKey.get(request.id));
  const mismatch = requests.find(
    (request, index) => rows[index] === undefined || !sameRequest(rows[index]!, request, pending),
  );
  if (mismatch !== undefined) {
    throw transferIdsTaken([mismatch.id]);
  }
  const chainIds = new Set(rows.map((row) => row!.chain_id));
  if (chainIds.size !== 1) throw transferIdsTaken(requests.map((request) => request.id));
  return { transfers: rows.map((row) => toLedgerTransfer(row!)), replayed: true };
}

interface MutableTotals {
  id: string;
  book: LedgerBook;
  currency: LedgerCurrency;
  merchantId: string | null;
  guarded: boolean;
  debitsPending: bigint;
  debitsPosted: bigint;
  creditsPending: bigint;
  creditsPosted: bigint;
}

function availableOf(totals: { creditsPosted: bigint; debitsPosted: bigint; debitsPending: bigint }): bigint {
  return totals.creditsPosted - totals.debitsPosted - totals.debitsPending;
}

function mutable(row: AccountRow): MutableTotals {
  return {
    id: row.id,
    book: row.book,
    currency: row.currency,
    merchantId: row.merchant_id,
    guarded: row.debits_must_not_exceed_credits,
    debitsPending: row.debits_pending,
    debitsPosted: row.debits_posted,
    creditsPending: row.credits_pending,
    creditsPosted: row.credits_posted,
  };
}

/** Everything a write computed under the locks, ready for its one statement. */
interface WritePlan {
  readonly transfers: LedgerTables['ledger_transfers'][];
  readonly totals: AccountTotals[];
  readonly operations: NewOperation[];
}

/** What the prelude learnt under the locks. */
interface Locked {
  /** The reservations closed by the requests' posts and voids, by the caller's id. */
  readonly pending: ReadonlyMap<string, TransferRow>;
  /** Every account touched, locked, with its totals as read. */
  readonly accounts: Map<string, MutableTotals>;
  /** Requests whose ids exist already (only looked up when a repeat cannot show at the write). */
  readonly repeats: readonly TransferRow[];
  /** Requests to write, each checked against the closed and expired reservations. */
  readonly fresh: readonly LedgerRequest[];
}

/**
 * THE PRELUDE of every ledger write computed here (executeLinked, executeBatch):
 * reads the reservations being closed (immutable rows, read before locking to
 * learn their accounts), locks every account touched in THE LOCK ORDER
 * (repository.lockAccounts), then, under the locks, looks up the ids already
 * used and refuses a post or void of a reservation already closed or a post
 * of one past its timeout. A plain chain (`lookUpRepeats: false` and no
 * reservation closed) learns that it is a repeat when its insert meets its own
 * ids, which saves a round trip while the locks are held. The requests were
 * validated by validateShape.
 */
async function lockAndCheck(
  tx: Tx,
  clock: Clock,
  requests: readonly LedgerRequest[],
  lookUpRepeats: boolean,
): Promise<Locked> {
  const pending = await findReservationsClosed(tx, requests);
  const accountIds = requests.flatMap((request) => {
    if (request.action === 'transfer' || request.action === 'reserve')
      return [request.debitAccountId, request.creditAccountId];
    const reservation = pending.get(request.pendingId)!;
    return [reservation.debit_account_id, reservation.credit_account_id];
  });
  const locked = await repository.lockAccounts(tx, accountIds);
  const accounts = new Map(locked.map((row) => [row.id, mutable(row)]));
  for (const id of accountIds) if (!accounts.has(id)) throw noSuchAccount(id);
  if (!lookUpRepeats && pending.size === 0) return { pending, accounts, repeats: [], fresh: requests };

  const existing = await repository.findTransfersByKeysOrPending(
    tx,
    requests.map((request) => request.id),
    [...pending.values()].map((row) => row.id),
  );
  const byKey = new Map(existing.map((row) => [row.idempotency_key, row]));
  const closedBy = new Map(existing.filter((row) => row.pending_id !== null).map((row) => [row.pending_id!, row]));
  const repeats = requests.flatMap((request) => byKey.get(request.id) ?? []);
  // A chain with a repeat is answered whole (replayOrRefuse), before any refusal: a post that went
  // through before its reservation's timeout still answers its repeat.
  if (!lookUpRepeats && repeats.length > 0) return { pending, accounts, repeats, fresh: [] };
  const now = clock.now();
  const fresh = requests.filter((request) => {
    const repeat = byKey.get(request.id);
    if (repeat && !sameRequest(repeat, request, pending)) throw transferIdsTaken([request.id]);
    if (!repeat) refuseClosedOrExpired(request, pending, closedBy, now);
    return !repeat;
  });
  return { pending, accounts, repeats, fresh };
}

/** The reservations that the posts and voids close, each found and still a reservation. */
async function findReservationsClosed(tx: Tx, requests: readonly LedgerRequest[]): Promise<Map<string, TransferRow>> {
  const pendingKeys = requests.flatMap((request) =>
    request.action === 'post' || request.action === 'void' ? [request.pendingId] : [],
  );
  const pending = new Map<string, TransferRow>();
  for (const row of await repository.findTransfersByKeys(tx, pendingKeys)) pending.set(row.idempotency_key, row);
  for (const key of pendingKeys) {
    const row = pending.get(key);
    if (!row) throw noSuchReservation(key);
    if (row.status !== 'pending') throw notReservation(key);
  }
  return pending;
}

/** A reservation closed by another id cannot be closed again; one past its timeout can only be voided (the expiry worker does it if nobody else does). */
function refuseClosedOrExpired(
  request: LedgerRequest,
  pending: ReadonlyMap<string, TransferRow>,
  closedBy: ReadonlyMap<string, TransferRow>,
  now: Date,
): void {
  if (request.action !== 'post' && request.action !== 'void') return;
  const reservation = pending.get(request.pendingId)!;
  const closing = closedBy.get(reservation.id);
  if (closing) throw reservationClosed(reservation.idempotency_key, closing.status);
  if (request.action === 'post' && (reservation.expires_at?.getTime() ?? Infinity) <= now.getTime()) {
    throw reservationExpired(reservation.idempotency_key, reservation.expires_at!);
  }
}

/**
 * THE WRITE PLAN of every ledger write computed here: applies the requests in
 * order to the locked totals (refusing what the accounts cannot do), then
 * asserts the ledger's invariants on the result before anything is written.
 * `oneChain`: all the requests share the first one's chain id (executeLinked);
 * otherwise each is its own chain (executeBatch).
 */
function planWrite(requests: readonly LedgerRequest[], oneChain: boolean, now: Date, locked: Locked): WritePlan {
  const before = new Map([...locked.accounts.values()].map((account) => [account.id, { ...account }]));
  const firstId = newId('transfer');
  const transfers: LedgerTables['ledger_transfers'][] = [];
  const operations: NewOperation[] = [];
  requests.forEach((request, index) => {
    const transferId = index === 0 ? firstId : newId('transfer');
    const applied = applyRequest(
      request,
      transferId,
      oneChain ? firstId : transferId,
      now,
      locked.accounts,
      locked.pending,
    );
    transfers.push(applied.transfer);
    for (const change of applied.changes) {
      operations.push({
        id: newId('operation'),
        accountId: change.accountId,
        transferId,
        originId: applied.transfer.pending_id ?? transferId,
        // A post or void carries its reservation's type, so this is the originating transfer's type.
        type: applied.transfer.type,
        amount: change.delta,
        balanceAfter: change.availableAfter,
        createdAt: now,
      });
    }
  });
  assertTransfersWellFormed(transfers);
  assertTotalsValid(locked.accounts.values());
  assertBalanced(locked.accounts.values(), before);
  const totals = [...locked.accounts.values()].map(
    ({ id, debitsPending, debitsPosted, creditsPending, creditsPosted }) => ({
      id,
      debitsPending,
      debitsPosted,
      creditsPending,
      creditsPosted,
    }),
  );
  return { transfers, totals, operations };
}

/**
 * Runs a chain of transfers, reservations, posts and voids that commit together
 * or not at all, inside the caller's transaction.
 */
export async function executeLinked(tx: Tx, clock: Clock, requests: readonly LedgerRequest[]): Promise<ChainResult> {
  validateShape(requests);
  const [only] = requests;
  if (requests.length === 1 && (only!.action === 'transfer' || only!.action === 'reserve')) {
    const written = await writeLone(tx, clock, only!);
    if (written) return written;
    // Refused, or a repeat: the general path below names the refusal or answers the repeat.
  }
  const keys = requests.map((request) => request.id);
  const locked = await lockAndCheck(tx, clock, requests, false);
  if (locked.repeats.length > 0) return replayOrRefuse(requests, locked.repeats, locked.pending);

  let plan: WritePlan;
  try {
    plan = planWrite(requests, true, clock.now(), locked);
  } catch (error) {
    // A broken invariant is a bug, never answered as a repeat.
    if (error instanceof assert.AssertionError) throw error;
    // A repeat of a chain that went through earlier is answered as such, even if the balance has moved since.
    const mine = locked.pending.size > 0 ? [] : await repository.findTransfersByKeys(tx, keys);
    if (mine.length > 0) return replayOrRefuse(requests, mine, locked.pending);
    throw error;
  }

  let inserted: number;
  try {
    inserted = await repository.writeChain(tx, plan.transfers, plan.totals, plan.operations);
  } catch (error) {
    // A concurrent transaction committed one of these ids meanwhile; the database has already
    // rolled the statement back and will not commit this transaction.
    if (isUniqueViolation(error, 'ledger_transfers_idempotency_key')) {
      throw transferIdsTaken(keys);
    }
    throw error;
  }
  assert.ok(
    inserted === 0 || inserted === plan.transfers.length,
    `ledger chain half written: ${inserted} of ${plan.transfers.length} transfers`,
  );
  if (inserted === plan.transfers.length) {
    return { transfers: plan.transfers.map((row) => toLedgerTransfer(row)), replayed: false };
  }
  // The ids exist already: a repeat (nothing was written), or ids reused with other parameters.
  return replayOrRefuse(requests, await repository.findTransfersByKeys(tx, keys), locked.pending);
}
/** A reservation's timeout and when it runs out; null for every other kind of transfer. */
function reservationTimeout(
  request: LedgerRequest,
  now: Date,
): { timeout_seconds: number | null; expires_at: Date | null } {
  if (request.action !== 'reserve' || request.timeoutSeconds === undefined)
    return { timeout_seconds: null, expires_at: null };
  return {
    timeout_seconds: request.timeoutSeconds,
    expires_at: new Date(now.getTime() + request.timeoutSeconds * 1_000),
  };
}

/**
 * A lone transfer lost the race for its id to a concurrent transaction. It carries
 * SQLSTATE 40001 (serialization_failure), so inTransaction runs the caller's
 * transaction again, as PostgreSQL's own serialization failures are.
 */
class LedgerWriteRaceError extends Error {
  readonly code = '40001';
  constructor(id: string, cause: unknown) {
    super(`ledger transfer id "${id}" was committed by a concurrent transaction; run the transaction again`, { cause });
    this.name = 'LedgerWriteRaceError';
  }
}

/**
 * The commonest call, a lone transfer or reservation, in one statement
 * (repository.writeLoneTransfer); undefined when it wrote nothing. What it wrote
 * is checked against the invariants before anything else runs.
 */
async function writeLone(
  tx: Tx,
  clock: Clock,
  request: TransferInput & { action: 'transfer' | 'reserve' },
): Promise<ChainResult | undefined> {
  const now = clock.now();
  const id = newId('transfer');
  const reserve = request.action === 'reserve';
  const transfer = {
    id,
    idempotency_key: request.id,
    debit_account_id: request.debitAccountId,
    credit_account_id: request.creditAccountId,
    amount: request.amount,
    type: request.type,
    reference_type: request.reference.type,
    reference_id: request.reference.id,
    status: reserve ? ('pending' as const) : ('posted' as const),
    pending_id: null,
    chain_id: id,
    created_at: now,
    ...reservationTimeout(request, now),
  };
  let accounts: repository.WrittenAccount[] | undefined;
  try {
    accounts = await repository.writeLoneTransfer(tx, {
      transfer,
      debitOperationId: newId('operation'),
      creditOperationId: newId('operation'),
    });
  } catch (error) {
    // Another transaction committed this id while the statement ran: a serialization conflict.
    // Run again, the caller's transaction finds the id and answers as a repeat (or a refusal).
    if (isUniqueViolation(error, 'ledger_transfers_idempotency_key')) throw new LedgerWriteRaceError(request.id, error);
    throw error;
  }
  if (!accounts) return undefined;
  assertLoneWritten(transfer, accounts);
  return { transfers: [toLedgerTransfer({ ...transfer, currency: accounts[0]!.currency })], replayed: false };
}

interface AppliedRequest {
  readonly transfer: LedgerTables['ledger_transfers'];
  readonly changes: { accountId: string; delta: bigint; availableAfter: bigint }[];
}

function applyRequest(
  request: LedgerRequest,
  transferId: string,
  chainId: string,
  now: Date,
  accounts: ReadonlyMap<string, MutableTotals>,
  pending: ReadonlyMap<string, TransferRow>,
): AppliedRequest {
  const reservation =
    request.action === 'post' || request.action === 'void' ? pending.get(request.pendingId)! : undefined;
  const debitId = reservation ? reservation.debit_account_id : (request as TransferInput).debitAccountId;
  const creditId = reservation ? reservation.credit_account_id : (request as TransferInput).creditAccountId;
  const debit = accounts.get(debitId)!;
  const credit = accounts.get(creditId)!;
  // Sandbox money can never become live money, nor the reverse.
  if (debit.book !== credit.book) {
    throw differentBooks({ id: debitId, book: debit.book }, { id: creditId, book: credit.book });
  }
  if (debit.currency !== credit.currency) {
    throw differentCurrencies({ id: debitId, currency: debit.currency }, { id: creditId, currency: credit.currency });
  }
  const before = { debit: availableOf(debit), credit: availableOf(credit) };
  let amount: bigint;
  let status: TransferStatus;
  switch (request.action) {
    case 'transfer':
      amount = request.amount;
      status = 'posted';
      debit.debitsPosted += amount;
      credit.creditsPosted += amount;
      break;
    case 'reserve':
      amount = request.amount;
      status = 'pending';
      debit.debitsPending += amount;
      credit.creditsPending += amount;
      break;
    case 'post':
      amount = request.amount ?? reservation!.amount;
      if (amount > reservation!.amount) {
        throw postAboveReservation(request.pendingId, amount, reservation!.amount);
      }
      status = 'posted';
      debit.debitsPending -= reservation!.amount;
      debit.debitsPosted += amount;
      credit.creditsPending -= reservation!.amount;
      credit.creditsPosted += amount;
      break;
    case 'void':
      amount = reservation!.amount;
      status = 'voided';
      debit.debitsPending -= amount;
      credit.creditsPending -= amount;
      break;
  }
  if (debit.guarded && debit.debitsPending + debit.debitsPosted > debit.creditsPosted) {
    throw insufficientFunds(debit.id);
  }
  // A reservation credited to a merchant account (an incoming deposit while it confirms) leaves its
  // available balance alone but still gets a history entry of zero effect: the merchant sees it coming.
  const announcesIncoming = request.action === 'reserve' && credit.merchantId !== null;
  const changes = [
    { accountId: debit.id, delta: availableOf(debit) - before.debit, availableAfter: availableOf(debit), keep: false },
    {
      accountId: credit.id,
      delta: availableOf(credit) - before.credit,
      availableAfter: availableOf(credit),
      keep: announcesIncoming,
    },
  ]
    .filter((change) => change.delta !== 0n || change.keep)
    .map(({ accountId, delta, availableAfter }) => ({ accountId, delta, availableAfter }));
  const source = reservation ?? {
    type: (request as TransferInput).type,
    reference_type: (request as TransferInput).reference.type,
    reference_id: (request as TransferInput).reference.id,
  };
  return {
    transfer: {
      id: transferId,
      idempotency_key: request.id,
      debit_account_id: debitId,
      credit_account_id: creditId,
      amount,
      currency: debit.currency,
      type: source.type,
      reference_type: source.reference_type,
      reference_id: source.reference_id,
      status,
      pending_id: reservation?.id ?? null,
      chain_id: chainId,
      created_at: now,
      ...reservationTimeout(request, now),
    },
    changes,
  };
}

export interface ReverseInput {
  /** The caller's id of the reversal. */
  readonly id: string;
  /** The caller's id of the posted transfer (a plain transfer or a post) being corrected. */
  readonly originalId: string;
  /** How much to give back: the whole original amount when omitted. */
  readonly amount?: bigint | undefined;
}

/**
 * A correction: history is never edited, so a posted transfer is undone by a new
 * `reversal` transfer in the opposite direction, referring to the original.
 * It is refused like any transfer when the account it takes from lacks the money.
 */
export async function reverse(
  tx: Tx,
  clock: Clock,
  input: ReverseInput,
): Promise<LedgerTransfer & { replayed: boolean }> {
  const [original] = await repository.findTransfersByKeys(tx, [input.originalId]);
  if (!original) throw noSuchTransfer(input.originalId);
  if (original.status !== 'posted') throw reversalNotPosted(input.originalId, original.status);
  const amount = input.amount ?? original.amount;
  // Every reversal of this transfer locks the same two accounts first, so the sum read
  // below cannot change before this one is written: the total reversed never exceeds
  // the original, however many reversals race.
  await repository.lockAccounts(tx, [original.debit_account_id, original.credit_account_id]);
  const [repeat] = await repository.findTransfersByKeys(tx, [input.id]);
  if (!repeat) {
    const reversed = await repository.sumReversals(tx, original.id);
    if (reversed + amount > original.amount) {
      throw reversalAboveRemainder(input.originalId, amount, original.amount, reversed);
    }
  }
  return transfer(tx, clock, {
    id: input.id,
    debitAccountId: original.credit_account_id,
    creditAccountId: original.debit_account_id,
    amount,
    type: 'reversal',
    reference: { type: 'transfer', id: original.id },
  });
}

/** A transfer by the caller's id, with the status of a reservation resolved (pending, posted or voided). */
export async function findTransfer(
  db: Executor,
  id: string,
): Promise<(LedgerTransfer & { currentStatus: TransferStatus }) | undefined> {
  const [row] = await repository.findTransfersByKeys(db, [id]);
  if (!row) return undefined;
  let currentStatus = row.status;
  if (row.status === 'pending') currentStatus = (await repository.findClosingTransfer(db, row.id))?.status ?? 'pending';
  return { ...toLedgerTransfer(row), currentStatus };
}

/** The most movements one executeBatch call takes (a settlement batch of deposits). */
export const MAX_BATCH_LENGTH = 1_000;

/**
 * Many independent movements (transfers, reservations, posts, voids) in a few
 * set-based statements: one look-up of the reservations closed, one lock of
 * every account touched (in id order, THE LOCK ORDER), one look-up of ids
 * already used, one write of every transfer, total and history entry. Unlike
 * executeLinked, each movement is its own chain (its own chain id), and a
 * movement whose id exists already with the same parameters is a repeat,
 * skipped, while the others are written; its id with other parameters is 409.
 * Any refusal (insufficient funds, a reservation closed by another id or
 * expired) throws and writes nothing, so the caller's transaction rolls back
 * the whole batch. Returns how many movements were written.
 */
export async function executeBatch(
  tx: Tx,
  clock: Clock,
  requests: readonly LedgerRequest[],
): Promise<{ written: number; replayed: number }> {
  if (requests.length === 0) return { written: 0, replayed: 0 };
  if (requests.length > MAX_BATCH_LENGTH)
    throw new InvalidRequestError(`a batch has 1 to ${MAX_BATCH_LENGTH} movements`);
  validateShape(requests);
  const locked = await lockAndCheck(tx, clock, requests, true);
  if (locked.fresh.length === 0) return { written: 0, replayed: requests.length };
  const plan = planWrite(locked.fresh, false, clock.now(), locked);
  let inserted: number;
  try {
    inserted = await repository.writeBatch(tx, plan.transfers, plan.totals, plan.operations);
  } catch (error) {
    if (isUniqueViolation(error, 'ledger_transfers_idempotency_key'))
      throw new LedgerWriteRaceError(locked.fresh[0]!.id, error);
    throw error;
  }
  assert.ok(
    inserted === 0 || inserted === plan.transfers.length,
    `ledger batch half written: ${inserted} of ${plan.transfers.length} transfers`,
  );
  // A concurrent transaction committed one of these ids after the look-up: run the caller's transaction again.
  if (inserted === 0) throw new LedgerWriteRaceError(locked.fresh[0]!.id, undefined);
  return { written: inserted, replayed: requests.length - locked.fresh.length };
}

/** A reservation from one account to several, every leg a pending transfer of one chain (a payout: its amount and fees). */
export interface FanOutReservation {
  readonly debitAccountId: string;
  readonly legs: readonly {
    readonly id: string;
    readonly creditAccountId: string;
    readonly amount: bigint;
    readonly type: TransferType;
  }[];
  readonly reference: LedgerReference;
}

/** Most legs of one fan-out reservation. */
const MAX_FAN_OUT_LEGS = 10;

/**
 * Fan-out reservations as CTEs for a caller's ONE statement (repository
 * fanOutReservationsCtes): the caller's own rows join `writtenCte` on
 * `reference_id`, so each lands with its reservation or not at all, with one
 * round trip and no transaction. Each is the same money as executeLinked of its
 * legs' `reserve` requests: same transfers, chain, history entries. Several in
 * one statement (concurrent payouts committed together) name different
 * references and credit no account any of them debits; each is written or
 * refused on its own, those of one debit account as if one statement each ran
 * in the order given. The caller's statement begins `with recursive`. When one
 * wrote nothing, explainUnwrittenReservation says why.
 */
export function fanOutReservations(
  clock: Clock,
  requests: readonly FanOutReservation[],
): { readonly ctes: ReturnType<typeof repository.fanOutReservationsCtes>; readonly writtenCte: string } {
  if (requests.length < 1) throw new InvalidRequestError('fan-out reservations: none given');
  const debits = new Set(requests.map((request) => request.debitAccountId));
  if (new Set(requests.map((request) => request.reference.id)).size !== requests.length)
    throw new InvalidRequestError('fan-out reservations of one statement name different references');
  const createdAt = clock.now();
  const rows = requests.map((request) => {
    if (request.legs.length < 1 || request.legs.length > MAX_FAN_OUT_LEGS)
      throw new InvalidRequestError(`a fan-out reservation has 1 to ${MAX_FAN_OUT_LEGS} legs`);
    validateShape(
      request.legs.map((leg) => ({
        action: 'reserve',
        id: leg.id,
        debitAccountId: request.debitAccountId,
        creditAccountId: leg.creditAccountId,
        amount: leg.amount,
        type: leg.type,
        reference: request.reference,
      })),
    );
    if (new Set(request.legs.map((leg) => leg.creditAccountId)).size !== request.legs.length)
      throw new InvalidRequestError('the legs of a fan-out reservation credit different accounts');
    if (request.legs.some((leg) => debits.has(leg.creditAccountId)))
      throw new InvalidRequestError('an account debited by a fan-out reservation is credited in the same statement');
    const chainId = newId('transfer');
    return {
      debitAccountId: request.debitAccountId,
      chainId,
      referenceType: request.reference.type,
      referenceId: request.reference.id,
      createdAt,
      legs: request.legs.map((leg, index) => ({
        transferId: index === 0 ? chainId : newId('transfer'),
        idempotencyKey: leg.id,
        creditAccountId: leg.creditAccountId,
        amount: leg.amount,
        type: leg.type,
        operationId: newId('operation'),
      })),
    };
  });
  // The caller's statement writes these rows; what it can assert, it asserts here, before it runs.
  // The totals' invariants hold in the statement itself: its debit UPDATE refuses what an account cannot afford.
  assertTransfersWellFormed(
    rows.flatMap((row) =>
      row.legs.map((leg) => ({
        id: leg.transferId,
        amount: leg.amount,
        debit_account_id: row.debitAccountId,
        credit_account_id: leg.creditAccountId,
      })),
    ),
  );
  return { ctes: repository.fanOutReservationsCtes(rows), writtenCte: repository.FAN_OUT_WRITTEN_CTE };
}

/**
 * Why a fan-out reservation's statement wrote nothing, thrown: not enough
 * available (InsufficientFundsError), a missing account, ids already used,
 * accounts of different books or currencies. 'retry' when none of these holds
 * now: the balance moved between that statement and this read.
 */
export async function explainUnwrittenReservation(db: Executor, request: FanOutReservation): Promise<'retry'> {
  const ids = [request.debitAccountId, ...request.legs.map((leg) => leg.creditAccountId)];
  const accounts = new Map((await repository.findAccountsByIds(db, ids)).map((row) => [row.id, row]));
  for (const id of ids) if (!accounts.has(id)) throw noSuchAccount(id);
  const debit = accounts.get(request.debitAccountId)!;
  const total = request.legs.reduce((sum, leg) => sum + leg.amount, 0n);
  if (
    debit.debits_must_not_exceed_credits &&
    debit.debits_pending + debit.debits_posted + total > debit.credits_posted
  ) {
    throw insufficientFunds(debit.id);
  }
  const existing = await repository.findTransfersByKeys(
    db,
    request.legs.map((leg) => leg.id),
  );
  if (existing.length > 0) throw transferIdsTaken(existing.map((row) => row.idempotency_key));
  const rows = [...accounts.values()];
  if (rows.some((row) => row.book !== debit.book || row.currency !== debit.currency)) {
    throw new InvalidRequestError('the accounts of a fan-out reservation must share one book and one currency');
  }
  return 'retry';
}

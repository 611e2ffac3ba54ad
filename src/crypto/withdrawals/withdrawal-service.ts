// Cabinet withdrawals (issue 14 point 8, issue 27 point 4; docs/refunds-and-withdrawals.md):
// the merchant withdraws USDT from its main balance to its own address. No API key
// reaches this: the cabinet (src/cabinet/withdrawals/) and `paygate withdrawal …` call it.
//   created   → awaiting_approval (past the merchant's single-person limit, by default
//               always) | pending (queued at once)
//   approved  → pending (queued) by another person than the requester;
//   rejected / cancelled → final, reservation voided, cabinet.withdrawal.completed
//   executor  → processing → completed (posted) | failed (voided)
// The limit is a rolling 24 h budget per requester, not a per-request cap: what one person
// sent alone in the last 24 h plus this request must fit in it, so splitting a large
// withdrawal into small ones does not escape the second person. The check runs under a
// lock on the rule row, in the transaction that inserts, so concurrent requests cannot
// both spend the same budget.
// total_debit = amount + network fee is reserved at creation, in the
// transaction that inserts the withdrawal (and queues its transfer). The network
// fee is quoted on the energy source (payouts/energy-quotes.ts): one queued at
// once reserves own energy as a payout does; one awaiting approval, which may
// wait days, holds none and is quoted at a rental's or the burn price, and is not
// re-priced at approval (the approver approved the total_debit shown).
// Each request and decision is audited in its own transaction: withdrawal.requested,
// withdrawal.approved, withdrawal.rejected, withdrawal.cancelled; the actor is the
// operator known by the name given unless the caller names another (a cabinet user).
// People are compared by cabinet user id; an operator (no user id) by name.
import { OPERATOR, operatorNamed, recordAudit, type AuditActor } from '../../audit/audit-service.ts';
import type { Clock } from '../../clock.ts';
import { inTransaction, isUniqueViolation, type Executor, type Tx } from '../../db/transaction.ts';
import {
  DuplicateExternalIdError,
  ForbiddenError,
  InvalidRequestError,
  InvalidStateError,
  NotFoundError,
} from '../../errors.ts';
import { createdAtOrder, parseStatusFilter, readListPage, type ListPage, type ListQuery } from '../../db/list-page.ts';
import { newId } from '../../ids.ts';
import { findShopProfile, type ShopProfile } from '../../merchants/merchant-service.ts';
import type { ChainAccess } from '../chain/crypto-chain.ts';
import { createOnEnergyQuotes, offOwnEnergyQuotes, previewEnergyQuotes } from '../payouts/energy-quotes.ts';
import { quotePayouts, type PayoutQuote } from '../payouts/payout-fees.ts';
import {
  checkRecipients,
  parseExternalId,
  parsePayoutAmount,
  parseRecipient,
  type HotWalletSenderDeps,
} from '../payouts/payout-service.ts';
import { DEFAULT_PAYOUT_SETTINGS, type PayoutSettings } from '../payouts/payout-settings.ts';
import { enqueueOutgoingTransfers, findOutgoingTransfer } from '../sending/outgoing-transfers.ts';
import { noOutcomeYet } from '../sending/reserved-transfer.ts';
import type { TronAddress } from '../tron/address.ts';
import { usdtText } from '../receiving/receiving-views.ts';
import { chainOfMode, usableAddress } from './withdrawal-addresses.ts';
import { reserveWithdrawal, voidWithdrawalReservation } from './withdrawal-ledger.ts';
import * as addressBook from './withdrawal-addresses-repository.ts';
import * as repository from './withdrawals-repository.ts';
import type { Requester, WithdrawalRow } from './withdrawals-repository.ts';
import { WITHDRAWAL_STATUSES, type WithdrawalStatus } from './withdrawals-tables.ts';
import { emitWithdrawalCompleted, withdrawalView, type WithdrawalView } from './withdrawals-views.ts';

export type WithdrawalDeps = HotWalletSenderDeps;
type ShopMode = ShopProfile['mode'];

export { WITHDRAWAL_STATUSES, type WithdrawalStatus };

export interface CreateWithdrawalInput {
  readonly merchantId: string;
  readonly shopId: string;
  /**
   * The caller's key, 1..100 characters, unique per merchant and book (every shop of the merchant draws on
   * one balance): the same key with the same amount and address is the same withdrawal (a form sent twice,
   * a retry); with others, 409 duplicate_external_id.
   */
  readonly externalId: string;
  /** USDT as a decimal string with at most 2 places, as payouts. */
  readonly amount: string;
  readonly address: string;
  /** Who asked (a cabinet user's email, or `cli:<os user>`). */
  readonly requestedBy: string;
  /** The cabinet user who asked; absent for an operator. */
  readonly requestedByUserId?: string | undefined;
  /** Who the audit log names; by default the operator called `requestedBy`. */
  readonly actor?: AuditActor | undefined;
  /** An entry of the merchant's address book past its cool-down (the cabinet); then `address` must be it or empty. */
  readonly addressId?: string | undefined;
  /** The requester's note, at most 500 characters. */
  readonly note?: string | undefined;
}

/** Who decides: a cabinet user (compared by id) or an operator (no user id; compared by name). */
export interface WithdrawalPerson {
  readonly name: string;
  readonly userId: string | null;
  /** Who the audit log names; by default the operator called `name`. */
  readonly actor?: AuditActor | undefined;
}

function personOf(value: string | WithdrawalPerson): WithdrawalPerson {
  return typeof value === 'string' ? { name: value, userId: null } : value;
}

/** Whether `person` is the one who asked for `row`: the same cabinet user, or the operator of the same name. */
function isRequester(row: WithdrawalRow, person: WithdrawalPerson, name: string): boolean {
  if (person.userId !== null) return person.userId === row.requested_by_user_id;
  return row.requested_by_user_id === null && name.toLowerCase() === row.requested_by.toLowerCase();
}

export const WITHDRAWAL_LIST_LIMIT_MAX = 500;

const WITHDRAWAL_CONFLICT =
  'A withdrawal with this external_id already exists with another amount or address; use a new external_id for a new withdrawal. External ids of withdrawals are the merchant’s (per sandbox/live), whichever shop names them.';
const ACTOR_MAX_LENGTH = 200;
const REASON_MAX_LENGTH = 500;
const NOTE_MAX_LENGTH = 500;
/** What "no approval" of the former per-shop switch means as a single-person limit: 10^9 USDT, the payout maximum. */
const NO_PRACTICAL_LIMIT_MICRO = 1_000_000_000_000_000n;
/** How far back the single-person budget counts what a requester sent alone. */
export const SINGLE_PERSON_WINDOW_MS = 24 * 3_600_000;
/** A withdrawal pays the network fee only: no service fee. */
const NO_SERVICE_FEE: PayoutSettings = { ...DEFAULT_PAYOUT_SETTINGS, serviceFeeFixedMicro: 0n, serviceFeeBps: 0 };

function parseActor(value: string, field: string): string {
  const actor = value.trim();
  if (actor.length < 1 || actor.length > ACTOR_MAX_LENGTH)
    throw new InvalidRequestError(`${field} must be 1 to ${ACTOR_MAX_LENGTH} characters.`);
  return actor;
}

/**
 * Whether a request of `amountMicro` needs a second person under `limit`: no limit, or what the
 * requester sent alone in the last SINGLE_PERSON_WINDOW_MS plus this one exceeds it.
 */
async function needsSecondPerson(
  db: Executor,
  clock: Clock,
  scope: { merchantId: string; chain: WithdrawalRow['chain']; requester: Requester },
  amountMicro: bigint,
  limit: bigint | null,
): Promise<boolean> {
  if (limit === null || amountMicro > limit) return true;
  const since = new Date(clock.now().getTime() - SINGLE_PERSON_WINDOW_MS);
  const sent = await repository.singlePersonSentSince(db, scope.merchantId, scope.chain, scope.requester, since);
  return sent + amountMicro > limit;
}

/** Queues the withdrawal's transfer, under `transferId` when own energy was reserved for that id. */
async function queueTransfer(
  tx: Tx,
  clock: Clock,
  row: WithdrawalRow,
  transferId: string = newId('outgoingTransfer'),
): Promise<string> {
  const [transfer] = await enqueueOutgoingTransfers(
    tx,
    clock,
    [
      {
        chain: row.chain,
        purpose: 'withdrawal',
        ownerId: row.id,
        asset: 'USDT',
        from: { kind: 'hot_wallet' },
        to: row.recipient_address as TronAddress,
        amount: row.amount_micro,
      },
    ],
    [transferId],
  );
  return transfer!.id;
}

/** Whether a request would await a second person under the merchant's rule as it reads now (no lock). */
async function awaitsApprovalNow(
  deps: Pick<WithdrawalDeps, 'db' | 'clock'>,
  scope: { merchantId: string; chain: WithdrawalRow['chain']; requester: Requester },
  amountMicro: bigint,
): Promise<boolean> {
  const limit = await repository.singlePersonMax(deps.db, scope.merchantId, scope.chain);
  return needsSecondPerson(deps.db, deps.clock, scope, amountMicro, limit);
}

/** A request's fields checked, its shop found and its address resolved (an entry of the book, or typed). */
async function readRequest(deps: WithdrawalDeps, input: CreateWithdrawalInput) {
  const externalId = parseExternalId(input.externalId, 'external_id');
  const amountMicro = parsePayoutAmount(input.amount, 'amount');
  const requestedBy = parseActor(input.requestedBy, 'requested_by');
  const note = input.note?.trim() || null;
  if (note !== null && note.length > NOTE_MAX_LENGTH)
    throw new InvalidRequestError(`The note must be at most ${NOTE_MAX_LENGTH} characters.`);
  const shop = await findShopProfile(deps.db, input.shopId);
  if (!shop || shop.merchantId !== input.merchantId) throw new NotFoundError('No such shop of this merchant.');
  const entry =
    input.addressId === undefined
      ? undefined
      : await usableAddress(deps, shop.merchantId, chainOfMode(shop.mode), input.addressId);
  const address = entry ? (entry.address as TronAddress) : parseRecipient(input.address, 'address');
  return { externalId, amountMicro, requestedBy, note, shop, entry, address };
}

/** The withdrawal an earlier send of a request made; under its key with another amount or address: 409. */
function sameRequest(row: WithdrawalRow, amountMicro: bigint, address: string): WithdrawalView {
  if (row.amount_micro !== amountMicro || row.recipient_address !== address)
    throw new DuplicateExternalIdError(WITHDRAWAL_CONFLICT);
  return withdrawalView(row);
}

/**
 * The withdrawal an earlier send of this request made (its external_id, with the same amount and
 * address), or undefined when there is none yet; checked as createWithdrawal checks a repeat. A form
 * that asks for a one-time code reads it first, so a confirm sent twice answers the first one's
 * withdrawal instead of refusing the spent code.
 */
export async function findRepeatedWithdrawal(
  deps: WithdrawalDeps,
  input: CreateWithdrawalInput,
): Promise<WithdrawalView | undefined> {
  const { externalId, amountMicro, shop, address } = await readRequest(deps, input);
  const existing = await repository.findByExternalId(deps.db, shop.merchantId, chainOfMode(shop.mode), externalId);
  return existing ? sameRequest(existing, amountMicro, address) : undefined;
}

/**
 * Creates a withdrawal with its total_debit reserved; not enough available: InsufficientFundsError,
 * nothing stored. Idempotent by external_id per merchant and book (the balance's scope, whichever
 * of its shops names it): a repeat answers the existing withdrawal as it is now, before any chain
 * read; requests racing on one key make one withdrawal (the unique index decides, the loser
 * answers the winner's).
 */
export async function createWithdrawal(deps: WithdrawalDeps, input: CreateWithdrawalInput): Promise<WithdrawalView> {
  const request = await readRequest(deps, input);
  const { externalId, amountMicro, shop, address } = request;
  const repeated = (row: WithdrawalRow): WithdrawalView => sameRequest(row, amountMicro, address);
  const existing = await repository.findByExternalId(deps.db, shop.merchantId, chainOfMode(shop.mode), externalId);
  if (existing) return repeated(existing);
  const access = await deps.chain.forMode(shop.mode);
  await checkRecipients(deps.db, access, [{ address, field: 'address' }]);
  const [burnQuote] = await quotePayouts(access, deps, NO_SERVICE_FEE, [{ address, amountMicro }]);
  const requester = { userId: input.requestedByUserId ?? null, name: request.requestedBy };
  // The quote follows the rule as read now, unlocked: the locked read in the transaction decides the
  // status. Should they differ (the rule or the requester's budget changed in between), the quote
  // stands and the gateway bears the difference: one expected to await approval is priced off own
  // energy and may then be queued at once (it reserved nothing; signing may still use own energy);
  // one expected to go at once reserved own energy, and awaiting approval instead it gives the
  // reservation back at once (createOnEnergyQuotes) and keeps its lower quote. Re-pricing inside the
  // transaction would ask the rental provider between BEGIN and COMMIT.
  const expectsApproval = await awaitsApprovalNow(
    deps,
    { merchantId: shop.merchantId, chain: access.chain, requester },
    amountMicro,
  );
  const transferId = newId('outgoingTransfer');
  const insert = (quote: PayoutQuote) => insertWithdrawal(deps, input, request, access, { quote, transferId });
  try {
    if (expectsApproval) return (await insert((await offOwnEnergyQuotes(deps, access, [burnQuote!]))[0]!)).view;
    const outcome = await createOnEnergyQuotes(deps, access, [burnQuote!], [transferId], ([quote]) => insert(quote!));
    return outcome.view;
  } catch (error) {
    // A concurrent request with the same key committed first: its withdrawal is the answer.
    if (!isUniqueViolation(error, repository.WITHDRAWAL_EXTERNAL_ID_INDEX)) throw error;
    const winner = await repository.findByExternalId(deps.db, shop.merchantId, access.chain, externalId);
    if (!winner) throw error;
    return repeated(winner);
  }
}

/**
 * createWithdrawal's transaction: the rule row locked, the withdrawal inserted with its total_debit
 * reserved, its transfer queued under `transferId` unless it awaits approval, the request audited.
 * `created` says whether the transfer was queued (own energy reserved for it is kept only then).
 */
function insertWithdrawal(
  deps: WithdrawalDeps,
  input: CreateWithdrawalInput,
  request: Awaited<ReturnType<typeof readRequest>>,
  access: ChainAccess,
  priced: { readonly quote: PayoutQuote; readonly transferId: string },
): Promise<{ created: boolean; view: WithdrawalView }> {
  const { externalId, amountMicro, requestedBy, note, shop, entry, address } = request;
  const { quote } = priced;
  return inTransaction(deps.db, async (tx) => {
    // Locked first: a concurrent request under the same rule waits here and then counts this one.
    const limit = await repository.lockSinglePersonMax(tx, shop.merchantId, access.chain);
    const awaitsApproval = await needsSecondPerson(
      tx,
      deps.clock,
      {
        merchantId: shop.merchantId,
        chain: access.chain,
        requester: { userId: input.requestedByUserId ?? null, name: requestedBy },
      },
      amountMicro,
      limit,
    );
    const now = deps.clock.now();
    const id = newId('withdrawal');
    let row = await repository.insertWithdrawal(tx, {
      id,
      merchant_id: shop.merchantId,
      shop_id: shop.shopId,
      external_id: externalId,
      network: 'TRC20',
      network_mode: access.networkMode,
      chain: access.chain,
      recipient_address: address,
      amount_micro: amountMicro,
      network_fee_micro: quote.networkFeeMicro,
      total_debit_micro: amountMicro + quote.networkFeeMicro,
      trx_usdt_rate_micro: quote.rateMicro,
      status: 'awaiting_approval',
      outgoing_transfer_id: null,
      requested_by: requestedBy,
      requested_by_user_id: input.requestedByUserId ?? null,
      decided_by: null,
      decided_by_user_id: null,
      address_id: entry?.id ?? null,
      note,
      decided_at: null,
      reject_reason: null,
      ...noOutcomeYet(now),
    });
    await reserveWithdrawal(tx, deps.clock, shop.mode, row);
    if (!awaitsApproval) {
      row = await repository.updateWithdrawal(tx, id, {
        status: 'pending',
        outgoing_transfer_id: await queueTransfer(tx, deps.clock, row, priced.transferId),
        updated_at: now,
      });
    }
    const view = withdrawalView(row);
    await recordAudit(tx, deps.clock, {
      actor: input.actor ?? operatorNamed(requestedBy),
      action: 'withdrawal.requested',
      merchantId: row.merchant_id,
      shopId: row.shop_id,
      target: row.id,
      details: {
        external_id: view.external_id,
        amount: view.amount,
        network_fee: view.network_fee,
        total_debit: view.total_debit,
        address: view.recipient_address,
        address_label: entry?.label ?? null,
        status: view.status,
      },
    });
    return { created: !awaitsApproval, view };
  });
}

export interface WithdrawalQuote {
  readonly amount: string;
  readonly network_fee: string;
  readonly total_debit: string;
  readonly recipient_address: string;
  readonly address_label: string;
  /** Whether a second person must approve it under the merchant's rule. */
  readonly awaits_approval: boolean;
}

/**
 * What a withdrawal to an address book entry would cost now (the cabinet's preview): checked as
 * createWithdrawal checks it (amount, cool-down, recipient), nothing stored or reserved.
 */
export async function quoteWithdrawal(
  deps: WithdrawalDeps,
  input: {
    merchantId: string;
    shopId: string;
    amount: string;
    addressId: string;
    /** Who would ask: their single-person budget decides `awaits_approval`. */
    requester: Requester;
  },
): Promise<WithdrawalQuote> {
  const amountMicro = parsePayoutAmount(input.amount, 'amount');
  const shop = await findShopProfile(deps.db, input.shopId);
  if (!shop || shop.merchantId !== input.merchantId) throw new NotFoundError('No such shop of this merchant.');
  const access = await deps.chain.forMode(shop.mode);
  const entry = await usableAddress(deps, shop.merchantId, access.chain, input.addressId);
  const address = entry.address as TronAddress;
  await checkRecipients(deps.db, access, [{ address, field: 'address' }]);
  const [burnQuote] = await quotePayouts(access, deps, NO_SERVICE_FEE, [{ address, amountMicro }]);
  const awaitsApproval = await awaitsApprovalNow(
    deps,
    { merchantId: shop.merchantId, chain: access.chain, requester: input.requester },
    amountMicro,
  );
  // As createWithdrawal prices it: off own energy when it will await approval, else own energy looked at.
  const [quote] = awaitsApproval
    ? await offOwnEnergyQuotes(deps, access, [burnQuote!])
    : await previewEnergyQuotes(deps, access, [burnQuote!]);
  return {
    amount: usdtText(amountMicro),
    network_fee: usdtText(quote!.networkFeeMicro),
    total_debit: usdtText(amountMicro + quote!.networkFeeMicro),
    recipient_address: address,
    address_label: entry.label,
    awaits_approval: awaitsApproval,
  };
}

async function lockAwaiting(tx: Tx, withdrawalId: string, shopId?: string): Promise<WithdrawalRow> {
  const row =
    withdrawalId.startsWith('wd_') && withdrawalId.length <= 64
      ? await repository.lockWithdrawal(tx, withdrawalId)
      : undefined;
  if (!row || (shopId !== undefined && row.shop_id !== shopId)) throw new NotFoundError('No such withdrawal.');
  if (row.status !== 'awaiting_approval')
    throw new InvalidStateError(
      `Withdrawal ${row.id} is ${row.status}; only one awaiting approval can be approved, rejected or cancelled.`,
    );
  return row;
}

/** Where a decision is made: through a shop's page (the withdrawal must be the shop's), or anywhere (the CLI). */
export interface DecisionScope {
  readonly shopId?: string | undefined;
}

/**
 * Approval queues the transfer; the money stays reserved. Recorded: who and when. The requester
 * cannot approve (403 forbidden): a cabinet user is compared by id, an operator (a string, or a
 * person without user id) by name — an operator never counts as a cabinet user's requester.
 */
export async function approveWithdrawal(
  deps: Pick<WithdrawalDeps, 'db' | 'clock'>,
  withdrawalId: string,
  approver: string | WithdrawalPerson,
  /** Who the audit log names; by default the operator called by the approver's name. */
  actor?: AuditActor,
  scope: DecisionScope = {},
): Promise<WithdrawalView> {
  const person = personOf(approver);
  const by = parseActor(person.name, 'approved_by');
  return inTransaction(deps.db, async (tx) => {
    const row = await lockAwaiting(tx, withdrawalId, scope.shopId);
    // Approval is a second person's check: the one who asked cannot give it.
    if (isRequester(row, person, by))
      throw new ForbiddenError(
        `Withdrawal ${row.id} was requested by ${row.requested_by}; someone else must approve it.`,
      );
    // An address taken out of the book is not paid any more, by a request made before either.
    const entry = row.address_id === null ? undefined : await addressBook.lockAddress(tx, row.address_id);
    if (entry?.removed_at)
      throw new InvalidStateError(
        `The address of withdrawal ${row.id} was removed from the address book; reject or cancel the withdrawal.`,
      );
    const now = deps.clock.now();
    const transferId = await queueTransfer(tx, deps.clock, row);
    const approved = await repository.updateWithdrawal(tx, row.id, {
      status: 'pending',
      outgoing_transfer_id: transferId,
      decided_by: by,
      decided_by_user_id: person.userId,
      decided_at: now,
      updated_at: now,
    });
    await recordAudit(tx, deps.clock, {
      actor: actor ?? person.actor ?? operatorNamed(by),
      action: 'withdrawal.approved',
      merchantId: row.merchant_id,
      shopId: row.shop_id,
      target: row.id,
      details: { requested_by: row.requested_by, amount: withdrawalView(approved).amount },
    });
    return withdrawalView(approved);
  });
}

/** Rejection voids the reservation (the funds are available again) and is a final outcome: cabinet.withdrawal.completed. */
export async function rejectWithdrawal(
  deps: Pick<WithdrawalDeps, 'db' | 'clock'>,
  withdrawalId: string,
  rejecter: string | WithdrawalPerson,
  reason: string | null,
  /** Who the audit log names; by default the operator called by the rejecter's name. */
  actor?: AuditActor,
  scope: DecisionScope = {},
): Promise<WithdrawalView> {
  return endAwaiting(deps, withdrawalId, personOf(rejecter), { status: 'rejected', reason, actor, scope });
}

/**
 * Cancellation by the requester or an approver (the caller checks which may), while it awaits
 * approval: like rejection, the reservation is voided and cabinet.withdrawal.completed says `cancelled`.
 */
export async function cancelWithdrawal(
  deps: Pick<WithdrawalDeps, 'db' | 'clock'>,
  withdrawalId: string,
  person: WithdrawalPerson,
  scope: DecisionScope = {},
): Promise<WithdrawalView> {
  return endAwaiting(deps, withdrawalId, person, { status: 'cancelled', reason: null, scope });
}

async function endAwaiting(
  deps: Pick<WithdrawalDeps, 'db' | 'clock'>,
  withdrawalId: string,
  person: WithdrawalPerson,
  outcome: {
    status: 'rejected' | 'cancelled';
    reason: string | null;
    actor?: AuditActor | undefined;
    scope: DecisionScope;
  },
): Promise<WithdrawalView> {
  const by = parseActor(person.name, outcome.status === 'rejected' ? 'rejected_by' : 'cancelled_by');
  const reason = outcome.reason?.trim() || null;
  if (reason !== null && reason.length > REASON_MAX_LENGTH)
    throw new InvalidRequestError(`reason must be at most ${REASON_MAX_LENGTH} characters.`);
  return inTransaction(deps.db, async (tx) => {
    const row = await lockAwaiting(tx, withdrawalId, outcome.scope.shopId);
    const now = deps.clock.now();
    await voidWithdrawalReservation(tx, deps.clock, row);
    const ended = await repository.updateWithdrawal(tx, row.id, {
      status: outcome.status,
      decided_by: by,
      decided_by_user_id: person.userId,
      decided_at: now,
      reject_reason: reason,
      updated_at: now,
    });
    await emitWithdrawalCompleted(tx, deps.clock, ended);
    await recordAudit(tx, deps.clock, {
      actor: outcome.actor ?? person.actor ?? operatorNamed(by),
      action: `withdrawal.${outcome.status}`,
      merchantId: row.merchant_id,
      shopId: row.shop_id,
      target: row.id,
      details: { requested_by: row.requested_by, amount: withdrawalView(ended).amount, reason },
    });
    return withdrawalView(ended);
  });
}

export async function getWithdrawal(db: Executor, withdrawalId: string): Promise<WithdrawalView> {
  const row =
    withdrawalId.startsWith('wd_') && withdrawalId.length <= 64
      ? await repository.findWithdrawal(db, withdrawalId)
      : undefined;
  if (!row) throw new NotFoundError('No such withdrawal.');
  return withdrawalView(row);
}

export async function listWithdrawals(
  db: Executor,
  query: { limit: number; merchantId?: string | undefined; status?: string | undefined },
): Promise<WithdrawalView[]> {
  if (!Number.isInteger(query.limit) || query.limit < 1 || query.limit > WITHDRAWAL_LIST_LIMIT_MAX) {
    throw new InvalidRequestError(`limit must be 1 to ${WITHDRAWAL_LIST_LIMIT_MAX}.`);
  }
  const status = parseStatusFilter(query.status, WITHDRAWAL_STATUSES);
  const rows = await repository.listWithdrawals(db, { limit: query.limit, merchantId: query.merchantId, status });
  return rows.map(withdrawalView);
}

const WITHDRAWAL_ORDER = createdAtOrder((id) => id.startsWith('wd_'));

/** A shop's withdrawals, newest first, a keyset page at a time (the cabinet's list). */
export async function listShopWithdrawals(
  db: Executor,
  shopId: string,
  query: ListQuery & { status?: string | undefined },
): Promise<ListPage<WithdrawalView>> {
  if (!Number.isInteger(query.limit) || query.limit < 1 || query.limit > WITHDRAWAL_LIST_LIMIT_MAX)
    throw new InvalidRequestError(`limit must be 1 to ${WITHDRAWAL_LIST_LIMIT_MAX}.`);
  const status = parseStatusFilter(query.status, WITHDRAWAL_STATUSES);
  return readListPage(
    query,
    WITHDRAWAL_ORDER,
    (window) => repository.listWithdrawals(db, { ...window, shopId, status }),
    (rows) => rows.map(withdrawalView),
  );
}

/** Its outgoing transfer as a withdrawal's page tells it: when it was queued, its block, when it became final. */
export interface WithdrawalTransferFacts {
  readonly queued_at: string;
  readonly block_number: number | null;
  readonly final_at: string | null;
}

/** A withdrawal of the shop with its transfer's facts; another shop's is 404 as an unknown one. */
export async function getShopWithdrawal(
  db: Executor,
  shopId: string,
  withdrawalId: string,
): Promise<{ withdrawal: WithdrawalView; transfer: WithdrawalTransferFacts | null }> {
  const row =
    withdrawalId.startsWith('wd_') && withdrawalId.length <= 64
      ? await repository.findWithdrawal(db, withdrawalId)
      : undefined;
  if (!row || row.shop_id !== shopId) throw new NotFoundError('No such withdrawal.');
  const transfer =
    row.outgoing_transfer_id === null ? undefined : await findOutgoingTransfer(db, row.outgoing_transfer_id);
  return {
    withdrawal: withdrawalView(row),
    transfer: transfer
      ? {
          queued_at: transfer.createdAt.toISOString(),
          block_number: transfer.blockNumber,
          final_at: transfer.finalAt?.toISOString() ?? null,
        }
      : null,
  };
}

/**
 * The merchant's rule for a book: a withdrawal of at most `maxMicro` needs no second person; null
 * (the default): every withdrawal waits for one. Audited as withdrawal.rule_set.
 */
export async function setSinglePersonLimit(
  deps: Pick<WithdrawalDeps, 'db' | 'clock'>,
  input: {
    merchantId: string;
    mode: ShopMode;
    maxMicro: bigint | null;
    actor?: AuditActor | undefined;
    /** The shop whose page (or --shop) set it, for the audit log. */
    shopId?: string | undefined;
  },
): Promise<void> {
  if (input.maxMicro !== null && (input.maxMicro <= 0n || input.maxMicro > NO_PRACTICAL_LIMIT_MICRO))
    throw new InvalidRequestError('The single-person limit must be more than 0 and at most 1000000000 USDT.');
  await inTransaction(deps.db, async (tx) => {
    await repository.saveSinglePersonMax(
      tx,
      input.merchantId,
      chainOfMode(input.mode),
      input.maxMicro,
      deps.clock.now(),
    );
    await recordAudit(tx, deps.clock, {
      actor: input.actor ?? OPERATOR,
      action: 'withdrawal.rule_set',
      merchantId: input.merchantId,
      shopId: input.shopId,
      target: input.merchantId,
      details: {
        book: input.mode,
        single_person_max: input.maxMicro === null ? null : usdtText(input.maxMicro),
      },
    });
  });
}

/** The merchant's single-person limit for a book in micro-USDT; null: every withdrawal waits for a second person. */
export function singlePersonLimit(db: Executor, merchantId: string, mode: ShopMode): Promise<bigint | null> {
  return repository.singlePersonMax(db, merchantId, chainOfMode(mode));
}

/**
 * The former per-shop switch, kept for `paygate withdrawal settings --shop … --approval`: it sets the
 * rule of the shop's merchant and book — `required`: no single-person limit; `none`: a limit of
 * 10^9 USDT (no practical limit).
 */
export async function setWithdrawalApproval(
  deps: Pick<WithdrawalDeps, 'db' | 'clock'>,
  shopId: string,
  required: boolean,
  actor: AuditActor = OPERATOR,
): Promise<void> {
  const shop = await findShopProfile(deps.db, shopId);
  if (!shop) throw new NotFoundError('No such shop.');
  await setSinglePersonLimit(deps, {
    merchantId: shop.merchantId,
    mode: shop.mode,
    maxMicro: required ? null : NO_PRACTICAL_LIMIT_MICRO,
    actor,
    shopId: shop.shopId,
  });
}

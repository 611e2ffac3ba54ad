// Cabinet withdrawals (issue 14 point 8; docs/refunds-and-withdrawals.md): the
// merchant withdraws USDT from its main balance to its own address. No API key
// reaches this: the cabinet (next) and `paygate withdrawal …` call it.
//   created   → awaiting_approval (the shop requires approval) | pending (queued at once)
//   approved  → pending (queued);   rejected → rejected (reservation voided)
//   executor  → processing → completed (posted) | failed (voided)
// total_debit = amount + network fee is reserved at creation, in the
// transaction that inserts the withdrawal (and queues its transfer).
// Each request and decision is audited in its own transaction: withdrawal.requested,
// withdrawal.approved, withdrawal.rejected; the actor is the operator known by the
// name given unless the caller names another (a cabinet user).
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
import { parseStatusFilter } from '../../db/list-page.ts';
import { newId } from '../../ids.ts';
import { findShopProfile } from '../../merchants/merchant-service.ts';
import { quotePayouts } from '../payouts/payout-fees.ts';
import {
  checkRecipients,
  parseExternalId,
  parsePayoutAmount,
  parseRecipient,
  type HotWalletSenderDeps,
} from '../payouts/payout-service.ts';
import { DEFAULT_PAYOUT_SETTINGS, type PayoutSettings } from '../payouts/payout-settings.ts';
import { enqueueOutgoingTransfer } from '../sending/outgoing-transfers.ts';
import { noOutcomeYet } from '../sending/reserved-transfer.ts';
import type { TronAddress } from '../tron/address.ts';
import { reserveWithdrawal, voidWithdrawalReservation } from './withdrawal-ledger.ts';
import * as repository from './withdrawals-repository.ts';
import type { WithdrawalRow } from './withdrawals-repository.ts';
import { WITHDRAWAL_STATUSES } from './withdrawals-tables.ts';
import { emitWithdrawalCompleted, withdrawalView, type WithdrawalView } from './withdrawals-views.ts';

export type WithdrawalDeps = HotWalletSenderDeps;

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
  /** Who asked (a cabinet user, or `cli:<os user>`). */
  readonly requestedBy: string;
  /** Who the audit log names; by default the operator called `requestedBy`. */
  readonly actor?: AuditActor | undefined;
}

export const WITHDRAWAL_LIST_LIMIT_MAX = 500;

const WITHDRAWAL_CONFLICT =
  'A withdrawal with this external_id already exists with another amount or address; use a new external_id for a new withdrawal. External ids of withdrawals are the merchant’s (per sandbox/live), whichever shop names them.';
const ACTOR_MAX_LENGTH = 200;
const REASON_MAX_LENGTH = 500;
/** A withdrawal pays the network fee only: no service fee. */
const NO_SERVICE_FEE: PayoutSettings = { ...DEFAULT_PAYOUT_SETTINGS, serviceFeeFixedMicro: 0n, serviceFeeBps: 0 };

function parseActor(value: string, field: string): string {
  const actor = value.trim();
  if (actor.length < 1 || actor.length > ACTOR_MAX_LENGTH)
    throw new InvalidRequestError(`${field} must be 1 to ${ACTOR_MAX_LENGTH} characters.`);
  return actor;
}

async function queueTransfer(tx: Tx, clock: Clock, row: WithdrawalRow): Promise<string> {
  const transfer = await enqueueOutgoingTransfer(tx, clock, {
    chain: row.chain,
    purpose: 'withdrawal',
    ownerId: row.id,
    asset: 'USDT',
    from: { kind: 'hot_wallet' },
    to: row.recipient_address as TronAddress,
    amount: row.amount_micro,
  });
  return transfer.id;
}

/**
 * Creates a withdrawal with its total_debit reserved; not enough available: InsufficientFundsError,
 * nothing stored. Idempotent by external_id per merchant and book (the balance's scope, whichever
 * of its shops names it): a repeat answers the existing withdrawal as it is now, before any chain
 * read; requests racing on one key make one withdrawal (the unique index decides, the loser
 * answers the winner's).
 */
export async function createWithdrawal(deps: WithdrawalDeps, input: CreateWithdrawalInput): Promise<WithdrawalView> {
  const externalId = parseExternalId(input.externalId, 'external_id');
  const amountMicro = parsePayoutAmount(input.amount, 'amount');
  const address = parseRecipient(input.address, 'address');
  const requestedBy = parseActor(input.requestedBy, 'requested_by');
  const shop = await findShopProfile(deps.db, input.shopId);
  if (!shop || shop.merchantId !== input.merchantId) throw new NotFoundError('No such shop of this merchant.');
  const access = await deps.chain.forMode(shop.mode);
  const repeated = (row: WithdrawalRow): WithdrawalView => {
    if (row.amount_micro !== amountMicro || row.recipient_address !== address)
      throw new DuplicateExternalIdError(WITHDRAWAL_CONFLICT);
    return withdrawalView(row);
  };
  const existing = await repository.findByExternalId(deps.db, shop.merchantId, access.chain, externalId);
  if (existing) return repeated(existing);
  await checkRecipients(deps.db, access, [{ address, field: 'address' }]);
  const [quote] = await quotePayouts(access, deps, NO_SERVICE_FEE, [{ address, amountMicro }]);
  const createInTransaction = (): Promise<WithdrawalView> =>
    inTransaction(deps.db, async (tx) => {
      const awaitsApproval = await repository.approvalRequired(tx, shop.shopId);
      const now = deps.clock.now();
      const id = newId('withdrawal');
      let row = await repository.insertWithdrawal(tx, {
        id,
        merchant_id: shop.merchantId,
        shop_id: shop.shopId,
        external_id: externalId,
        network: 'TRC20',
        chain: access.chain,
        recipient_address: address,
        amount_micro: amountMicro,
        network_fee_micro: quote!.networkFeeMicro,
        total_debit_micro: amountMicro + quote!.networkFeeMicro,
        trx_usdt_rate_micro: quote!.rateMicro,
        status: 'awaiting_approval',
        outgoing_transfer_id: null,
        requested_by: requestedBy,
        decided_by: null,
        decided_at: null,
        reject_reason: null,
        ...noOutcomeYet(now),
      });
      await reserveWithdrawal(tx, deps.clock, shop.mode, row);
      if (!awaitsApproval) {
        row = await repository.updateWithdrawal(tx, id, {
          status: 'pending',
          outgoing_transfer_id: await queueTransfer(tx, deps.clock, row),
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
          status: view.status,
        },
      });
      return view;
    });
  try {
    return await createInTransaction();
  } catch (error) {
    // A concurrent request with the same key committed first: its withdrawal is the answer.
    if (!isUniqueViolation(error, repository.WITHDRAWAL_EXTERNAL_ID_INDEX)) throw error;
    const winner = await repository.findByExternalId(deps.db, shop.merchantId, access.chain, externalId);
    if (!winner) throw error;
    return repeated(winner);
  }
}

async function lockAwaiting(tx: Tx, withdrawalId: string): Promise<WithdrawalRow> {
  const row =
    withdrawalId.startsWith('wd_') && withdrawalId.length <= 64
      ? await repository.lockWithdrawal(tx, withdrawalId)
      : undefined;
  if (!row) throw new NotFoundError('No such withdrawal.');
  if (row.status !== 'awaiting_approval')
    throw new InvalidStateError(
      `Withdrawal ${row.id} is ${row.status}; only one awaiting approval can be approved or rejected.`,
    );
  return row;
}

/** Approval queues the transfer; the money stays reserved. Recorded: who and when. */
export async function approveWithdrawal(
  deps: Pick<WithdrawalDeps, 'db' | 'clock'>,
  withdrawalId: string,
  approvedBy: string,
  /** Who the audit log names; by default the operator called `approvedBy`. */
  actor?: AuditActor,
): Promise<WithdrawalView> {
  const by = parseActor(approvedBy, 'approved_by');
  return inTransaction(deps.db, async (tx) => {
    const row = await lockAwaiting(tx, withdrawalId);
    // Approval is a second person's check: the one who asked cannot give it.
    if (by.toLowerCase() === row.requested_by.toLowerCase())
      throw new ForbiddenError(`Withdrawal ${row.id} was requested by ${by}; someone else must approve it.`);
    const now = deps.clock.now();
    const transferId = await queueTransfer(tx, deps.clock, row);
    const approved = await repository.updateWithdrawal(tx, row.id, {
      status: 'pending',
      outgoing_transfer_id: transferId,
      decided_by: by,
      decided_at: now,
      updated_at: now,
    });
    await recordAudit(tx, deps.clock, {
      actor: actor ?? operatorNamed(by),
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
  rejectedBy: string,
  reason: string | null,
  /** Who the audit log names; by default the operator called `rejectedBy`. */
  actor?: AuditActor,
): Promise<WithdrawalView> {
  const by = parseActor(rejectedBy, 'rejected_by');
  if (reason !== null && reason.length > REASON_MAX_LENGTH)
    throw new InvalidRequestError(`reason must be at most ${REASON_MAX_LENGTH} characters.`);
  return inTransaction(deps.db, async (tx) => {
    const row = await lockAwaiting(tx, withdrawalId);
    const now = deps.clock.now();
    await voidWithdrawalReservation(tx, deps.clock, row);
    const rejected = await repository.updateWithdrawal(tx, row.id, {
      status: 'rejected',
      decided_by: by,
      decided_at: now,
      reject_reason: reason,
      updated_at: now,
    });
    await emitWithdrawalCompleted(tx, deps.clock, rejected);
    await recordAudit(tx, deps.clock, {
      actor: actor ?? operatorNamed(by),
      action: 'withdrawal.rejected',
      merchantId: row.merchant_id,
      shopId: row.shop_id,
      target: row.id,
      details: { requested_by: row.requested_by, amount: withdrawalView(rejected).amount, reason },
    });
    return withdrawalView(rejected);
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

/** The shop's approval setting: with it on, new withdrawals wait in awaiting_approval. Audited as withdrawal.approval_set. */
export async function setWithdrawalApproval(
  deps: Pick<WithdrawalDeps, 'db' | 'clock'>,
  shopId: string,
  required: boolean,
  actor: AuditActor = OPERATOR,
): Promise<void> {
  const shop = await findShopProfile(deps.db, shopId);
  if (!shop) throw new NotFoundError('No such shop.');
  await inTransaction(deps.db, async (tx) => {
    await repository.saveApprovalRequired(tx, shop.shopId, required, deps.clock.now());
    await recordAudit(tx, deps.clock, {
      actor,
      action: 'withdrawal.approval_set',
      merchantId: shop.merchantId,
      shopId: shop.shopId,
      target: shop.shopId,
      details: { approval_required: required },
    });
  });
}

// The sign-once executor's contract with the modules that send money on chain
// (payouts, refunds, withdrawals, sweeping, cold storage): they enqueue a transfer in their
// own transaction and learn its fate through their outcome handler, called by
// the executor inside the transaction that records each state change
// (docs/payouts.md). Every other part of outgoing transfers is the executor's.
import type { RawBuilder } from 'kysely';
import type { Clock } from '../../clock.ts';
import type { CteAnchor } from '../../db/statement-anchor.ts';
import type { Executor, Tx } from '../../db/transaction.ts';
import { newId } from '../../ids.ts';
import { parseTronAddress, type TronAddress } from '../tron/address.ts';
import * as outflowRepository from './outflow-repository.ts';
import * as repository from './sending-repository.ts';
import type { OutgoingTransferRow } from './sending-repository.ts';
import {
  OUTGOING_PURPOSES,
  type ChainName,
  type OutgoingAsset,
  type OutgoingErrorCode,
  type OutgoingPurpose,
  type OutgoingStatus,
} from './sending-tables.ts';

export { OUTGOING_PURPOSES, type OutgoingAsset, type OutgoingErrorCode, type OutgoingPurpose };

type OutgoingSource =
  | { readonly kind: 'hot_wallet' }
  | { readonly kind: 'deposit_address'; readonly address: TronAddress; readonly derivationIndex: number };

export interface OutgoingTransferRequest {
  /** 'tron-sandbox' | 'tron-live' (receiving-tables.ts). */
  readonly chain: ChainName;
  readonly purpose: OutgoingPurpose;
  /** Id of the payout / refund / withdrawal / sweep / cold-storage move the outcome goes to. */
  readonly ownerId: string;
  /** TRX only for gas_topup; ENERGY only for energy_delegation / energy_undelegation, from the hot wallet. */
  readonly asset: OutgoingAsset;
  readonly from: OutgoingSource;
  readonly to: TronAddress;
  /** micro-USDT, or sun for TRX and for the staked TRX whose ENERGY is delegated. */
  readonly amount: bigint;
}

/** The purposes that move the hot wallet's staked energy (asset ENERGY) rather than tokens. */
const ENERGY_PURPOSES: readonly OutgoingPurpose[] = ['energy_delegation', 'energy_undelegation'];

export interface OutgoingTransfer extends OutgoingTransferRequest {
  readonly id: string;
  readonly status: OutgoingStatus;
  /** The CURRENT signed transaction's id (set before its first broadcast). */
  readonly txId: string | null;
  /** The actual on-chain fee once final (also for failed ones). */
  readonly feeSun: bigint | null;
  readonly errorCode: OutgoingErrorCode | null;
  readonly errorMessage: string | null;
  readonly blockNumber: number | null;
  readonly createdAt: Date;
  /** When its first signed transaction went to the node (null while queued). */
  readonly submittedAt: Date | null;
  readonly finalAt: Date | null;
}

/** Called by the executor INSIDE the transaction that records the state change. */
export interface OutgoingOutcomeHandler {
  /** The first signed attempt was broadcast: the owner goes to 'processing', its tx_hash set. */
  onSubmitted?(tx: Tx, clock: Clock, transfer: OutgoingTransfer): Promise<void>;
  /** 'confirmed' (solidified, success) or 'failed'. */
  onFinal(tx: Tx, clock: Clock, transfer: OutgoingTransfer): Promise<void>;
  /** The shop each owner (by id) belongs to, when it belongs to one: a sandbox chain is told whose each transfer is. */
  shopsOf?(db: Executor, ownerIds: readonly string[]): Promise<ReadonlyMap<string, string>>;
}

/** The error columns an owner row records for its failed transfer. */
export function failureColumns(transfer: Pick<OutgoingTransfer, 'errorCode' | 'errorMessage'>): {
  readonly error_code: string;
  readonly error_message: string;
} {
  return {
    error_code: transfer.errorCode ?? 'failed',
    error_message: (transfer.errorMessage ?? 'the outgoing transfer failed').slice(0, 1_000),
  };
}

/** The largest amount a transfer may carry: int8 in the table, and far above any real one. */
const MAX_AMOUNT = 2n ** 62n;

/**
 * Inserts a queued transfer in the caller's transaction (so the payout row, its
 * reservation and this commit together) and wakes the executor (a trigger of
 * migration 0019 notifies when it commits). A malformed request is a programming
 * error of the caller (its own validation comes first): it throws.
 */
export async function enqueueOutgoingTransfer(
  tx: Tx,
  clock: Clock,
  request: OutgoingTransferRequest,
): Promise<OutgoingTransfer> {
  return toOutgoingTransfer(await repository.insertTransfer(tx, queuedRow(clock, newId('outgoingTransfer'), request)));
}

/** enqueueOutgoingTransfer for many transfers in one INSERT (a batch payout's items), in the order given. */
export async function enqueueOutgoingTransfers(
  tx: Tx,
  clock: Clock,
  requests: readonly OutgoingTransferRequest[],
  /** The transfers' ids when the caller named them already (own energy reserved for them); new ones otherwise. */
  ids?: readonly string[],
): Promise<OutgoingTransfer[]> {
  const rows = await repository.insertTransfers(
    tx,
    requests.map((request, index) => queuedRow(clock, ids?.[index] ?? newId('outgoingTransfer'), request)),
  );
  return rows.map(toOutgoingTransfer);
}

/**
 * enqueueOutgoingTransfer as a data-modifying CTE of the caller's ONE statement
 * (payouts created together): each transfer is queued only if the anchor CTE
 * holds its `anchorKey`. The ids are the caller's (newId('outgoingTransfer')),
 * so its own rows can name them.
 */
export function enqueueOutgoingTransfersFrom(
  clock: Clock,
  transfers: readonly { readonly id: string; readonly request: OutgoingTransferRequest; readonly anchorKey: string }[],
  anchor: CteAnchor,
): RawBuilder<unknown> {
  return repository.queuedTransfersInsertFrom(
    transfers.map(({ id, request, anchorKey }) => ({ ...queuedRow(clock, id, request), anchorKey })),
    anchor,
  );
}

function queuedRow(clock: Clock, id: string, request: OutgoingTransferRequest) {
  checkRequest(request);
  const now = clock.now();
  return {
    id,
    chain: request.chain,
    purpose: request.purpose,
    owner_id: request.ownerId,
    asset: request.asset,
    from_kind: request.from.kind,
    from_address: request.from.kind === 'deposit_address' ? request.from.address : null,
    from_derivation_index: request.from.kind === 'deposit_address' ? BigInt(request.from.derivationIndex) : null,
    to_address: request.to,
    amount: request.amount,
    status: 'queued' as const,
    tx_id: null,
    fee_sun: null,
    block_number: null,
    error_code: null,
    error_message: null,
    short_of_funds_since: null,
    created_at: now,
    updated_at: now,
    submitted_at: null,
    final_at: null,
  };
}

export async function findOutgoingTransfer(db: Executor, id: string): Promise<OutgoingTransfer | undefined> {
  const row = await repository.findTransfer(db, id);
  return row && toOutgoingTransfer(row);
}

/** USDT the hot wallet of `chain` still has to send (transfers queued or on their way): what it holds beyond this is free. */
export async function openHotWalletUsdt(db: Executor, chain: ChainName): Promise<bigint> {
  return outflowRepository.openHotWalletUsdt(db, chain);
}

function checkRequest(request: OutgoingTransferRequest): void {
  if (!OUTGOING_PURPOSES.includes(request.purpose))
    throw new Error(`outgoing transfer: unknown purpose ${String(request.purpose)}`);
  if (request.asset === 'TRX' && request.purpose !== 'gas_topup')
    throw new Error('outgoing transfer: only gas top-ups send TRX');
  if ((request.asset === 'ENERGY') !== ENERGY_PURPOSES.includes(request.purpose))
    throw new Error('outgoing transfer: only energy (un)delegations move ENERGY, and they move nothing else');
  if (request.asset === 'ENERGY' && request.from.kind !== 'hot_wallet')
    throw new Error('outgoing transfer: only the hot wallet delegates its staked energy');
  if (request.asset !== 'TRX' && request.asset !== 'USDT' && request.asset !== 'ENERGY')
    throw new Error(`outgoing transfer: unknown asset ${String(request.asset)}`);
  if (typeof request.amount !== 'bigint' || request.amount <= 0n || request.amount > MAX_AMOUNT)
    throw new Error(`outgoing transfer: amount must be a positive bigint, got ${String(request.amount)}`);
  if (request.ownerId.length === 0 || request.ownerId.length > 100)
    throw new Error('outgoing transfer: ownerId must be 1..100 characters');
  if (!parseTronAddress(request.to).ok) throw new Error(`outgoing transfer: ${request.to} is not a TRON address`);
  if (request.from.kind === 'deposit_address') {
    if (!parseTronAddress(request.from.address).ok)
      throw new Error(`outgoing transfer: ${request.from.address} is not a TRON address`);
    if (
      !Number.isSafeInteger(request.from.derivationIndex) ||
      request.from.derivationIndex < 0 ||
      request.from.derivationIndex > 2147483647
    ) {
      throw new Error(`outgoing transfer: derivation index ${request.from.derivationIndex} out of range`);
    }
  }
}

export function toOutgoingTransfer(row: OutgoingTransferRow): OutgoingTransfer {
  const from: OutgoingSource =
    row.from_kind === 'hot_wallet'
      ? { kind: 'hot_wallet' }
      : {
          kind: 'deposit_address',
          address: row.from_address as TronAddress,
          derivationIndex: Number(row.from_derivation_index),
        };
  return {
    id: row.id,
    chain: row.chain,
    purpose: row.purpose,
    ownerId: row.owner_id,
    asset: row.asset,
    from,
    to: row.to_address as TronAddress,
    amount: BigInt(row.amount),
    status: row.status,
    txId: row.tx_id,
    feeSun: row.fee_sun === null ? null : BigInt(row.fee_sun),
    errorCode: row.error_code,
    errorMessage: row.error_message,
    blockNumber: row.block_number === null ? null : Number(row.block_number),
    createdAt: row.created_at,
    submittedAt: row.submitted_at,
    finalAt: row.final_at,
  };
}

/**
 * USDT that hot-wallet transfers signed and not final yet (payouts, refunds,
 * withdrawals, cold-storage moves) may already have moved on chain: their owners
 * book them only once final, in the same transaction (custody reconciliation
 * counts them gone); and USDT moved to the cold wallet, which is never booked
 * (it is still custody) and no longer on the addresses reconciliation reads.
 */
export function hotWalletUsdtInFlight(db: Executor, chain: ChainName): Promise<bigint> {
  return repository.sumHotWalletUsdtInFlight(db, chain);
}

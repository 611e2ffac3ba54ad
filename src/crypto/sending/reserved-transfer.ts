// One machine for the outgoing transfers that carry a merchant's reserved money
// (payouts, refunds, withdrawals): reserve (the owner's service, in the
// transaction that creates the row and enqueues the transfer;
// reservation-ledger.ts) → sign → land (the executor) → post | void, here,
// inside the executor's transaction: first broadcast → processing with
// tx_hash; confirmed → completed, the reservation posted; failed → failed with
// {code, message}, the reservation voided and the funds available again. Each
// purpose describes only what differs: its rows, its messages, its webhooks.
import type { Clock } from '../../clock.ts';
import type { Executor, Tx } from '../../db/transaction.ts';
import type { OutgoingErrorCode, OutgoingOutcomeHandler, OutgoingTransfer } from './outgoing-transfers.ts';
import { settle, type Reservation } from './reservation-ledger.ts';
import { sunToMicroUsdt } from './transfer-cost.ts';

/** The columns in which an owner table (payouts, refunds, withdrawals) records its reserved transfer's progress. */
export interface ReservedTransferColumns<Status> {
  trx_usdt_rate_micro: bigint;
  network_fee_actual_micro: bigint | null;
  status: Status;
  tx_hash: string | null;
  error_code: string | null;
  error_message: string | null;
  created_at: Date;
  updated_at: Date;
  completed_at: Date | null;
}

/** The columns every owner row of a reserved transfer has. */
export interface ReservedOwnerRow {
  readonly id: string;
  readonly status: string;
  readonly outgoing_transfer_id: string | null;
  readonly trx_usdt_rate_micro: bigint;
}

/** The outcome columns of a new owner row: nothing landed, failed or completed yet. */
export function noOutcomeYet(now: Date) {
  return {
    network_fee_actual_micro: null,
    tx_hash: null,
    error_code: null,
    error_message: null,
    created_at: now,
    updated_at: now,
    completed_at: null,
  };
}

interface ReservedOwnerChanges {
  readonly status: 'processing' | 'completed' | 'failed';
  readonly tx_hash: string | null;
  readonly network_fee_actual_micro?: bigint | null;
  readonly error_code?: string;
  readonly error_message?: string;
  readonly completed_at?: Date;
  readonly updated_at: Date;
}

export interface ReservedTransferPurpose<Row extends ReservedOwnerRow> {
  readonly name: 'payout' | 'refund' | 'withdrawal';
  lock(tx: Tx, id: string): Promise<Row | undefined>;
  /** The shop of each owner row among `ids`. */
  shopsOf(db: Executor, ids: readonly string[]): Promise<ReadonlyMap<string, string>>;
  update(tx: Tx, id: string, changes: ReservedOwnerChanges): Promise<Row>;
  reservation(row: Row): Reservation;
  /** What a failure tells the merchant, by code. */
  readonly failureMessages: Readonly<Record<OutgoingErrorCode, string>>;
  /** A failure the merchant caused: the network fee it is charged (posted instead of voided) and what it is told. */
  charge?(
    code: OutgoingErrorCode,
    actualFeeMicro: bigint | null,
    row: Row,
  ): { readonly micro: bigint; readonly message: string } | undefined;
  /** After the void of a failure, before the row is updated (a refund releases its deposits). */
  onFailed?(tx: Tx, row: Row): Promise<void>;
  /** The row went processing (no hook: nothing is announced then). */
  announceSubmitted?(tx: Tx, clock: Clock, row: Row): Promise<void>;
  /** The row became final. */
  announceFinal(tx: Tx, clock: Clock, row: Row): Promise<void>;
}

/** What each failure tells the merchant of a `noun` (transfer, refund, withdrawal), ending with what became of the money. */
export function failureMessages(
  noun: string,
  consequence: string,
  overrides: Partial<Record<OutgoingErrorCode, string>> = {},
): Readonly<Record<OutgoingErrorCode, string>> {
  const messages: Record<OutgoingErrorCode, string> = {
    reverted: `The USDT contract reverted the ${noun}`,
    out_of_energy: `The ${noun} ran out of energy on chain`,
    expired: `The ${noun} could not be included on chain in time`,
    insufficient_hot_wallet_funds: `The gateway’s hot wallet could not cover the ${noun}`,
    address_blacklisted: 'The USDT contract refuses transfers to or from this address',
    invalid_address: 'The chain refused the recipient address',
    rejected: `The chain rejected the ${noun}`,
    signer_unavailable: 'The gateway could not sign transfers (its sending key is not configured)',
    ...overrides,
  };
  for (const code of Object.keys(messages) as OutgoingErrorCode[])
    messages[code] = `${messages[code]}; ${consequence}.`;
  return messages;
}

async function lockOwn<Row extends ReservedOwnerRow>(
  purpose: ReservedTransferPurpose<Row>,
  tx: Tx,
  transfer: OutgoingTransfer,
): Promise<Row> {
  const row = await purpose.lock(tx, transfer.ownerId);
  if (!row || row.outgoing_transfer_id !== transfer.id)
    throw new Error(`outgoing transfer ${transfer.id}: its ${purpose.name} ${transfer.ownerId} is missing`);
  return row;
}

/** The post or void of the reservation, and the row's final columns. */
async function settleFinal<Row extends ReservedOwnerRow>(
  purpose: ReservedTransferPurpose<Row>,
  tx: Tx,
  clock: Clock,
  row: Row,
  transfer: OutgoingTransfer,
): Promise<ReservedOwnerChanges> {
  const now = clock.now();
  const actual = transfer.feeSun === null ? null : sunToMicroUsdt(transfer.feeSun, row.trx_usdt_rate_micro);
  const onChain = { tx_hash: transfer.txId, network_fee_actual_micro: actual, updated_at: now };
  if (transfer.status === 'confirmed') {
    await settle(tx, clock, purpose.reservation(row), 'post');
    return { ...onChain, status: 'completed', completed_at: now };
  }
  if (transfer.status !== 'failed')
    throw new Error(`outgoing transfer ${transfer.id}: onFinal with status ${transfer.status}`);
  const code = transfer.errorCode ?? 'rejected';
  const charge = purpose.charge?.(code, actual, row);
  await settle(tx, clock, purpose.reservation(row), 'void', charge?.micro ?? 0n);
  await purpose.onFailed?.(tx, row);
  return {
    ...onChain,
    status: 'failed',
    error_code: code,
    error_message: charge?.message ?? purpose.failureMessages[code] ?? transfer.errorMessage ?? code,
  };
}

/** The executor's outcome handler of one purpose. */
export function reservedTransferOutcomes<Row extends ReservedOwnerRow>(
  purpose: ReservedTransferPurpose<Row>,
): OutgoingOutcomeHandler {
  return {
    shopsOf: (db, ids) => purpose.shopsOf(db, ids),
    async onSubmitted(tx, clock, transfer) {
      const row = await lockOwn(purpose, tx, transfer);
      if (row.status !== 'pending') return;
      const updated = await purpose.update(tx, row.id, {
        status: 'processing',
        tx_hash: transfer.txId,
        updated_at: clock.now(),
      });
      await purpose.announceSubmitted?.(tx, clock, updated);
    },
    async onFinal(tx, clock, transfer) {
      const row = await lockOwn(purpose, tx, transfer);
      if (row.status === 'completed' || row.status === 'failed') return;
      const updated = await purpose.update(tx, row.id, await settleFinal(purpose, tx, clock, row, transfer));
      await purpose.announceFinal(tx, clock, updated);
    },
  };
}

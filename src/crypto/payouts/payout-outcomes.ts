// The executor's outcomes of payout transfers, inside the executor's transaction:
// first broadcast → processing with tx_hash; confirmed → completed (reservation
// posted); failed → failed with {code, message} (reservation voided, funds back).
// Each state change writes crypto.payout.updated; the last final item of a
// batch finishes the batch and writes crypto.batch.completed.
import type { Clock } from '../../clock.ts';
import type { Tx } from '../../db/transaction.ts';
import type { OutgoingErrorCode, OutgoingOutcomeHandler, OutgoingTransfer } from '../sending/outgoing-transfers.ts';
import { sunToMicroUsdt } from '../sending/transfer-cost.ts';
import { usdtText } from '../receiving/receiving-views.ts';
import { settlePayoutReservation } from './payout-ledger.ts';
import { emitBatchCompleted, emitPayoutUpdated } from './payouts-events.ts';
import * as repository from './payouts-repository.ts';
import type { PayoutRow } from './payouts-repository.ts';
import type { BatchStatus } from './payouts-tables.ts';

const ERROR_MESSAGES: Readonly<Record<OutgoingErrorCode, string>> = {
  reverted: 'The USDT contract reverted the transfer; the amount was returned to your balance.',
  out_of_energy: 'The transfer ran out of energy on chain; the amount was returned to your balance.',
  expired: 'The transfer could not be included on chain in time; the amount was returned to your balance.',
  insufficient_hot_wallet_funds: 'The gateway’s hot wallet could not cover the transfer; the amount was returned to your balance.',
  address_blacklisted: 'The USDT contract refuses transfers to or from this address; the amount was returned to your balance.',
  invalid_address: 'The chain refused the recipient address; the amount was returned to your balance.',
  rejected: 'The chain rejected the transfer; the amount was returned to your balance.',
  signer_unavailable: 'The gateway could not sign transfers (its sending key is not configured); the amount was returned to your balance.',
};

/**
 * Failures the merchant caused, whose network fee the merchant bears when the failed
 * transaction burned one (docs/payouts.md "Who pays for a failed transfer"): a recipient
 * the USDT contract blacklisted. Every other failure is the gateway's to bear.
 */
const MERCHANT_CAUSED_FAILURES: ReadonlySet<OutgoingErrorCode> = new Set(['address_blacklisted']);
const CHARGED_MESSAGES: Readonly<Partial<Record<OutgoingErrorCode, string>>> = {
  address_blacklisted: 'The USDT contract refuses transfers to this address; the amount and the service fee were returned to your balance;',
};

async function lockOwnPayout(tx: Tx, transfer: OutgoingTransfer): Promise<PayoutRow> {
  const payout = await repository.lockPayout(tx, transfer.ownerId);
  if (!payout || payout.outgoing_transfer_id !== transfer.id) throw new Error(`outgoing transfer ${transfer.id}: its payout ${transfer.ownerId} is missing`);
  return payout;
}

export const payoutOutcomes: OutgoingOutcomeHandler = {
  async onSubmitted(tx, clock, transfer) {
    const payout = await lockOwnPayout(tx, transfer);
    if (payout.status !== 'pending') return;
    const updated = await repository.updatePayout(tx, payout.id, { status: 'processing', tx_hash: transfer.txId, updated_at: clock.now() });
    await emitPayoutUpdated(tx, clock, updated);
    if (updated.batch_id !== null) await advanceBatch(tx, clock, updated.batch_id);
  },

  async onFinal(tx, clock, transfer) {
    const payout = await lockOwnPayout(tx, transfer);
    if (payout.status === 'completed' || payout.status === 'failed') return;
    const now = clock.now();
    const actual = transfer.feeSun === null ? null : sunToMicroUsdt(transfer.feeSun, payout.trx_usdt_rate_micro);
    let updated: PayoutRow;
    if (transfer.status === 'confirmed') {
      await settlePayoutReservation(tx, clock, payout, 'post');
      updated = await repository.updatePayout(tx, payout.id, {
        status: 'completed',
        tx_hash: transfer.txId,
        network_fee_actual_micro: actual,
        completed_at: now,
        updated_at: now,
      });
    } else if (transfer.status === 'failed') {
      const code = transfer.errorCode ?? 'rejected';
      const charged = MERCHANT_CAUSED_FAILURES.has(code) && actual !== null ? (actual < payout.network_fee_micro ? actual : payout.network_fee_micro) : 0n;
      await settlePayoutReservation(tx, clock, payout, 'void', charged);
      updated = await repository.updatePayout(tx, payout.id, {
        status: 'failed',
        tx_hash: transfer.txId,
        network_fee_actual_micro: actual,
        error_code: code,
        error_message: charged > 0n ? `${CHARGED_MESSAGES[code]} ${usdtText(charged)} USDT of network fee was charged: the failed transaction burned it.` : (ERROR_MESSAGES[code] ?? transfer.errorMessage ?? code),
        updated_at: now,
      });
    } else {
      throw new Error(`outgoing transfer ${transfer.id}: onFinal with status ${transfer.status}`);
    }
    await emitPayoutUpdated(tx, clock, updated);
    if (updated.batch_id !== null) await advanceBatch(tx, clock, updated.batch_id);
  },
};

/** pending → processing at the first item under way; completed | partially_completed | failed once every item is final. */
async function advanceBatch(tx: Tx, clock: Clock, batchId: string): Promise<void> {
  const batch = await repository.lockBatch(tx, batchId);
  if (!batch) throw new Error(`payout batch ${batchId} is missing`);
  if (batch.completed_at !== null) return;
  const counts = await repository.batchItemCounts(tx, batchId);
  const now = clock.now();
  if (counts.pending + counts.processing > 0) {
    if (batch.status === 'pending') await repository.updateBatch(tx, batchId, { status: 'processing', updated_at: now });
    return;
  }
  const status: BatchStatus = counts.failed === 0 ? 'completed' : counts.completed === 0 ? 'failed' : 'partially_completed';
  const finished = await repository.updateBatch(tx, batchId, { status, updated_at: now, completed_at: now });
  await emitBatchCompleted(tx, clock, finished, await repository.batchItems(tx, batchId));
}

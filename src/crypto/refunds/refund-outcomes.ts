// The executor's outcomes of refund transfers, inside the executor's transaction:
// first broadcast → processing with tx_hash; confirmed → completed (reservation
// posted); failed → failed with {code, message}, the reservation voided and the
// deposits released (they can be refunded again). Each state change writes
// crypto.refund.updated.
import type { Tx } from '../../db/transaction.ts';
import type { OutgoingErrorCode, OutgoingOutcomeHandler, OutgoingTransfer } from '../sending/outgoing-transfers.ts';
import { sunToMicroUsdt } from '../sending/transfer-cost.ts';
import { settleRefundReservation } from './refund-ledger.ts';
import * as repository from './refunds-repository.ts';
import type { RefundRow } from './refunds-repository.ts';
import { emitRefundUpdated } from './refunds-views.ts';

const AGAIN = 'nothing was taken from your balance for it, and the deposit can be refunded again';
const ERROR_MESSAGES: Readonly<Record<OutgoingErrorCode, string>> = {
  reverted: `The USDT contract reverted the refund; ${AGAIN}.`,
  out_of_energy: `The refund ran out of energy on chain; ${AGAIN}.`,
  expired: `The refund could not be included on chain in time; ${AGAIN}.`,
  insufficient_hot_wallet_funds: `The gateway’s hot wallet could not cover the refund; ${AGAIN}.`,
  address_blacklisted: `The USDT contract refuses transfers to or from this address; ${AGAIN}.`,
  invalid_address: `The chain refused the recipient address; ${AGAIN}.`,
  rejected: `The chain rejected the refund; ${AGAIN}.`,
  signer_unavailable: `The gateway could not sign transfers (its sending key is not configured); ${AGAIN}.`,
};

async function lockOwnRefund(tx: Tx, transfer: OutgoingTransfer): Promise<RefundRow> {
  const refund = await repository.lockRefund(tx, transfer.ownerId);
  if (!refund || refund.outgoing_transfer_id !== transfer.id) throw new Error(`outgoing transfer ${transfer.id}: its refund ${transfer.ownerId} is missing`);
  return refund;
}

export const refundOutcomes: OutgoingOutcomeHandler = {
  async onSubmitted(tx, clock, transfer) {
    const refund = await lockOwnRefund(tx, transfer);
    if (refund.status !== 'pending') return;
    const updated = await repository.updateRefund(tx, refund.id, { status: 'processing', tx_hash: transfer.txId, updated_at: clock.now() });
    await emitRefundUpdated(tx, clock, updated, await repository.depositIdsOfRefund(tx, refund.id));
  },

  async onFinal(tx, clock, transfer) {
    const refund = await lockOwnRefund(tx, transfer);
    if (refund.status === 'completed' || refund.status === 'failed') return;
    const now = clock.now();
    const actual = transfer.feeSun === null ? null : sunToMicroUsdt(transfer.feeSun, refund.trx_usdt_rate_micro);
    let updated: RefundRow;
    if (transfer.status === 'confirmed') {
      await settleRefundReservation(tx, clock, refund, 'post');
      updated = await repository.updateRefund(tx, refund.id, { status: 'completed', tx_hash: transfer.txId, network_fee_actual_micro: actual, completed_at: now, updated_at: now });
    } else if (transfer.status === 'failed') {
      await settleRefundReservation(tx, clock, refund, 'void');
      await repository.releaseDeposits(tx, refund.id);
      const code = transfer.errorCode ?? 'rejected';
      updated = await repository.updateRefund(tx, refund.id, {
        status: 'failed',
        tx_hash: transfer.txId,
        network_fee_actual_micro: actual,
        error_code: code,
        error_message: ERROR_MESSAGES[code] ?? transfer.errorMessage ?? code,
        updated_at: now,
      });
    } else {
      throw new Error(`outgoing transfer ${transfer.id}: onFinal with status ${transfer.status}`);
    }
    await emitRefundUpdated(tx, clock, updated, await repository.depositIdsOfRefund(tx, refund.id));
  },
};

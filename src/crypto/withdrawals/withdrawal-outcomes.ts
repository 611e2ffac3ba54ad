// The executor's outcomes of withdrawal transfers, inside the executor's
// transaction: first broadcast → processing with tx_hash (no webhook: the
// cabinet hears of the final outcome only); confirmed → completed (posted);
// failed → failed with {code, message} (voided, funds back). Both final
// states write cabinet.withdrawal.completed.
import type { Tx } from '../../db/transaction.ts';
import type { OutgoingErrorCode, OutgoingOutcomeHandler, OutgoingTransfer } from '../sending/outgoing-transfers.ts';
import { sunToMicroUsdt } from '../sending/transfer-cost.ts';
import { settleWithdrawalReservation } from './withdrawal-ledger.ts';
import * as repository from './withdrawals-repository.ts';
import type { WithdrawalRow } from './withdrawals-repository.ts';
import { emitWithdrawalCompleted } from './withdrawals-views.ts';

const BACK = 'the amount was returned to your balance';
const ERROR_MESSAGES: Readonly<Record<OutgoingErrorCode, string>> = {
  reverted: `The USDT contract reverted the withdrawal; ${BACK}.`,
  out_of_energy: `The withdrawal ran out of energy on chain; ${BACK}.`,
  expired: `The withdrawal could not be included on chain in time; ${BACK}.`,
  insufficient_hot_wallet_funds: `The gateway’s hot wallet could not cover the withdrawal; ${BACK}.`,
  address_blacklisted: `The USDT contract refuses transfers to or from this address; ${BACK}.`,
  invalid_address: `The chain refused the address; ${BACK}.`,
  rejected: `The chain rejected the withdrawal; ${BACK}.`,
  signer_unavailable: `The gateway could not sign transfers (its sending key is not configured); ${BACK}.`,
};

async function lockOwnWithdrawal(tx: Tx, transfer: OutgoingTransfer): Promise<WithdrawalRow> {
  const row = await repository.lockWithdrawal(tx, transfer.ownerId);
  if (!row || row.outgoing_transfer_id !== transfer.id) throw new Error(`outgoing transfer ${transfer.id}: its withdrawal ${transfer.ownerId} is missing`);
  return row;
}

export const withdrawalOutcomes: OutgoingOutcomeHandler = {
  async onSubmitted(tx, clock, transfer) {
    const row = await lockOwnWithdrawal(tx, transfer);
    if (row.status !== 'pending') return;
    await repository.updateWithdrawal(tx, row.id, { status: 'processing', tx_hash: transfer.txId, updated_at: clock.now() });
  },

  async onFinal(tx, clock, transfer) {
    const row = await lockOwnWithdrawal(tx, transfer);
    if (row.status === 'completed' || row.status === 'failed') return;
    const now = clock.now();
    const actual = transfer.feeSun === null ? null : sunToMicroUsdt(transfer.feeSun, row.trx_usdt_rate_micro);
    let updated: WithdrawalRow;
    if (transfer.status === 'confirmed') {
      await settleWithdrawalReservation(tx, clock, row, 'post');
      updated = await repository.updateWithdrawal(tx, row.id, { status: 'completed', tx_hash: transfer.txId, network_fee_actual_micro: actual, completed_at: now, updated_at: now });
    } else if (transfer.status === 'failed') {
      await settleWithdrawalReservation(tx, clock, row, 'void');
      const code = transfer.errorCode ?? 'rejected';
      updated = await repository.updateWithdrawal(tx, row.id, {
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
    await emitWithdrawalCompleted(tx, clock, updated);
  },
};

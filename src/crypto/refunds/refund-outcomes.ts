// What the reserved-transfer machine (crypto/sending/reserved-transfer.ts) needs
// to know of refunds: their rows, their failure messages, the deposits a failed
// refund releases (they can be refunded again), and their webhook: each state
// change writes crypto.refund.updated.
import type { Clock } from '../../clock.ts';
import type { Tx } from '../../db/transaction.ts';
import type { OutgoingErrorCode, OutgoingOutcomeHandler } from '../sending/outgoing-transfers.ts';
import { reservedTransferOutcomes } from '../sending/reserved-transfer.ts';
import { refundReservation } from './refund-ledger.ts';
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

async function announce(tx: Tx, clock: Clock, refund: RefundRow): Promise<void> {
  await emitRefundUpdated(tx, clock, refund, await repository.depositIdsOfRefund(tx, refund.id));
}

export const refundOutcomes: OutgoingOutcomeHandler = reservedTransferOutcomes<RefundRow>({
  name: 'refund',
  lock: repository.lockRefund,
  update: repository.updateRefund,
  reservation: refundReservation,
  failureMessages: ERROR_MESSAGES,
  // The deposits can be refunded again.
  onFailed: (tx, refund) => repository.releaseDeposits(tx, refund.id),
  announceSubmitted: announce,
  announceFinal: announce,
});

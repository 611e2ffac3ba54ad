// What the reserved-transfer machine (crypto/sending/reserved-transfer.ts) needs
// to know of refunds: their rows, their failure messages, the deposits a failed
// refund releases (they can be refunded again), and their webhook: each state
// change writes crypto.refund.updated.
import type { Clock } from '../../clock.ts';
import type { Tx } from '../../db/transaction.ts';
import type { OutgoingOutcomeHandler } from '../sending/outgoing-transfers.ts';
import { failureMessages, reservedTransferOutcomes } from '../sending/reserved-transfer.ts';
import { refundReservation } from './refund-ledger.ts';
import * as repository from './refunds-repository.ts';
import type { RefundRow } from './refunds-repository.ts';
import { emitRefundUpdated } from './refunds-views.ts';

const ERROR_MESSAGES = failureMessages(
  'refund',
  'nothing was taken from your balance for it, and the deposit can be refunded again',
);

async function announce(tx: Tx, clock: Clock, refund: RefundRow): Promise<void> {
  await emitRefundUpdated(tx, clock, refund, await repository.depositIdsOfRefund(tx, refund.id));
}

export const refundOutcomes: OutgoingOutcomeHandler = reservedTransferOutcomes<RefundRow>({
  name: 'refund',
  lock: repository.lockRefund,
  shopsOf: repository.shopsOfRefunds,
  update: repository.updateRefund,
  reservation: refundReservation,
  failureMessages: ERROR_MESSAGES,
  // The deposits can be refunded again.
  onFailed: (tx, refund) => repository.releaseDeposits(tx, refund.id),
  announceSubmitted: announce,
  announceFinal: announce,
});

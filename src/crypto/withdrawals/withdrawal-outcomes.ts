// What the reserved-transfer machine (crypto/sending/reserved-transfer.ts) needs
// to know of cabinet withdrawals: their rows, their failure messages, and their
// webhook: both final states write cabinet.withdrawal.completed (no webhook at
// the first broadcast: the cabinet hears of the final outcome only).
import type { OutgoingErrorCode, OutgoingOutcomeHandler } from '../sending/outgoing-transfers.ts';
import { reservedTransferOutcomes } from '../sending/reserved-transfer.ts';
import { withdrawalReservation } from './withdrawal-ledger.ts';
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

export const withdrawalOutcomes: OutgoingOutcomeHandler = reservedTransferOutcomes<WithdrawalRow>({
  name: 'withdrawal',
  lock: repository.lockWithdrawal,
  update: repository.updateWithdrawal,
  reservation: withdrawalReservation,
  failureMessages: ERROR_MESSAGES,
  announceFinal: emitWithdrawalCompleted,
});

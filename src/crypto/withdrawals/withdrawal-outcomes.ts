// What the reserved-transfer machine (crypto/sending/reserved-transfer.ts) needs
// to know of cabinet withdrawals: their rows, their failure messages, and their
// webhook: both final states write cabinet.withdrawal.completed (no webhook at
// the first broadcast: the cabinet hears of the final outcome only).
import type { OutgoingOutcomeHandler } from '../sending/outgoing-transfers.ts';
import { failureMessages, reservedTransferOutcomes } from '../sending/reserved-transfer.ts';
import { withdrawalReservation } from './withdrawal-ledger.ts';
import * as repository from './withdrawals-repository.ts';
import type { WithdrawalRow } from './withdrawals-repository.ts';
import { emitWithdrawalCompleted } from './withdrawals-views.ts';

const ERROR_MESSAGES = failureMessages('withdrawal', 'the amount was returned to your balance', {
  invalid_address: 'The chain refused the address',
});

export const withdrawalOutcomes: OutgoingOutcomeHandler = reservedTransferOutcomes<WithdrawalRow>({
  name: 'withdrawal',
  lock: repository.lockWithdrawal,
  shopsOf: repository.shopsOfWithdrawals,
  update: repository.updateWithdrawal,
  reservation: withdrawalReservation,
  failureMessages: ERROR_MESSAGES,
  announceFinal: emitWithdrawalCompleted,
});

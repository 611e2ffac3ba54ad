// What the reserved-transfer machine (crypto/sending/reserved-transfer.ts) needs
// to know of payouts: their rows, their failure messages, the network fee a
// merchant-caused failure is charged, and their webhooks: each state change
// writes crypto.payout.updated; the last final item of a batch finishes the
// batch and writes crypto.batch.completed.
import type { Clock } from '../../clock.ts';
import type { Tx } from '../../db/transaction.ts';
import type { OutgoingErrorCode, OutgoingOutcomeHandler } from '../sending/outgoing-transfers.ts';
import { failureMessages, reservedTransferOutcomes } from '../sending/reserved-transfer.ts';
import { usdtText } from '../receiving/receiving-views.ts';
import { payoutReservation } from './payout-ledger.ts';
import { emitBatchCompleted, emitPayoutUpdated } from './payouts-events.ts';
import * as repository from './payouts-repository.ts';
import type { PayoutRow } from './payouts-repository.ts';
import type { BatchStatus } from './payouts-tables.ts';

const ERROR_MESSAGES = failureMessages('transfer', 'the amount was returned to your balance');

/**
 * Failures the merchant caused, whose network fee the merchant bears when the failed
 * transaction burned one (docs/payouts.md "Who pays for a failed transfer"): a recipient
 * the USDT contract blacklisted. Every other failure is the gateway's to bear.
 */
const MERCHANT_CAUSED_FAILURES: ReadonlySet<OutgoingErrorCode> = new Set(['address_blacklisted']);
const CHARGED_MESSAGES: Readonly<Partial<Record<OutgoingErrorCode, string>>> = {
  address_blacklisted:
    'The USDT contract refuses transfers to this address; the amount and the service fee were returned to your balance;',
};

/** A blacklisted recipient: the network fee the failed transaction burned, at most what was quoted. */
function merchantCharge(
  code: OutgoingErrorCode,
  actualFeeMicro: bigint | null,
  payout: PayoutRow,
): { micro: bigint; message: string } | undefined {
  if (!MERCHANT_CAUSED_FAILURES.has(code) || actualFeeMicro === null) return undefined;
  const micro = actualFeeMicro < payout.network_fee_micro ? actualFeeMicro : payout.network_fee_micro;
  if (micro <= 0n) return undefined;
  return {
    micro,
    message: `${CHARGED_MESSAGES[code]} ${usdtText(micro)} USDT of network fee was charged: the failed transaction burned it.`,
  };
}

async function announce(tx: Tx, clock: Clock, payout: PayoutRow): Promise<void> {
  await emitPayoutUpdated(tx, clock, payout);
  if (payout.batch_id !== null) await advanceBatch(tx, clock, payout.batch_id);
}

export const payoutOutcomes: OutgoingOutcomeHandler = reservedTransferOutcomes<PayoutRow>({
  name: 'payout',
  lock: repository.lockPayout,
  shopsOf: repository.shopsOfPayouts,
  update: repository.updatePayout,
  reservation: payoutReservation,
  failureMessages: ERROR_MESSAGES,
  charge: merchantCharge,
  announceSubmitted: announce,
  announceFinal: announce,
});

/** pending → processing at the first item under way; completed | partially_completed | failed once every item is final. */
async function advanceBatch(tx: Tx, clock: Clock, batchId: string): Promise<void> {
  const batch = await repository.lockBatch(tx, batchId);
  if (!batch) throw new Error(`payout batch ${batchId} is missing`);
  if (batch.completed_at !== null) return;
  const counts = await repository.batchItemCounts(tx, batchId);
  const now = clock.now();
  if (counts.pending + counts.processing > 0) {
    if (batch.status === 'pending')
      await repository.updateBatch(tx, batchId, { status: 'processing', updated_at: now });
    return;
  }
  const status: BatchStatus =
    counts.failed === 0 ? 'completed' : counts.completed === 0 ? 'failed' : 'partially_completed';
  const finished = await repository.updateBatch(tx, batchId, { status, updated_at: now, completed_at: now });
  await emitBatchCompleted(tx, clock, finished, await repository.batchItems(tx, batchId));
}

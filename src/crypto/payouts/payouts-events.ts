// The webhooks of payouts, written to the outbox inside the transaction of the
// state change: crypto.payout.updated on every state (pending at acceptance
// too), crypto.batch.completed once every item of a batch is final.
import type { Clock } from '../../clock.ts';
import type { Tx } from '../../db/transaction.ts';
import { emit, emitMany } from '../../webhooks/outbox.ts';
import type { BatchRow, PayoutRow } from './payouts-repository.ts';
import { batchView, payoutView } from './payouts-views.ts';

export const PAYOUT_UPDATED = 'crypto.payout.updated';

export async function emitPayoutUpdated(tx: Tx, clock: Clock, payout: PayoutRow): Promise<void> {
  await emit(tx, clock, {
    shopId: payout.shop_id,
    type: PAYOUT_UPDATED,
    data: payoutView(payout),
    destination: 'shop',
  });
}

/** crypto.payout.updated of many new payouts (a batch's items) in a few statements. */
export async function emitPayoutsUpdated(tx: Tx, clock: Clock, payouts: readonly PayoutRow[]): Promise<void> {
  await emitMany(
    tx,
    clock,
    payouts.map((payout) => ({
      shopId: payout.shop_id,
      type: PAYOUT_UPDATED,
      data: payoutView(payout),
      destination: 'shop' as const,
    })),
  );
}

export async function emitBatchCompleted(
  tx: Tx,
  clock: Clock,
  batch: BatchRow,
  items: readonly PayoutRow[],
): Promise<void> {
  await emit(tx, clock, {
    shopId: batch.shop_id,
    type: 'crypto.batch.completed',
    data: batchView(batch, items),
    destination: 'shop',
  });
}

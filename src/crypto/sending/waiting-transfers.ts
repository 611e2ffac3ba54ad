// Transfers that cannot be signed now (the sender short of funds, no signing
// key, energy above the ceiling): each stays queued, with a warning,
// fundsWaitSeconds from the pass that first saw it so, then fails.
import type { ExecutorContext, ExecutorPassResult } from './executor-context.ts';
import type { OutgoingErrorCode } from './outgoing-transfers.ts';
import { waitingVerdict } from './planner.ts';
import * as repository from './sending-repository.ts';
import type { OutgoingTransferRow } from './sending-repository.ts';
import { failureOf, finishAll } from './transfer-finisher.ts';

export interface WaitReason {
  readonly code: Extract<OutgoingErrorCode, 'insufficient_hot_wallet_funds' | 'signer_unavailable' | 'rejected'>;
  readonly message: string;
}

/** Whether a transfer holds a merchant's money reserved (its owner must learn of a failure to void it). */
export function holdsReservation(row: OutgoingTransferRow): boolean {
  return row.purpose === 'payout' || row.purpose === 'refund' || row.purpose === 'withdrawal';
}

export async function handleWaiting(
  context: ExecutorContext,
  short: readonly OutgoingTransferRow[],
  now: Date,
  result: ExecutorPassResult,
  reason: WaitReason,
): Promise<void> {
  if (short.length === 0) return;
  const waitMs = context.fundsWaitSeconds * 1000;
  const { waiting, overdue } = waitingVerdict(short, now.getTime(), waitMs);
  await repository.setShortOfFunds(
    context.db,
    waiting.map((row) => row.id),
    now,
  );
  result.waitingForFunds += waiting.length;
  context.logger.warn(
    { chain: context.chain, waiting: waiting.length, failing: overdue.length, reason: reason.code },
    'outgoing transfers wait: they cannot be signed now',
  );
  const message = `${reason.message} for ${context.fundsWaitSeconds} s`;
  await finishAll(
    context,
    overdue.map((row) => failureOf(row, reason.code, message)),
    result,
  );
  // A zero wait fails at once: the first sighting counts as the whole wait.
  if (waitMs === 0) {
    await finishAll(
      context,
      waiting.map((row) => failureOf(row, reason.code, reason.message)),
      result,
    );
  }
}

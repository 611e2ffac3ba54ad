// The results of what the executor sent: every new solidified block is read
// with the results of its transactions, proven complete (one result per
// transaction of the block; a block no node proves stops the read), and each
// transfer whose transaction is in one is finished: SUCCESS → confirmed;
// REVERT / OUT_OF_ENERGY → failed (transfer-finisher.ts). Expiry is
// expiry-watcher.ts: it counts on this read having no gap.
import type { BlockHeader, TransactionOutcome } from '../tron/node-client.ts';
import { TronNodeUnavailableError } from '../tron/node-client.ts';
import { forEachLimited, type ExecutorContext, type ExecutorPassResult } from './executor-context.ts';
import { recordScannedBlock } from './leader-lease.ts';
import * as repository from './sending-repository.ts';
import { finishAll } from './transfer-finisher.ts';

/** Solidified blocks whose results one pass reads. */
const SCAN_BLOCKS_PER_PASS = 200;
const SCAN_CONCURRENCY = 8;

/** Where the read starts: past the last block read, else past the lowest block a pending attempt references. */
async function scanStart(
  context: ExecutorContext,
): Promise<{ readonly from: number | undefined; readonly lowest: number | undefined }> {
  await repository.ensureLeaseRow(context.db, context.chain, context.clock.now());
  const lease = await repository.findLease(context.db, context.chain);
  const lowest = await repository.lowestPendingReference(context.db, context.chain);
  const from =
    lease?.scanned_block === null || lease?.scanned_block === undefined ? undefined : Number(lease.scanned_block) + 1;
  return { from, lowest };
}

/** Each block's results, or null for a block no node could prove; blocks past the first gap are not asked for. */
async function blockResults(
  context: ExecutorContext,
  numbers: readonly number[],
): Promise<Map<number, readonly TransactionOutcome[] | null>> {
  const byBlock = new Map<number, readonly TransactionOutcome[] | null>();
  let firstGap = Infinity;
  await forEachLimited(numbers, SCAN_CONCURRENCY, async (number) => {
    if (number > firstGap) return;
    try {
      byBlock.set(number, await context.node.getSolidifiedBlockResults(number));
    } catch (error) {
      if (!(error instanceof TronNodeUnavailableError)) throw error;
      byBlock.set(number, null);
      firstGap = Math.min(firstGap, number);
    }
  });
  return byBlock;
}

/** Reads the results of solidified blocks from the last position on; returns the block number read through, with no gap. */
export async function scanResults(
  context: ExecutorContext,
  solid: BlockHeader,
  result: ExecutorPassResult,
): Promise<number> {
  const start = await scanStart(context);
  if (start.lowest === undefined) {
    // Nothing can land: no need to read anything up to here.
    await recordScannedBlock(context, solid.number);
    return solid.number;
  }
  // A transaction lands after the block it references; a position already past that stays (it was read).
  const from = start.from ?? start.lowest + 1;
  const to = Math.min(solid.number, from + SCAN_BLOCKS_PER_PASS - 1);
  if (to < from) return from - 1;
  const numbers = Array.from({ length: to - from + 1 }, (_, index) => from + index);
  const byBlock = await blockResults(context, numbers);
  // A block no node could prove complete (each lacked it, kept no results, or gave results that do
  // not match it) is never stepped over: what landed in it would go unseen, and the expiry proof
  // counts on every block up to the solid one having been read. The read stops before it and
  // tries again next pass.
  const gap = numbers.find((number) => byBlock.get(number) === null || !byBlock.has(number));
  const through = gap === undefined ? to : gap - 1;
  if (gap !== undefined)
    context.logger.error(
      { chain: context.chain, block: gap },
      'outgoing transfers: no node proved the results of this solidified block; results are read up to the block before it',
    );
  const outcomes = numbers.filter((number) => number <= through).flatMap((number) => byBlock.get(number) ?? []);
  result.blocksScanned += through - from + 1;
  const attempts = await repository.pendingAttemptsByTxId(
    context.db,
    context.chain,
    outcomes.map((outcome) => outcome.txId),
  );
  const byTxId = new Map(outcomes.map((outcome) => [outcome.txId, outcome]));
  await finishAll(
    context,
    attempts.map((attempt) => ({
      kind: 'outcome',
      transferId: attempt.transfer_id,
      outcome: byTxId.get(attempt.tx_id)!,
    })),
    result,
  );
  if (through >= from) await recordScannedBlock(context, through);
  return through;
}

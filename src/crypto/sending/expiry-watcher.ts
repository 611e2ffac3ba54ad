// Expiry: once the results are read through the newest solidified block, a
// transfer whose current transaction expired before that block was made is
// looked up txID by txID (every attempt it ever had) on two nodes. Found →
// finished as a result; on chain by the word of neither → every attempt is
// dead, and a new one is signed, or the transfer fails (planner.ts expiryVerdict).
import { inTransaction } from '../../db/transaction.ts';
import { TronNodeUnavailableError, type BlockHeader } from '../tron/node-client.ts';
import { forEachLimited, NODE_CONCURRENCY, type ExecutorContext, type ExecutorPassResult } from './executor-context.ts';
import { expiryVerdict } from './planner.ts';
import * as repository from './sending-repository.ts';
import { failureOf, finishAll, type Finish } from './transfer-finisher.ts';

/** Different nodes that must each answer `{}` for an expired transaction before it is judged absent (fewer when fewer are configured). */
const ABSENCE_WITNESSES = 2;

export type InFlightRow = Awaited<ReturnType<typeof repository.inFlight>>[number];

/** What the chain says of a transfer's attempts: one landed, none did, or too few nodes answered. */
async function lookUpAttempts(
  context: ExecutorContext,
  row: InFlightRow,
  attempts: readonly { readonly tx_id: string }[],
): Promise<Finish | 'absent' | 'unknown'> {
  // Any txID this transfer ever had landing means it was sent. Absence needs the word of two different
  // nodes when two are configured (one lagging, history-less or lying node alone cannot make it sign
  // again); a node that cannot answer leaves the transfer for the next pass.
  for (const attempt of attempts) {
    let answers;
    try {
      answers = await context.node.getSolidifiedOutcomeOnNodes(attempt.tx_id, { upTo: ABSENCE_WITNESSES });
    } catch (error) {
      if (!(error instanceof TronNodeUnavailableError)) throw error;
      context.logger.error(
        { chain: context.chain, transfer_id: row.id, tx_id: attempt.tx_id, err: error },
        'an expired outgoing transaction could not be looked up on enough nodes: no new one is signed yet',
      );
      return 'unknown';
    }
    if (answers === null) throw new Error('the node client answered no nodes for a look-up sized to its own');
    const outcome = answers.find((answer) => answer !== null);
    if (outcome) return { kind: 'outcome', transferId: row.id, outcome };
  }
  return 'absent';
}

/** Every attempt dead: the transfer goes back to the queue, unless another executor moved it on meanwhile. */
async function requeue(context: ExecutorContext, row: InFlightRow, pending: readonly string[]): Promise<void> {
  await inTransaction(context.db, async (tx) => {
    const locked = await repository.lockTransfer(tx, row.id);
    if (!locked || locked.tx_id !== row.tx_id || (locked.status !== 'queued' && locked.status !== 'submitted')) return;
    await repository.setAttemptsStatus(tx, pending, 'dead');
    await repository.requeue(tx, row.id, context.clock.now());
  });
  context.logger.warn(
    { chain: context.chain, transfer_id: row.id, tx_id: row.tx_id, attempt: row.attempts },
    'outgoing transaction expired without reaching the chain: signing a new one',
  );
}

/** Judges the expired transfers; returns those it handled (the rebroadcast leaves them alone). */
export async function checkExpired(
  context: ExecutorContext,
  solid: BlockHeader,
  scannedThrough: number,
  inFlight: readonly InFlightRow[],
  result: ExecutorPassResult,
): Promise<Set<string>> {
  // The proof that an expired transaction is not on chain: every solidified block up to this
  // solid one (whose time is past the expiration, so no later block can include it) has been
  // read without a gap and did not hold it. Until the scan has caught up, nothing is judged.
  if (scannedThrough < solid.number) return new Set();
  const expired = inFlight.filter((row) => row.attempt_expiration.getTime() < solid.timestamp);
  const handled = new Set<string>();
  const finishes: Finish[] = [];
  await forEachLimited(expired, NODE_CONCURRENCY, async (row) => {
    const attempts = await repository.attemptsOf(context.db, row.id);
    const found = await lookUpAttempts(context, row, attempts);
    handled.add(row.id);
    if (found === 'unknown') return;
    if (found !== 'absent') {
      finishes.push(found);
      return;
    }
    result.expiredAttempts += 1;
    const pending = attempts.filter((attempt) => attempt.status === 'pending').map((attempt) => attempt.tx_id);
    const verdict = expiryVerdict(row.attempt_last_broadcast, row.attempts, context.maxAttempts);
    if (verdict.kind === 'fail') finishes.push(failureOf(row, verdict.code, verdict.message, pending));
    else await requeue(context, row, pending);
  });
  await finishAll(context, finishes, result);
  return handled;
}

// The sign-once executor of one chain (docs/payouts.md). One pass:
//  1. leadership: take or renew the lease (leader-lease.ts);
//  2. results: finish each transfer whose transaction landed in a newly read
//     solidified block (result-watcher.ts, transfer-finisher.ts; fees booked
//     by fee-booking.ts, the owner's onFinal in the same transaction);
//  3. expiry: expired transactions proven absent are signed again or fail
//     (expiry-watcher.ts);
//  4. re-broadcast the SAME bytes of attempts whose broadcast result is
//     unknown (broadcaster.ts);
//  5. sign: what to sign (signing-decisions.ts, with the pure arithmetic of
//     planner.ts), signed and committed before the first broadcast
//     (transfer-signer.ts), then broadcast; a transfer the key cannot sign is
//     held alone (unsignable-transfers.ts).
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { BlockHeader } from '../tron/node-client.ts';
import { rebroadcast } from './broadcaster.ts';
import {
  executorContext,
  newPassResult,
  type ExecutorContext,
  type ExecutorOptions,
  type ExecutorPassResult,
} from './executor-context.ts';
import { checkExpired, type InFlightRow } from './expiry-watcher.ts';
import { LostLeadershipError, releaseLease, renewLease, takeLeaseForPass } from './leader-lease.ts';
import { OUTGOING_PURPOSES } from './outgoing-transfers.ts';
import { signingRoom } from './planner.ts';
import { scanResults } from './result-watcher.ts';
import * as repository from './sending-repository.ts';
import type { OutgoingTransferRow } from './sending-repository.ts';
import { decideSigning } from './signing-decisions.ts';
import { loadSigningKey, signAndBroadcast } from './transfer-signer.ts';
import { finishAll } from './transfer-finisher.ts';
import { holdUnsignable, splitSignable, UNSIGNABLE_RECHECK_MS } from './unsignable-transfers.ts';
import { privateKeysOf } from './unsigned-transfer.ts';
import { handleWaiting, holdsReservation } from './waiting-transfers.ts';

/** Transfers signed per pass. */
const SIGN_BATCH = 2_000;
/** Nodes whose newest head a pass takes (fewer when fewer are configured). */
const HEAD_WITNESSES = 2;

export interface OutgoingExecutor {
  readonly leaderToken: string;
  runPass(): Promise<ExecutorPassResult>;
  release(): Promise<void>;
}

type Lap = (name: string) => void;

export function createOutgoingExecutor(options: ExecutorOptions): OutgoingExecutor {
  const context = executorContext(options, options.leaderToken ?? randomUUID());
  return {
    leaderToken: context.token,
    runPass: () => runPass(context),
    release: () => releaseLease(context),
  };
}

async function runPass(context: ExecutorContext): Promise<ExecutorPassResult> {
  if (!(await takeLeaseForPass(context))) return newPassResult(false);
  const result = newPassResult(true);
  try {
    // The head (expirations count from it) is the newest of two nodes: one lagging node's head would
    // give transactions an expiration already close, or past, when they reach the chain.
    const [head, solid] = await Promise.all([
      context.node.getNewestHeadBlock(HEAD_WITNESSES),
      context.node.getSolidifiedBlock(),
    ]);
    let mark = performance.now();
    const lap: Lap = (name) => {
      const now = performance.now();
      result.timings[name] = now - mark;
      mark = now;
    };
    const scannedThrough = await scanResults(context, solid, result);
    lap('results');
    const inFlightBefore = await repository.inFlight(context.db, context.chain);
    const handled = await checkExpired(context, solid, scannedThrough, inFlightBefore, result);
    lap('expiry');
    await rebroadcast(context, head, inFlightBefore, handled, result);
    lap('rebroadcast');
    if (!(await renewLease(context))) throw new LostLeadershipError();
    await signQueued(context, head, solid, await repository.inFlight(context.db, context.chain), result, lap);
  } catch (error) {
    if (error instanceof LostLeadershipError) return result;
    throw error;
  }
  return result;
}

/**
 * Transfers that would burn more TRX than PAYGATE_TRON_MAX_BURN_TRX stay queued, unsigned, for as long as
 * that holds (never failed for it: an operator stakes, rents or raises the cap); the operator is told by an
 * error in the log and the paygate_outgoing_transfers_waiting_for_burn_cap gauge.
 */
async function holdAboveBurnCap(
  context: ExecutorContext,
  rows: readonly OutgoingTransferRow[],
  now: Date,
  result: ExecutorPassResult,
): Promise<void> {
  if (rows.length === 0) return;
  await repository.setAboveBurnCap(
    context.db,
    rows.map((row) => row.id),
    now,
  );
  result.waitingForBurnCap += rows.length;
  context.logger.error(
    {
      chain: context.chain,
      waiting: rows.length,
      max_burn_sun: context.maxBurnSun?.toString(),
      transfer_ids: rows.slice(0, 10).map((row) => row.id),
    },
    'outgoing transfers wait unsigned: each would burn more TRX than PAYGATE_TRON_MAX_BURN_TRX; stake or rent energy, or raise the cap',
  );
}

/** Step 5: the queued transfers there is room for, decided, then signed and broadcast; the rest wait or fail. */
async function signQueued(
  context: ExecutorContext,
  head: BlockHeader,
  solid: BlockHeader,
  inFlightRows: readonly InFlightRow[],
  result: ExecutorPassResult,
  lap: Lap,
): Promise<void> {
  if (await context.signingPaused?.()) return;
  const room = signingRoom(context.maxInFlight, await repository.countInFlight(context.db, context.chain), SIGN_BATCH);
  const purposes = OUTGOING_PURPOSES.filter((purpose) => context.handlers[purpose] !== undefined);
  const recheckBefore = new Date(context.clock.now().getTime() - UNSIGNABLE_RECHECK_MS);
  const unsigned = await repository.queuedUnsigned(context.db, context.chain, purposes, room, recheckBefore);
  const queued = context.outflowCap ? await context.outflowCap.admit(unsigned, context.clock.now()) : unsigned;
  if (queued.length === 0) return;
  const prices = await context.node.getChainPrices();
  const loaded = await loadSigningKey(context);
  if ('error' in loaded) {
    // The transfers wait as for funds, then fail, so their owners' reservations are voided instead of
    // staying reserved for ever. Only transfers that hold a merchant's money reserved fail; sweeps and
    // their top-ups (the gateway's own housekeeping) just stay queued.
    await handleWaiting(context, queued.filter(holdsReservation), context.clock.now(), result, {
      code: 'signer_unavailable',
      message: `the gateway could not sign: ${loaded.error.message}`,
    });
    return;
  }
  const privateKeyOf = privateKeysOf(loaded.key);
  const { signable, unsignable } = splitSignable(context, queued, privateKeyOf);
  await holdUnsignable(context, unsignable, context.clock.now(), result);
  const decisions = await decideSigning(context, signable, inFlightRows, prices);
  const now = context.clock.now();
  lap('sign-prepare');
  await finishAll(context, decisions.failures, result);
  await handleWaiting(context, decisions.short, now, result, {
    code: 'insufficient_hot_wallet_funds',
    message: 'the sending address was short of USDT or TRX',
  });
  if (decisions.aboveCeiling.length > 0) {
    const fields = {
      chain: context.chain,
      waiting: decisions.aboveCeiling.length,
      dear_energy: decisions.dearEnergy.toString(),
      ceiling: decisions.ceiling.toString(),
    };
    context.logger.error(
      fields,
      'USDT transfers wait: their energy on chain is above PAYGATE_TRON_TRANSFER_ENERGY_MAX',
    );
  }
  await holdAboveBurnCap(context, decisions.aboveBurnCap, now, result);
  if (decisions.energyWaiting.length > 0)
    context.logger.info(
      { chain: context.chain, waiting: decisions.energyWaiting.length },
      'USDT transfers wait for energy: a rental on its way, or none of the turned-on sources covers them now (burning off)',
    );
  const aboveCeiling = `the transfer's energy on chain stayed above the ceiling of ${decisions.ceiling} (PAYGATE_TRON_TRANSFER_ENERGY_MAX)`;
  await handleWaiting(context, decisions.aboveCeiling, now, result, { code: 'rejected', message: aboveCeiling });
  try {
    await signAndBroadcast(context, privateKeyOf, decisions.toSign, { head, solid, now }, result);
  } finally {
    lap('sign-and-broadcast');
  }
}

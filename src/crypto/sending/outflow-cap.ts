// The hourly outflow cap of a book (PAYGATE_TRON_HOURLY_OUTFLOW_CAP_USDT,
// docs/payouts.md): the USDT that leaves custody in any rolling hour never
// exceeds it. What counts is every transfer taking USDT out of custody —
// payouts, refunds, withdrawals — at its latest signing; sweeps into the hot
// wallet, gas top-ups and cold-storage moves stay ours and never count. A
// transfer beyond the room left waits queued (never fails for it) and is signed
// at a later pass once the window has moved on. The executor asks twice: before
// signing (which queued transfers fit), and again inside the transaction that
// records the signed attempts, under a per-chain lock and against what is
// committed, so even two executors at once cannot spend the same room.
import { Gauge, type Registry } from 'prom-client';
import type { Logger } from 'pino';
import type { Tx, Db } from '../../db/transaction.ts';
import type { OutgoingAsset, OutgoingPurpose } from './outgoing-transfers.ts';
import { registeredMetric } from '../tron/node-metrics.ts';
import * as repository from './outflow-repository.ts';
import type { ChainName } from './sending-tables.ts';

export const OUTFLOW_WINDOW_MS = 3_600_000;

/** The purposes whose USDT leaves custody. */
const OUTFLOW_PURPOSES: readonly OutgoingPurpose[] = ['payout', 'refund', 'withdrawal'];

export interface OutflowCandidate {
  readonly id: string;
  readonly purpose: OutgoingPurpose;
  readonly asset: OutgoingAsset;
  /** micro-USDT (sun for TRX, which never counts). */
  readonly amount: bigint;
}

export interface OutflowDecision<T> {
  /** To sign now: every transfer that does not count, and the counted ones that fit, oldest first. */
  readonly admitted: T[];
  /** Waiting for room in the window. */
  readonly held: T[];
  /** Larger than the whole cap: they can never be signed while the cap stands (an operator raises it). */
  readonly overCap: T[];
  /** micro-USDT counted in the window once the admitted ones are signed. */
  readonly usedMicro: bigint;
}

function countsAsOutflow(candidate: Pick<OutflowCandidate, 'purpose' | 'asset'>): boolean {
  return candidate.asset === 'USDT' && OUTFLOW_PURPOSES.includes(candidate.purpose);
}

/**
 * Which candidates (oldest first) fit a cap of `capMicro`, given the transfers already
 * signed in the window (`inWindow`, by id). A candidate already in the window (signed
 * again after its first transaction expired) is the same money: it takes no new room.
 * First in, first out: once a counted transfer does not fit, the counted ones after it
 * wait too, so a stream of small payouts never starves a large one. Only a transfer
 * larger than the whole cap is stepped over, and reported.
 */
export function admitWithinCap<T extends OutflowCandidate>(
  candidates: readonly T[],
  capMicro: bigint,
  inWindow: ReadonlyMap<string, bigint>,
): OutflowDecision<T> {
  let usedMicro = [...inWindow.values()].reduce((sum, amount) => sum + amount, 0n);
  const decision: OutflowDecision<T> = { admitted: [], held: [], overCap: [], usedMicro: 0n };
  let full = false;
  for (const candidate of candidates) {
    if (!countsAsOutflow(candidate) || inWindow.has(candidate.id)) decision.admitted.push(candidate);
    else if (candidate.amount > capMicro) decision.overCap.push(candidate);
    else if (full || usedMicro + candidate.amount > capMicro) {
      full = true;
      decision.held.push(candidate);
    } else {
      usedMicro += candidate.amount;
      decision.admitted.push(candidate);
    }
  }
  return { ...decision, usedMicro };
}

export interface OutflowCap {
  /** Before signing: the queued transfers the window has room for now; the rest stay queued. */
  admit<T extends OutflowCandidate>(candidates: readonly T[], now: Date): Promise<T[]>;
  /** Inside the transaction recording signed attempts: the same decision under the chain's lock; the ids that may be recorded. */
  claim(tx: Tx, candidates: readonly OutflowCandidate[], now: Date): Promise<Set<string>>;
  /** In that transaction, after the attempts were recorded: the counted ones enter the window. */
  record(tx: Tx, signed: readonly OutflowCandidate[], now: Date): Promise<void>;
}

export interface OutflowCapOptions {
  readonly db: Db;
  readonly chain: ChainName;
  readonly capMicro: bigint;
  readonly logger: Logger;
  readonly metrics?: Registry;
}

const HELD_METRIC = 'paygate_outflow_cap_held_transfers';
const USED_METRIC = 'paygate_outflow_last_hour_usdt';

export function createOutflowCap(options: OutflowCapOptions): OutflowCap {
  const { db, chain, capMicro, logger } = options;
  const gauges = options.metrics && outflowGauges(options.metrics);
  const windowStart = (now: Date) => new Date(now.getTime() - OUTFLOW_WINDOW_MS);
  return {
    async admit(candidates, now) {
      if (!candidates.some(countsAsOutflow)) return [...candidates];
      const decision = admitWithinCap(
        candidates,
        capMicro,
        await repository.signingsSince(db, chain, windowStart(now)),
      );
      gauges?.held.set({ chain }, decision.held.length + decision.overCap.length);
      gauges?.used.set({ chain }, Number(decision.usedMicro) / 1e6);
      if (decision.held.length > 0) {
        logger.warn(
          {
            chain,
            held: decision.held.length,
            cap_micro: capMicro.toString(),
            used_micro: decision.usedMicro.toString(),
          },
          'outgoing transfers wait: the hourly outflow cap is reached',
        );
      }
      if (decision.overCap.length > 0) {
        logger.error(
          { chain, transfers: decision.overCap.map((row) => row.id), cap_micro: capMicro.toString() },
          'outgoing transfers larger than the whole hourly outflow cap wait until it is raised',
        );
      }
      return decision.admitted;
    },
    async claim(tx, candidates, now) {
      if (!candidates.some(countsAsOutflow)) return new Set(candidates.map((candidate) => candidate.id));
      await repository.lockChainOutflow(tx, chain);
      const decision = admitWithinCap(
        candidates,
        capMicro,
        await repository.signingsSince(tx, chain, windowStart(now)),
      );
      return new Set(decision.admitted.map((candidate) => candidate.id));
    },
    async record(tx, signed, now) {
      const counted = signed.filter(countsAsOutflow);
      if (counted.length > 0) await repository.recordSignings(tx, chain, counted, now, windowStart(now));
    },
  };
}

function outflowGauges(registry: Registry): { held: Gauge; used: Gauge } {
  const held = registeredMetric(
    registry,
    HELD_METRIC,
    () =>
      new Gauge({
        name: HELD_METRIC,
        help: 'Outgoing transfers left queued at the last signing because the hourly outflow cap is reached (or they exceed it alone).',
        labelNames: ['chain'],
        registers: [registry],
      }),
  );
  const used = registeredMetric(
    registry,
    USED_METRIC,
    () =>
      new Gauge({
        name: USED_METRIC,
        help: 'USDT signed out of custody (payouts, refunds, withdrawals) in the last rolling hour, as counted against the hourly outflow cap.',
        labelNames: ['chain'],
        registers: [registry],
      }),
  );
  return { held, used };
}

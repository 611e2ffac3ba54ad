// The custody view's sweep columns (`paygate crypto addresses`): per address what
// sweeping moved to the hot wallet, what an attempt in flight is moving, and
// whether it is stuck. Kept apart from the sweeper so the receiving side's
// custody view needs nothing of the sending side.
import type { Db } from '../../db/transaction.ts';
import * as repository from './sweeping-repository.ts';

/** Three failed attempts in a row and an address is left alone: stuck until an operator looks (docs/sweeping.md). */
export const SWEEP_MAX_CONSECUTIVE_FAILURES = 3;
/** Final USDT below the threshold this long is reported stuck (dust a sweep would not pay for). */
export const SWEEP_DUST_STUCK_AFTER_MS = 7 * 24 * 60 * 60 * 1_000;

/**
 * What the custody view shows of an address's sweeping:
 * - idle: nothing to sweep, or below the threshold for less than SWEEP_DUST_STUCK_AFTER_MS;
 * - in_flight: an attempt is topping up or sweeping;
 * - retrying: the last attempt failed, another comes after its back-off;
 * - stuck_failed: SWEEP_MAX_CONSECUTIVE_FAILURES attempts failed in a row, no more are made;
 * - stuck_below_threshold: final USDT under the threshold has waited longer than SWEEP_DUST_STUCK_AFTER_MS.
 */
type SweepState = 'idle' | 'in_flight' | 'retrying' | 'stuck_failed' | 'stuck_below_threshold';

export interface AddressSweepSummary {
  /** USDT the completed sweeps moved to the hot wallet. */
  readonly sweptMicro: bigint;
  /** USDT an attempt in flight is moving (its transfer's amount, or the final USDT it began for). */
  readonly pendingMicro: bigint;
  /** Final USDT not swept while the address is stuck (0 otherwise). */
  readonly stuckMicro: bigint;
  readonly state: SweepState;
  /** The error code of the last failed attempt since the last completed one. */
  readonly lastError: string | null;
}

export async function sweepSummaries(
  db: Db,
  options: { readonly addresses: readonly string[]; readonly thresholdMicro: bigint; readonly now: Date },
): Promise<Map<string, AddressSweepSummary>> {
  const states = await repository.addressSweepStates(db, options.addresses);
  const summaries = new Map<string, AddressSweepSummary>();
  for (const row of states) {
    const unswept = row.final_micro > row.swept_micro ? row.final_micro - row.swept_micro : 0n;
    const pendingMicro =
      row.in_flight_status === null ? 0n : (row.in_flight_amount_micro ?? row.in_flight_unswept_final_micro ?? 0n);
    let state: SweepState = 'idle';
    if (row.in_flight_status !== null) state = 'in_flight';
    else if (row.failures >= SWEEP_MAX_CONSECUTIVE_FAILURES) state = 'stuck_failed';
    else if (row.failures > 0) state = 'retrying';
    else if (
      unswept > 0n &&
      unswept < options.thresholdMicro &&
      row.oldest_unswept_final_at !== null &&
      options.now.getTime() - row.oldest_unswept_final_at.getTime() >= SWEEP_DUST_STUCK_AFTER_MS
    ) {
      state = 'stuck_below_threshold';
    }
    summaries.set(row.address, {
      sweptMicro: row.swept_micro,
      pendingMicro,
      stuckMicro: state === 'stuck_failed' || state === 'stuck_below_threshold' ? unswept : 0n,
      state,
      lastError: row.failures > 0 ? row.last_error_code : null,
    });
  }
  return summaries;
}

/** Addresses read per page by custody reconciliation. */
const HOLDING_PAGE = 500;

/**
 * Every address of a key that should hold USDT (final deposits not all swept, or a
 * sweep in flight), in pages; custody reconciliation reads their balances. At most
 * `max` addresses: past it the caller is told rather than given a partial list.
 */
export async function* addressesHoldingUsdt(db: Db, keyId: 'sandbox' | 'live', max: number): AsyncGenerator<string[]> {
  let after: string | undefined;
  let seen = 0;
  for (;;) {
    const page = await repository.addressesHoldingUsdt(db, { keyId, after, limit: HOLDING_PAGE });
    if (page.length === 0) return;
    seen += page.length;
    if (seen > max) throw new RangeError(`more than ${max} deposit addresses hold unswept USDT`);
    yield page;
    if (page.length < HOLDING_PAGE) return;
    after = page.at(-1);
  }
}

/** USDT sweeps of a chain are moving now (built, not final): on the deposit address or the hot wallet, depending on when each is read. */
export function usdtBeingSwept(db: Db, chain: 'tron-sandbox' | 'tron-live'): Promise<bigint> {
  return repository.sumSweepingUsdt(db, chain);
}

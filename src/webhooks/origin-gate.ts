// Fairness between receivers inside one delivery worker. Each receiver origin
// (scheme, host, port) may have at most `limit` attempts in flight, so a
// receiver that never answers holds at most that many of the worker's slots,
// and only a bounded queue of its deliveries is held; the rest is postponed at
// the pace the receiver answers, so that claims reach other receivers' rows.
// An origin whose last attempt stalled (timed out, could not connect, or took
// at least `slowMs`) is impaired: one attempt at a time (a probe), its other
// deliveries postponed with a growing delay, until an attempt is answered
// quickly again. The state lives in this process only.
import type { SendResult } from './webhook-sender.ts';

/** Origins remembered at most; the oldest idle one is forgotten first (and is then treated as new). */
const MAX_TRACKED_ORIGINS = 10_000;
/** Until a receiver has answered once its pace is unknown: what it cannot hold comes back after this long. */
const UNKNOWN_PACE_POSTPONE_MS = 1_000;
/** Weight of the newest attempt in an origin's moving average of send durations. */
const SEND_AVERAGE_WEIGHT = 0.2;
/** The first postponement of an impaired origin's deliveries; it doubles with each further stall, plus up to half again of jitter. */
const IMPAIRED_POSTPONE_BASE_MS = 30_000;
const IMPAIRED_POSTPONE_MAX_MS = 10 * 60_000;

interface OriginState {
  inFlight: number;
  /** Stalls in a row, counting the attempts in flight together as one; above 0 the origin is impaired. */
  stalls: number;
  /** Counts stalls recorded; an attempt started before the last one does not add another. */
  stallEpoch: number;
  /** Moving average of its attempts' durations; undefined until one has ended. */
  averageSendMs: number | undefined;
  /** Epoch ms up to which postponed deliveries have been given start times. */
  bookedUntilMs: number;
}

export interface OriginGate {
  /** Whether one more attempt to the origin may start now. */
  hasRoom(origin: string): boolean;
  isImpaired(origin: string): boolean;
  inFlight(origin: string): number;
  /** How many of the origin's deliveries may be held, in flight and queued, when a queued one may wait `safeWaitMs` to start. */
  capacity(origin: string, safeWaitMs: number, queuedPerSlotMax: number): number;
  /** Resolves to a token for `finished`. */
  started(origin: string): number;
  /** An attempt ended; `result` is undefined when it ended without a send (an internal error). Resolves to whether it stalled. */
  finished(origin: string, result: SendResult | undefined, token: number): boolean;
  /** Due times for `count` deliveries of the origin that are not held now. */
  postponeTimes(origin: string, count: number, nowMs: number, random: () => number): number[];
}

export function createOriginGate(options: { readonly limit: number; readonly slowMs: number }): OriginGate {
  const origins = new Map<string, OriginState>();

  function stateOf(origin: string): OriginState {
    let state = origins.get(origin);
    if (state) return state;
    state = { inFlight: 0, stalls: 0, stallEpoch: 0, averageSendMs: undefined, bookedUntilMs: 0 };
    if (origins.size >= MAX_TRACKED_ORIGINS) {
      for (const [key, entry] of origins) {
        if (entry.inFlight === 0) {
          origins.delete(key);
          break;
        }
      }
    }
    origins.set(origin, state);
    return state;
  }

  const limitOf = (state: OriginState) => (state.stalls > 0 ? 1 : options.limit);

  return {
    hasRoom(origin) {
      const state = origins.get(origin);
      return state === undefined || state.inFlight < limitOf(state);
    },
    isImpaired: (origin) => (origins.get(origin)?.stalls ?? 0) > 0,
    inFlight: (origin) => origins.get(origin)?.inFlight ?? 0,
    capacity(origin, safeWaitMs, queuedPerSlotMax) {
      const state = stateOf(origin);
      const limit = limitOf(state);
      if (state.stalls > 0) return limit;
      const averageMs = state.averageSendMs;
      const queuedPerSlot =
        averageMs === undefined
          ? queuedPerSlotMax
          : Math.min(queuedPerSlotMax, Math.floor(safeWaitMs / Math.max(averageMs, 1)));
      return limit * (1 + queuedPerSlot);
    },
    started(origin) {
      const state = stateOf(origin);
      state.inFlight += 1;
      return state.stallEpoch;
    },
    finished(origin, result, token) {
      const state = stateOf(origin);
      state.inFlight = Math.max(0, state.inFlight - 1);
      // A refusal by the SSRF guard says nothing about the receiver and cost no slot.
      if (result === undefined || result.outcome === 'refused') return false;
      const averageMs = state.averageSendMs ?? result.durationMs;
      state.averageSendMs = averageMs + (result.durationMs - averageMs) * SEND_AVERAGE_WEIGHT;
      const stalled =
        result.outcome === 'timeout' || result.outcome === 'connection_error' || result.durationMs >= options.slowMs;
      if (!stalled) state.stalls = 0;
      // Eight attempts of one wave timing out together are one stall, not eight: the delay doubles per probe.
      else if (token === state.stallEpoch) {
        state.stalls += 1;
        state.stallEpoch += 1;
      }
      return stalled;
    },
    postponeTimes(origin, count, nowMs, random) {
      const state = stateOf(origin);
      if (state.stalls > 0) {
        const delayMs = Math.min(
          IMPAIRED_POSTPONE_MAX_MS,
          IMPAIRED_POSTPONE_BASE_MS * 2 ** Math.min(state.stalls - 1, 10),
        );
        return Array.from({ length: count }, () => nowMs + Math.round(delayMs * (1 + random() / 2)));
      }
      if (state.averageSendMs === undefined)
        return Array.from({ length: count }, () => nowMs + UNKNOWN_PACE_POSTPONE_MS);
      // Spread at the pace the receiver takes them, so that each comes back about when it can start.
      const stepMs = state.averageSendMs / limitOf(state);
      state.bookedUntilMs = Math.max(state.bookedUntilMs, nowMs);
      return Array.from({ length: count }, () => Math.ceil((state.bookedUntilMs += stepMs)));
    },
  };
}

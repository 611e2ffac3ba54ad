// java-tron's arithmetic of a staked resource's use and its recovery, step for
// step (chainbase ResourceProcessor.increase / increaseV2 / recovery,
// EnergyProcessor.calculateGlobalEnergyLimitV2, AccountCapsule.getWindowSize /
// getWindowSizeV2), with mainnet's switches on: Stake 2.0 (supportUnfreezeDelay)
// and the optimized window (supportAllowCancelAllUnfreezeV2). Usage decays
// linearly over a window of 28,800 slots (24 h of 3 s blocks); each use merges
// into the remaining usage and the window becomes the usage-weighted mean of
// the remaining window and a fresh one. Times are head slots, (head block time −
// genesis time) / 3 s. Longs are bigints; the one double step (the decay) is a
// double here too, so every result equals the node's.

/** ChainConstant.WINDOW_SIZE_MS / BLOCK_PRODUCED_INTERVAL: a day of slots. */
const WINDOW_SIZE_SLOTS = 28_800n;
/** ChainConstant.WINDOW_SIZE_PRECISION: an optimized window is stored × 1,000. */
const WINDOW_SIZE_PRECISION = 1_000n;
/** ChainConstant.PRECISION. */
const PRECISION = 1_000_000n;
/** TRX_PRECISION: sun per TRX; weights are whole TRX. */
export const SUN_PER_TRX = 1_000_000n;

/** The usage fields of one resource of an account (Account.account_resource for energy). */
export interface ResourceUsage {
  readonly usage: bigint;
  /** Slot of the last use (latest_consume_time_for_energy). */
  readonly latestSlot: bigint;
  /** The stored window size: slots, or slots × 1,000 once `optimized` (0 = never set). */
  readonly windowSize: bigint;
  readonly optimized: boolean;
}

export const UNUSED_RESOURCE: ResourceUsage = { usage: 0n, latestSlot: 0n, windowSize: 0n, optimized: false };

/** AccountCapsule.getWindowSize: the window in slots. */
function windowSizeSlots(resource: ResourceUsage): bigint {
  if (resource.windowSize === 0n) return WINDOW_SIZE_SLOTS;
  if (resource.optimized)
    return resource.windowSize < WINDOW_SIZE_PRECISION
      ? WINDOW_SIZE_SLOTS
      : resource.windowSize / WINDOW_SIZE_PRECISION;
  return resource.windowSize;
}

/** AccountCapsule.getWindowSizeV2: the window in slots × 1,000. */
function windowSizeV2(resource: ResourceUsage): bigint {
  if (resource.windowSize === 0n) return WINDOW_SIZE_SLOTS * WINDOW_SIZE_PRECISION;
  return resource.optimized ? resource.windowSize : resource.windowSize * WINDOW_SIZE_PRECISION;
}

/** ResourceProcessor.recovery → increase(lastUsage, 0, lastTime, now, windowSize): the usage left at `now`, nothing stored. */
export function recoveredUsage(resource: ResourceUsage, now: bigint): bigint {
  const windowSize = windowSizeSlots(resource);
  const averageLastUsage = decayed(
    divideCeil(resource.usage * PRECISION, windowSize),
    resource.latestSlot,
    now,
    windowSize,
  );
  return (averageLastUsage * windowSize) / PRECISION;
}

/**
 * ResourceProcessor.increaseV2: `usage` more at `now` on top of what is left of
 * the last use; returns the new usage and window. The time of the last use is
 * the caller's to set (useEnergy sets it, updateUsage does not).
 */
export function increased(resource: ResourceUsage, usage: bigint, now: bigint): ResourceUsage {
  const oldWindowSizeV2 = windowSizeV2(resource);
  const oldWindowSize = windowSizeSlots(resource);
  const averageLastUsage = decayed(
    divideCeil(resource.usage * PRECISION, oldWindowSize),
    resource.latestSlot,
    now,
    oldWindowSize,
  );
  const averageUsage = divideCeil(usage * PRECISION, WINDOW_SIZE_SLOTS);
  const newUsage = (averageLastUsage * oldWindowSize + averageUsage * WINDOW_SIZE_SLOTS) / PRECISION;
  const remainUsage = (averageLastUsage * oldWindowSize) / PRECISION;
  const { latestSlot } = resource;
  if (remainUsage === 0n)
    return { usage: newUsage, latestSlot, windowSize: WINDOW_SIZE_SLOTS * WINDOW_SIZE_PRECISION, optimized: true };
  const remainWindowSize = oldWindowSizeV2 - (now - latestSlot) * WINDOW_SIZE_PRECISION;
  const newWindowSize = min(
    divideCeil(remainUsage * remainWindowSize + usage * WINDOW_SIZE_SLOTS * WINDOW_SIZE_PRECISION, newUsage),
    WINDOW_SIZE_SLOTS * WINDOW_SIZE_PRECISION,
  );
  return { usage: newUsage, latestSlot, windowSize: newWindowSize, optimized: true };
}

/**
 * ResourceProcessor.increase(lastUsage, usage, lastTime, now): `usage` more at
 * `now` over the fixed day window, the form BandwidthProcessor.useAccountNet
 * uses for staked bandwidth; the caller sets the time of the last use. It is
 * increaseV2's sum with both windows a day, so the usage is the same and the
 * window stays unset.
 */
export function increasedOverDay(resource: ResourceUsage, usage: bigint, now: bigint): ResourceUsage {
  const dayWindow = { ...resource, windowSize: 0n, optimized: false };
  return { ...increased(dayWindow, usage, now), windowSize: 0n, optimized: false };
}

/**
 * ResourceProcessor.unDelegateIncreaseV2: the owner takes back `transferUsage`
 * of the receiver's usage with the receiver's remaining window.
 */
export function undelegateIncreased(
  owner: ResourceUsage,
  receiver: ResourceUsage,
  transferUsage: bigint,
  now: bigint,
): ResourceUsage {
  const ownerNow = { ...increased(owner, 0n, now), latestSlot: now };
  const newOwnerUsage = ownerNow.usage + transferUsage;
  if (newOwnerUsage === 0n)
    return { usage: 0n, latestSlot: now, windowSize: WINDOW_SIZE_SLOTS * WINDOW_SIZE_PRECISION, optimized: true };
  const ownerWindow = max(windowSizeV2(ownerNow), 0n);
  const receiverWindow = max(windowSizeV2(receiver), 0n);
  const newWindowSize = min(
    divideCeil(ownerNow.usage * ownerWindow + transferUsage * receiverWindow, newOwnerUsage),
    WINDOW_SIZE_SLOTS * WINDOW_SIZE_PRECISION,
  );
  return { usage: newOwnerUsage, latestSlot: now, windowSize: newWindowSize, optimized: true };
}

/**
 * EnergyProcessor.calculateGlobalEnergyLimitV2 (and BandwidthProcessor's twin):
 * the account's daily share, (frozen / 1 TRX) × (total limit / total weight), in doubles, truncated.
 */
export function resourceLimit(frozenSun: bigint, totalLimit: bigint, totalWeightTrx: bigint): bigint {
  if (totalWeightTrx === 0n) return 0n;
  const weight = Number(frozenSun) / Number(SUN_PER_TRX);
  return BigInt(Math.trunc(weight * (Number(totalLimit) / Number(totalWeightTrx))));
}

/**
 * What `usage` units of the resource are worth in staked sun at the network's
 * rate, as DelegateResourceActuator and Wallet.calcCanDelegatedEnergyMaxSize
 * compute it: (long)(usage × TRX_PRECISION × (totalWeight / totalLimit)).
 */
export function usageInSun(usage: bigint, totalLimit: bigint, totalWeightTrx: bigint): bigint {
  if (totalLimit === 0n) return 0n;
  return BigInt(Math.trunc(Number(usage) * Number(SUN_PER_TRX) * (Number(totalWeightTrx) / Number(totalLimit))));
}

/** The averaged usage after `now − lastTime` slots of linear decay (Java: round(average × decay) in doubles). */
function decayed(averageLastUsage: bigint, lastTime: bigint, now: bigint, windowSize: bigint): bigint {
  if (lastTime === now) return averageLastUsage;
  if (lastTime + windowSize <= now) return 0n;
  const delta = now - lastTime;
  const decay = Number(windowSize - delta) / Number(windowSize);
  return BigInt(Math.round(Number(averageLastUsage) * decay));
}

function divideCeil(numerator: bigint, denominator: bigint): bigint {
  return numerator / denominator + (numerator % denominator > 0n ? 1n : 0n);
}

function min(a: bigint, b: bigint): bigint {
  return a < b ? a : b;
}

function max(a: bigint, b: bigint): bigint {
  return a > b ? a : b;
}

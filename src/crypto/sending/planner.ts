// The executor's decisions, as pure functions (no I/O, no clock): what a
// transfer needs from its sending address, whether it fits, what is left after
// it, how long a transfer may wait, what an expired transfer becomes, what the
// chain's fees cost in micro-USDT. The steps around them read and write.
import type { ChainPrices, TransactionOutcome } from '../tron/node-client.ts';
import type { OutgoingErrorCode } from './outgoing-transfers.ts';
import {
  STAKE_TRANSACTION_BANDWIDTH,
  sunToMicroUsdt,
  TRX_TRANSFER_BANDWIDTH,
  USDT_TRANSFER_BANDWIDTH,
} from './transfer-cost.ts';
import type { OutgoingAsset } from './sending-tables.ts';

/** What a sending address holds, less what its transfers in flight will still take. */
export interface Balances {
  usdt: bigint;
  trxSun: bigint;
  energy: bigint;
  /** Bytes of staked bandwidth left (NetLimit − NetUsed). */
  stakedBandwidth: bigint;
  /** Bytes of the free daily allowance left (freeNetLimit − freeNetUsed). */
  freeBandwidth: bigint;
}

export interface PlannedTransfer {
  readonly asset: OutgoingAsset;
  /** micro-USDT, or sun for TRX, or the staked sun whose ENERGY is (un)delegated (it leaves no balance). */
  readonly amount: bigint;
}

/** Where a transaction's bytes come from: the chain takes the first of these that covers them whole. */
type BandwidthSource = 'staked' | 'free' | 'burned';

/** What one transfer takes from its sender: `energy` in all, of which `burnedEnergy` is paid in TRX; `bandwidth` bytes from `bandwidthSource`. */
export interface TransferNeeds {
  readonly energy: bigint;
  readonly burnedEnergy: bigint;
  readonly bandwidth: bigint;
  readonly bandwidthSource: BandwidthSource;
  readonly needUsdt: bigint;
  readonly needTrx: bigint;
}

const SUN_PER_TRX = 1_000_000n;

/** Bytes of one signed transaction of each asset (a Stake 2.0 contract runs no code: bandwidth only). */
const BANDWIDTH_OF: Readonly<Record<OutgoingAsset, bigint>> = {
  USDT: USDT_TRANSFER_BANDWIDTH,
  TRX: TRX_TRANSFER_BANDWIDTH,
  ENERGY: STAKE_TRANSACTION_BANDWIDTH,
};

/**
 * Where `bytes` come from, in java-tron's order (BandwidthProcessor.consume):
 * staked bandwidth when what is left covers them whole, else the free allowance
 * likewise, else TRX burned per byte.
 */
function bandwidthSourceOf(balance: Balances, bytes: bigint): BandwidthSource {
  if (bytes <= balance.stakedBandwidth) return 'staked';
  return bytes <= balance.freeBandwidth ? 'free' : 'burned';
}

/** The needs of `transfer` at `energy`: energy beyond the staked is burned, bytes the bandwidth left does not cover are burned, a TRX transfer may create its recipient. */
export function transferNeeds(
  transfer: PlannedTransfer,
  balance: Balances,
  prices: ChainPrices,
  energy: bigint,
): TransferNeeds {
  const burnedEnergy = energy > balance.energy ? energy - balance.energy : 0n;
  const bandwidth = BANDWIDTH_OF[transfer.asset];
  const bandwidthSource = bandwidthSourceOf(balance, bandwidth);
  const bandwidthSun = bandwidthSource === 'burned' ? bandwidth * prices.bandwidthPriceSun : 0n;
  const creation = transfer.asset === 'TRX' ? prices.createNewAccountFeeSun + prices.createAccountFeeSun : 0n;
  const costSun = burnedEnergy * prices.energyPriceSun + bandwidthSun + creation;
  return {
    energy,
    burnedEnergy,
    bandwidth,
    bandwidthSource,
    needUsdt: transfer.asset === 'USDT' ? transfer.amount : 0n,
    needTrx: costSun + (transfer.asset === 'TRX' ? transfer.amount : 0n),
  };
}

export function fits(balance: Balances, needs: TransferNeeds): boolean {
  return balance.usdt >= needs.needUsdt && balance.trxSun >= needs.needTrx;
}

/** What the address holds once the transfer is signed. */
export function afterSending(balance: Balances, needs: TransferNeeds): Balances {
  return {
    usdt: balance.usdt - needs.needUsdt,
    trxSun: balance.trxSun - needs.needTrx,
    energy: balance.energy - (needs.energy - needs.burnedEnergy),
    ...lessBandwidth(balance, needs.bandwidth, needs.bandwidthSource),
  };
}

function lessBandwidth(
  balance: Balances,
  bytes: bigint,
  source: BandwidthSource,
): Pick<Balances, 'stakedBandwidth' | 'freeBandwidth'> {
  return {
    stakedBandwidth: balance.stakedBandwidth - (source === 'staked' ? bytes : 0n),
    freeBandwidth: balance.freeBandwidth - (source === 'free' ? bytes : 0n),
  };
}

/**
 * What an address holds on chain, less what its signed transfers not yet final
 * will take: a USDT one at the dear energy, counted twice over on purpose — as
 * taken from the staked energy (so no transfer is planned `staked` on energy an
 * earlier one will use; never below 0) and as TRX burned (so the funds check
 * holds whatever the stake covers when it lands); its bytes from the bandwidth
 * they will take (staked, else free: TRX for them was never reserved, as before).
 * One already in a block is counted again on top of what the node shows: that
 * errs on the same side.
 */
export function lessInFlight(
  held: Balances,
  inFlight: readonly PlannedTransfer[],
  dearEnergy: bigint,
  prices: ChainPrices,
): Balances {
  const left = { ...held };
  for (const transfer of inFlight) {
    const bytes = BANDWIDTH_OF[transfer.asset];
    Object.assign(left, lessBandwidth(left, bytes, bandwidthSourceOf(left, bytes)));
    if (transfer.asset === 'USDT') {
      left.usdt -= transfer.amount;
      left.trxSun -= dearEnergy * prices.energyPriceSun;
      left.energy = left.energy > dearEnergy ? left.energy - dearEnergy : 0n;
    } else if (transfer.asset === 'TRX') left.trxSun -= transfer.amount;
  }
  return left;
}

/**
 * The energy a day that `stakedSun` delegated away takes from its owner: java-tron's
 * DelegateResourceActuator moves the staked TRX from frozenV2, which the owner's
 * energy limit counts (EnergyProcessor.calculateGlobalEnergyLimit), to
 * delegated_frozenV2, which it does not. Rounded up, so a plan never counts
 * energy the delegation took.
 */
export function delegatedEnergy(
  stakedSun: bigint,
  network: { readonly totalEnergyLimit: number; readonly totalEnergyWeight: number },
): bigint {
  const weightSun = BigInt(network.totalEnergyWeight) * SUN_PER_TRX;
  if (weightSun <= 0n) return 0n;
  const numerator = stakedSun * BigInt(network.totalEnergyLimit);
  return numerator / weightSun + (numerator % weightSun > 0n ? 1n : 0n);
}

/** What the hot wallet holds once a delegation of `energy` is out (signed, in flight or on chain but not yet seen). */
export function lessDelegated(balance: Balances, energy: bigint): Balances {
  return { ...balance, energy: balance.energy > energy ? balance.energy - energy : 0n };
}

/** How many transfers a pass may sign: the batch, within what the in-flight bound leaves. */
export function signingRoom(maxInFlight: number, inFlight: number, batch: number): number {
  return Math.min(batch, maxInFlight - inFlight);
}

/** A build time after `lastMs`, and not before now: strictly increasing, so two alike transfers never share bytes or a txID. */
export function nextTimestampMs(lastMs: number, nowMs: number): number {
  return Math.max(nowMs, lastMs + 1);
}

/** Transfers that cannot be signed now: those that waited `waitMs` since first seen so are overdue (fail), the rest wait. */
export function waitingVerdict<T extends { readonly short_of_funds_since: Date | null }>(
  rows: readonly T[],
  nowMs: number,
  waitMs: number,
): { readonly waiting: T[]; readonly overdue: T[] } {
  const overdue = rows.filter(
    (row) => row.short_of_funds_since !== null && nowMs - row.short_of_funds_since.getTime() >= waitMs,
  );
  return { waiting: rows.filter((row) => !overdue.includes(row)), overdue };
}

/** Broadcast answers that say the transaction can never be valid as signed, and what the transfer fails with once its attempts are proven dead. */
const REJECTION_OUTCOMES: Readonly<Record<string, OutgoingErrorCode | 'retry'>> = {
  // Our TaPoS block or expiration went stale before the node saw it: a new attempt can succeed.
  TAPOS_ERROR: 'retry',
  TRANSACTION_EXPIRATION_ERROR: 'retry',
  // The sender cannot pay (TRX for a transfer or its bandwidth, or does not exist).
  CONTRACT_VALIDATE_ERROR: 'insufficient_hot_wallet_funds',
  BANDWITH_ERROR: 'insufficient_hot_wallet_funds',
};

export type ExpiryVerdict =
  { readonly kind: 'retry' } | { readonly kind: 'fail'; readonly code: OutgoingErrorCode; readonly message: string };

/** A transfer whose every attempt is proven off chain: a rejection that can never pass fails it, so does the last attempt; otherwise it is signed again. */
export function expiryVerdict(lastBroadcast: string | null, attempts: number, maxAttempts: number): ExpiryVerdict {
  const rejection = lastBroadcast?.startsWith('rejected:') ? lastBroadcast.slice('rejected:'.length) : undefined;
  const decided = rejection === undefined ? 'retry' : (REJECTION_OUTCOMES[rejection] ?? 'rejected');
  if (decided !== 'retry')
    return { kind: 'fail', code: decided, message: `the node refused the transaction: ${rejection}` };
  if (attempts >= maxAttempts)
    return {
      kind: 'fail',
      code: 'expired',
      message: `none of its ${attempts} signed transactions reached the chain before expiring`,
    };
  return { kind: 'retry' };
}

/** The error code of a transaction that landed and failed. */
export function failureCode(outcome: Pick<TransactionOutcome, 'contractResult'>): OutgoingErrorCode {
  if (outcome.contractResult === 'OUT_OF_ENERGY') return 'out_of_energy';
  if (outcome.contractResult === 'REVERT') return 'reverted';
  return 'rejected';
}

/** The fees the chain took, in micro-USDT at the rate, each rounded up. */
export function chainCostMicro(feesSun: readonly bigint[], trxUsdtRateMicro: bigint): bigint {
  return feesSun.reduce((sum, feeSun) => sum + sunToMicroUsdt(feeSun, trxUsdtRateMicro), 0n);
}

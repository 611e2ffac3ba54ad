// What happens to a USDT transfer when a block includes it (docs/tron.md §1.5, §3):
// bandwidth first (staked, else free allowance, else TRX burned per byte), then the
// contract run with energy from the sender's stake (own and delegated to it)
// first and TRX burned at the energy price for the rest, capped by fee_limit
// (VMActuator.getAccountEnergyLimitWithFixRatio: usable = min(staked left +
// balance / price, fee_limit / price); ReceiptCapsule.payEnergyBill: staked
// energy used first, the rest burned). A run that cannot finish is still included: REVERT
// (amount above the balance, a blacklisted party, the contract paused, not a
// transfer call) burns the energy used so far; OUT_OF_ENERGY burns all usable
// energy. Either way no token moves and no log is written. A test helper may
// arm the next transfer to an address to end in REVERT or OUT_OF_ENERGY
// (ChainState.nextTransferOutcomes): it is charged exactly as the real cause would be.
// Energy follows the contract's dynamic energy factor as java-tron's VM.play
// charges it: each opcode's energy plus a penalty of energy × factor / 10,000
// (Program.updateContextContractFactor returns energy_factor + 10,000). The
// simulator applies it to the call's whole energy at once.
import { bytesToHex } from '@noble/hashes/utils.js';
import { tronAddressToHex, type TronAddress } from '../tron/address.ts';
import type { SignedTransaction } from '../tron/transaction.ts';
import type { SignedTrxTransfer } from './chain-transaction.ts';
import type { TransferContractRaw } from '../tron/transaction.ts';
import { addressWord, decodeTransferCalldata, TRANSFER_EVENT_TOPIC, uint256Word } from '../tron/trc20-usdt.ts';
import type { ChainParameters } from './chain-parameters.ts';
import type { ChainState, JournalEntry } from './chain-state.ts';
import { increased, increasedOverDay } from './resource-usage.ts';
import { bandwidthLeft, energyLeft, NO_STAKE, slotAt } from './stake-execution.ts';
import type { BlockContext } from './stake-intake.ts';

type ContractResult = 'SUCCESS' | 'REVERT' | 'OUT_OF_ENERGY';

interface EventLog {
  /** The emitting contract. */
  readonly contract: TronAddress;
  /** Hex, 64 digits each. */
  readonly topics: readonly string[];
  readonly data: string;
}

export interface Receipt {
  readonly result: ContractResult;
  readonly energyUsageTotal: number;
  /** The part of energyUsageTotal paid from staked energy (receipt.energy_usage); absent when none. */
  readonly energyUsage?: number;
  /** Unfrozen TRX returned by the transaction (TransactionInfo.withdraw_expire_amount); absent when none. */
  readonly withdrawExpireAmountSun?: bigint;
  /** The part of energyUsageTotal the dynamic energy factor added (receipt.energy_penalty_total); absent in chains saved before it. */
  readonly energyPenaltyTotal?: number;
  readonly energyFeeSun: bigint;
  /** Bandwidth used from the stake or the free allowance (0 when the bytes were paid in TRX). */
  readonly netUsage: number;
  readonly netFeeSun: bigint;
  readonly feeSun: bigint;
  readonly logs: readonly EventLog[];
  readonly resMessage?: string;
  /** ABI result of the call, hex ('' when it did not return). */
  readonly contractResult: string;
}

export type BandwidthCharge =
  | {
      readonly ok: true;
      /** Bytes paid from the sender's staked bandwidth. */
      readonly stakedBytes: number;
      /** Bytes paid from the free daily allowance. */
      readonly freeBytes: number;
      readonly burnSun: bigint;
    }
  | { readonly ok: false; readonly reason: string };

/**
 * How a transaction of `bytes` would pay for its bandwidth now (checked at
 * broadcast and again at inclusion), in BandwidthProcessor.consume's order:
 * the sender's staked bandwidth (useAccountNet), else the free allowance
 * (useFreeNet), else TRX burned per byte (useTransactionFee). Each takes the
 * whole transaction or nothing.
 */
export function bandwidthCharge(
  state: ChainState,
  parameters: ChainParameters,
  owner: TronAddress,
  bytes: number,
  atMs: number,
): BandwidthCharge {
  const account = state.account(owner);
  if (!account) return { ok: false, reason: `account [${owner}] does not exist` };
  if (bandwidthLeft(state, parameters, account.stake ?? NO_STAKE, atMs) >= BigInt(bytes))
    return { ok: true, stakedBytes: bytes, freeBytes: 0, burnSun: 0n };
  const freeLeft = parameters.freeBandwidthPerDay - state.freeBandwidthUsed(account, atMs);
  if (freeLeft >= bytes) return { ok: true, stakedBytes: 0, freeBytes: bytes, burnSun: 0n };
  const burnSun = BigInt(bytes) * parameters.bandwidthPriceSun;
  if (account.balanceSun < burnSun) return { ok: false, reason: 'Account resource insufficient error.' };
  return { ok: true, stakedBytes: 0, freeBytes: 0, burnSun };
}

/** Takes what `charge` says from the owner: staked bandwidth (its use merged at now, useAccountNet), free allowance or TRX. */
export function payBandwidth(
  state: ChainState,
  parameters: ChainParameters,
  owner: TronAddress,
  charge: Extract<BandwidthCharge, { ok: true }>,
  atMs: number,
  journal: JournalEntry[],
): void {
  if (charge.stakedBytes > 0) {
    const stake = state.account(owner)?.stake ?? NO_STAKE;
    const now = slotAt(parameters, atMs);
    const bandwidth = { ...increasedOverDay(stake.bandwidth, BigInt(charge.stakedBytes), now), latestSlot: now };
    state.setStake(owner, { ...stake, bandwidth }, journal);
  }
  if (charge.freeBytes > 0) state.useFreeBandwidth(owner, charge.freeBytes, atMs, journal);
  if (charge.burnSun > 0n) state.addTrx(owner, -charge.burnSun, journal);
}

export type TrxTransferCost =
  | (Extract<BandwidthCharge, { ok: true }> & { readonly createFeeSun: bigint })
  | { readonly ok: false; readonly reason: string };

/**
 * What a TRX transfer costs its sender besides the amount: to an existing
 * account, its bytes (bandwidthCharge); to a new one, the creation fee
 * (getCreateNewAccountFeeInSystemContract) and the account-creation bandwidth:
 * from the sender's staked bandwidth when it covers the bytes
 * (consumeBandwidthForCreateNewAccount, rate getCreateNewAccountBandwidthRate = 1),
 * else getCreateAccountFee burned; the free allowance never pays for it.
 */
export function trxTransferCost(
  state: ChainState,
  parameters: ChainParameters,
  raw: TransferContractRaw,
  bytes: number,
  atMs: number,
): TrxTransferCost {
  if (state.account(raw.toAddress)) {
    const bandwidth = bandwidthCharge(state, parameters, raw.ownerAddress, bytes, atMs);
    return bandwidth.ok ? { ...bandwidth, createFeeSun: 0n } : bandwidth;
  }
  const owner = state.account(raw.ownerAddress);
  if (!owner) return { ok: false, reason: `account [${raw.ownerAddress}] does not exist` };
  const createFeeSun = parameters.createNewAccountFeeSun;
  if (bandwidthLeft(state, parameters, owner.stake ?? NO_STAKE, atMs) >= BigInt(bytes))
    return { ok: true, stakedBytes: bytes, freeBytes: 0, burnSun: 0n, createFeeSun };
  if (owner.balanceSun < parameters.createAccountFeeSun)
    return { ok: false, reason: 'Account resource insufficient error.' };
  return { ok: true, stakedBytes: 0, freeBytes: 0, burnSun: parameters.createAccountFeeSun, createFeeSun };
}

/** Energy the transfer needs: more when the recipient holds no USDT yet (a new storage slot); the energy factor's penalty included. */
export function transferEnergy(state: ChainState, parameters: ChainParameters, to: TronAddress): number {
  return withEnergyFactor(
    state.usdtBalance(to) > 0n ? parameters.transferEnergyExistingHolder : parameters.transferEnergyNewHolder,
    state.usdtEnergyFactor,
  );
}

/** java-tron VM.play: penalty = energy × (factor + 10,000) / 10,000 − energy, added to the energy (integer division). */
function withEnergyFactor(energy: number, factor: number): number {
  return energy + energyPenalty(energy, factor);
}

function energyPenalty(energy: number, factor: number): number {
  return Number((BigInt(energy) * BigInt(factor)) / ENERGY_FACTOR_DECIMAL);
}

/** The penalty part of `energyTotal` burned at `factor` (receipt.energy_penalty_total, a constant call's energy_penalty). */
export function penaltyPart(energyTotal: number, factor: number): number {
  return energyTotal - Math.ceil((energyTotal * 10_000) / (10_000 + factor));
}

/** java-tron Constant.DYNAMIC_ENERGY_FACTOR_DECIMAL. */
const ENERGY_FACTOR_DECIMAL = 10_000n;

/**
 * Runs one transaction in a block. Returns null when it cannot be included at
 * all (the owner can no longer pay its bandwidth): the producer drops it.
 */
export function executeInBlock(
  state: ChainState,
  parameters: ChainParameters,
  transaction: SignedTransaction,
  sizeBytes: number,
  context: BlockContext,
  journal: JournalEntry[],
): Receipt | null {
  const { raw } = transaction;
  const owner = raw.ownerAddress;
  const { blockTimeMs } = context;
  const bandwidth = bandwidthCharge(state, parameters, owner, sizeBytes, blockTimeMs);
  if (!bandwidth.ok) return null;
  payBandwidth(state, parameters, owner, bandwidth, blockTimeMs, journal);

  const price = parameters.energyPriceSun;
  const balanceSun = state.account(owner)!.balanceSun;
  const staked = stakedEnergyBeforeCall(state, parameters, owner, context.nowMs, journal);
  const usableEnergy = Number(min(staked.left + balanceSun / price, raw.feeLimitSun / price));
  const call = decodeTransferCalldata(raw.data);
  const armed = call.ok
    ? state.takeNextTransferOutcome(call.to, ['revert', 'out_of_energy'], journal, transaction.txId)
    : undefined;
  const refusal = !call.ok
    ? 'not a transfer(address,uint256) call'
    : armed === 'revert'
      ? 'armed to revert'
      : revertReason(state, owner, call.to, call.amount);
  // An armed OUT_OF_ENERGY needs more than the fee_limit allows: every usable unit is burned.
  const energyNeeded =
    armed === 'out_of_energy'
      ? usableEnergy + 1
      : refusal !== null || !call.ok
        ? withEnergyFactor(parameters.revertEnergy, state.usdtEnergyFactor)
        : transferEnergy(state, parameters, call.to);

  const finish = (result: ContractResult, energy: number, extra: Partial<Receipt>): Receipt => {
    const fromStake = staked.use(BigInt(energy));
    const energyFeeSun = (BigInt(energy) - fromStake) * price;
    if (energyFeeSun > 0n) state.addTrx(owner, -energyFeeSun, journal);
    // java-tron adds the penalty per opcode, so it is the same share of whatever ran.
    const energyPenaltyTotal = penaltyPart(energy, state.usdtEnergyFactor);
    return {
      result,
      energyUsageTotal: energy,
      ...(fromStake > 0n ? { energyUsage: Number(fromStake) } : {}),
      ...(energyPenaltyTotal > 0 ? { energyPenaltyTotal } : {}),
      energyFeeSun,
      netUsage: bandwidth.stakedBytes + bandwidth.freeBytes,
      netFeeSun: bandwidth.burnSun,
      feeSun: energyFeeSun + bandwidth.burnSun,
      logs: [],
      contractResult: '',
      ...extra,
    };
  };

  if (usableEnergy < energyNeeded) {
    const resMessage = `Not enough energy for 'SSTORE' operation executing: curInvokeEnergyLimit[${usableEnergy}], curOpEnergy[${energyNeeded}], usedEnergy[0]`;
    return finish('OUT_OF_ENERGY', usableEnergy, { resMessage });
  }
  if (refusal !== null || !call.ok) return finish('REVERT', energyNeeded, { resMessage: 'REVERT opcode executed' });

  state.addUsdt(owner, -call.amount, journal);
  state.addUsdt(call.to, call.amount, journal);
  const log: EventLog = {
    contract: raw.contractAddress,
    topics: [TRANSFER_EVENT_TOPIC, bytesToHex(addressWord(owner)), bytesToHex(addressWord(call.to))],
    data: bytesToHex(uint256Word(call.amount)),
  };
  return finish('SUCCESS', energyNeeded, { logs: [log], contractResult: bytesToHex(uint256Word(1n)) });
}

/**
 * A TRX transfer (TransferContract) in a block: no contract runs, so it either
 * happens in full or, when the sender can no longer pay, is dropped (null).
 * A new recipient is created (journaled, so a reorg removes it).
 */
export function executeTrxTransferInBlock(
  state: ChainState,
  parameters: ChainParameters,
  transaction: SignedTrxTransfer,
  sizeBytes: number,
  blockTimeMs: number,
  journal: JournalEntry[],
): Receipt | null {
  const { raw } = transaction;
  const owner = state.account(raw.ownerAddress);
  const cost = trxTransferCost(state, parameters, raw, sizeBytes, blockTimeMs);
  if (!owner || !cost.ok || owner.balanceSun < raw.amountSun + cost.burnSun + cost.createFeeSun) return null;
  payBandwidth(state, parameters, raw.ownerAddress, cost, blockTimeMs, journal);
  state.addTrx(raw.ownerAddress, -(raw.amountSun + cost.createFeeSun), journal);
  state.activate(raw.toAddress, blockTimeMs, journal);
  state.addTrx(raw.toAddress, raw.amountSun, journal);
  return {
    result: 'SUCCESS',
    energyUsageTotal: 0,
    energyFeeSun: 0n,
    netUsage: cost.stakedBytes + cost.freeBytes,
    netFeeSun: cost.burnSun,
    feeSun: cost.burnSun + cost.createFeeSun,
    logs: [],
    contractResult: '',
  };
}

/**
 * The caller's staked energy as a contract call sees it: what is left at `nowMs`
 * (VMActuator reads it first), its use brought up to now (updateUsage; the
 * pre-merge and reset of TransactionTrace leave exactly that), and `use`, which
 * takes the energy used from the stake first, up to what is left
 * (EnergyProcessor.useEnergy in ReceiptCapsule.payEnergyBill), and says how much it took.
 */
function stakedEnergyBeforeCall(
  state: ChainState,
  parameters: ChainParameters,
  owner: TronAddress,
  nowMs: number,
  journal: JournalEntry[],
): { readonly left: bigint; use(energy: bigint): bigint } {
  const stake = state.account(owner)?.stake ?? NO_STAKE;
  const left = energyLeft(state, parameters, stake, nowMs);
  const now = slotAt(parameters, nowMs);
  // updateUsage, then VMActuator sets the time of the last use to now.
  const updated = { ...increased(stake.energy, 0n, now), latestSlot: now };
  return {
    left,
    use(energy) {
      const fromStake = energy <= left ? energy : left;
      // payEnergyBill runs only when the call used energy; the pre-merge (updateUsage) always.
      const after = energy > 0n ? { ...increased(updated, fromStake, now), latestSlot: now } : updated;
      state.setStake(owner, { ...stake, energy: after }, journal);
      return fromStake;
    },
  };
}

/** Why the token contract would revert this transfer, or null. */
export function revertReason(state: ChainState, from: TronAddress, to: TronAddress, amount: bigint): string | null {
  if (state.usdtPaused) return 'the contract is paused';
  if (state.usdtBlacklist.has(from)) return 'the sender is blacklisted';
  if (state.usdtBlacklist.has(to)) return 'the recipient is blacklisted';
  if (amount > state.usdtBalance(from)) return 'the amount exceeds the balance';
  return null;
}

/** The 20-byte hex a node writes as a log's address. */
export function logAddressHex(contract: TronAddress): string {
  return tronAddressToHex(contract).slice(2);
}

function min(a: bigint, b: bigint): bigint {
  return a < b ? a : b;
}

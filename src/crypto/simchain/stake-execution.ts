// Stake 2.0 on the simulated chain, as java-tron's actuators validate and run
// it (actuator FreezeBalanceV2Actuator, UnfreezeBalanceV2Actuator,
// WithdrawExpireUnfreezeActuator, DelegateResourceActuator,
// UnDelegateResourceActuator; DelegatedResourceStore.unLockExpireResource), with
// their refusal messages word for word, and the read side of Wallet
// (getAccountResource's limits, calcCanDelegatedEnergyMaxSize). Mainnet's
// switches: Stake 2.0 on, the optimized window on, the new resource model
// (TRON_POWER) off, the delegation lock period settable up to
// maxDelegateLockPeriodBlocks when that is above the fixed 3 days. `nowMs` is java-tron's latestBlockHeaderTimestamp:
// the head block's time when a transaction is taken in or a query answered, the
// parent's time while a block runs its transactions (Manager.processBlock
// updates it after them). Every change goes through ChainState's journaled setters.
import { tronAddressToHex, type TronAddress } from '../tron/address.ts';
import type { ResourceCode, StakeContract } from '../tron/stake-contracts.ts';
import { DEFAULT_DELEGATE_LOCK_PERIOD_BLOCKS, type ChainParameters } from './chain-parameters.ts';
import {
  delegationIndexKey,
  delegationKey,
  type ChainState,
  type DelegationRecord,
  type JournalEntry,
  type StakeState,
} from './chain-state.ts';
import {
  increased,
  increasedOverDay,
  recoveredUsage,
  resourceLimit,
  SUN_PER_TRX,
  undelegateIncreased,
  UNUSED_RESOURCE,
  usageInSun,
} from './resource-usage.ts';

const ZERO: Readonly<Record<ResourceCode, bigint>> = { BANDWIDTH: 0n, ENERGY: 0n };
export const NO_STAKE: StakeState = {
  frozenSun: ZERO,
  delegatedSun: ZERO,
  acquiredSun: ZERO,
  unfrozen: [],
  energy: UNUSED_RESOURCE,
  bandwidth: UNUSED_RESOURCE,
};
/** UnfreezeBalanceV2Actuator.UNFREEZE_MAX_TIMES. */
export const UNFREEZE_MAX_TIMES = 32;
/** Parameter.ChainConstant.FROZEN_PERIOD: a day. */
const FROZEN_PERIOD_MS = 86_400_000;

function stakeOf(state: ChainState, address: TronAddress): StakeState {
  return state.account(address)?.stake ?? NO_STAKE;
}

/** The head slot of a block time (EnergyProcessor.getHeadSlot). */
export function slotAt(parameters: ChainParameters, timestampMs: number): bigint {
  return BigInt(Math.floor((timestampMs - parameters.genesisTimestampMs) / parameters.blockIntervalMs));
}

/** AccountCapsule.getAllFrozenBalanceForEnergy (Stake 2.0 part): own stake not delegated away, plus what others delegated here. */
function allFrozenSun(stake: StakeState, resource: ResourceCode): bigint {
  return stake.frozenSun[resource] + stake.acquiredSun[resource];
}

/** EnergyProcessor.calculateGlobalEnergyLimit: the account's daily energy. */
export function energyLimit(state: ChainState, parameters: ChainParameters, stake: StakeState): bigint {
  return resourceLimit(allFrozenSun(stake, 'ENERGY'), parameters.totalEnergyLimit, state.totalEnergyWeightTrx);
}

/** BandwidthProcessor.calculateGlobalNetLimit: the account's daily staked bandwidth. */
export function bandwidthLimit(state: ChainState, parameters: ChainParameters, stake: StakeState): bigint {
  return resourceLimit(allFrozenSun(stake, 'BANDWIDTH'), parameters.totalBandwidthLimit, state.totalBandwidthWeightTrx);
}

/** EnergyProcessor.getAccountLeftEnergyFromFreeze: staked energy not used yet at `nowMs`. */
export function energyLeft(state: ChainState, parameters: ChainParameters, stake: StakeState, nowMs: number): bigint {
  const left = energyLimit(state, parameters, stake) - recoveredUsage(stake.energy, slotAt(parameters, nowMs));
  return left > 0n ? left : 0n;
}

/** The staked bandwidth left at `nowMs`: the limit less the use decayed to now (BandwidthProcessor.useAccountNet's check). */
export function bandwidthLeft(
  state: ChainState,
  parameters: ChainParameters,
  stake: StakeState,
  nowMs: number,
): bigint {
  const left = bandwidthLimit(state, parameters, stake) - recoveredUsage(stake.bandwidth, slotAt(parameters, nowMs));
  return left > 0n ? left : 0n;
}

/** The account's staked bandwidth use brought up to `nowMs` (BandwidthProcessor.updateUsage), as queries print it. */
export function bandwidthNow(parameters: ChainParameters, stake: StakeState, nowMs: number): StakeState['bandwidth'] {
  return increasedOverDay(stake.bandwidth, 0n, slotAt(parameters, nowMs));
}

/** The account's energy use brought up to `nowMs` (EnergyProcessor.updateUsage), as queries print it. */
export function energyNow(parameters: ChainParameters, stake: StakeState, nowMs: number): StakeState['energy'] {
  return increased(stake.energy, 0n, slotAt(parameters, nowMs));
}

/** Wallet.calcCanDelegatedEnergyMaxSize / getCanDelegatedMaxSize: sun of staked energy the account may delegate now. */
export function canDelegateMaxSun(
  state: ChainState,
  parameters: ChainParameters,
  address: TronAddress,
  resource: ResourceCode,
  nowMs: number,
): bigint {
  const account = state.account(address);
  if (!account) return 0n;
  const stake = account.stake ?? NO_STAKE;
  const maxSize = stake.frozenSun[resource] - usedStakeSun(state, parameters, stake, resource, nowMs);
  // getCanDelegatedMaxSize answers 0 below 1 TRX.
  return maxSize < SUN_PER_TRX ? 0n : maxSize;
}

/**
 * The part of the own stake that the account's current use occupies
 * (Wallet.getCanDelegatedMaxSize: getV2EnergyUsage / getV2NetUsage): usage in
 * sun at the network rate, less what others delegated here.
 */
function usedStakeSun(
  state: ChainState,
  parameters: ChainParameters,
  stake: StakeState,
  resource: ResourceCode,
  nowMs: number,
): bigint {
  const usedSun =
    resource === 'BANDWIDTH'
      ? usageInSun(
          bandwidthNow(parameters, stake, nowMs).usage,
          parameters.totalBandwidthLimit,
          state.totalBandwidthWeightTrx,
        ) - stake.acquiredSun.BANDWIDTH
      : usageInSun(energyNow(parameters, stake, nowMs).usage, parameters.totalEnergyLimit, state.totalEnergyWeightTrx) -
        stake.acquiredSun.ENERGY;
  return usedSun > 0n ? usedSun : 0n;
}

/** Why java-tron would refuse the contract now (ContractValidateException's message), or null. */
export function stakeRefusal(
  state: ChainState,
  parameters: ChainParameters,
  contract: StakeContract,
  nowMs: number,
): string | null {
  const ownerHex = tronAddressToHex(contract.ownerAddress);
  const owner = state.account(contract.ownerAddress);
  switch (contract.type) {
    case 'FreezeBalanceV2Contract': {
      if (!owner) return `Account[${ownerHex}] not exists`;
      const amount = contract.frozenBalanceSun;
      if (amount <= 0n) return 'frozenBalance must be positive';
      if (amount < SUN_PER_TRX) return 'frozenBalance must be greater than or equal to 1 TRX';
      if (amount > owner.balanceSun) return 'frozenBalance must be less than or equal to accountBalance';
      return null;
    }
    case 'UnfreezeBalanceV2Contract': {
      if (!owner) return `Account[${ownerHex}] does not exist`;
      const stake = owner.stake ?? NO_STAKE;
      const frozen = stake.frozenSun[contract.resource];
      if (frozen <= 0n)
        return contract.resource === 'ENERGY' ? 'no frozenBalance(Energy)' : 'no frozenBalance(BANDWIDTH)';
      if (contract.unfreezeBalanceSun <= 0n || contract.unfreezeBalanceSun > frozen)
        return `Invalid unfreeze_balance, [${contract.unfreezeBalanceSun}] is error`;
      if (unfreezingCount(stake, nowMs) >= UNFREEZE_MAX_TIMES)
        return 'Invalid unfreeze operation, unfreezing times is over limit';
      return null;
    }
    case 'WithdrawExpireUnfreezeContract': {
      if (!owner) return `Account[${ownerHex}] not exists`;
      if (withdrawableSun(owner.stake ?? NO_STAKE, nowMs) <= 0n) return 'no unFreeze balance to withdraw ';
      return null;
    }
    case 'DelegateResourceContract':
      return delegateRefusal(state, parameters, contract, nowMs);
    case 'UnDelegateResourceContract':
      return undelegateRefusal(state, contract, nowMs);
  }
}

function delegateRefusal(
  state: ChainState,
  parameters: ChainParameters,
  contract: Extract<StakeContract, { type: 'DelegateResourceContract' }>,
  nowMs: number,
): string | null {
  const owner = state.account(contract.ownerAddress);
  if (!owner) return `Account[${tronAddressToHex(contract.ownerAddress)}] not exists`;
  if (contract.balanceSun < SUN_PER_TRX) return 'delegateBalance must be greater than or equal to 1 TRX';
  const stake = owner.stake ?? NO_STAKE;
  const available =
    stake.frozenSun[contract.resource] - usedStakeSun(state, parameters, stake, contract.resource, nowMs);
  if (available < contract.balanceSun) {
    return contract.resource === 'ENERGY'
      ? 'delegateBalance must be less than or equal to available FreezeEnergyV2 balance'
      : 'delegateBalance must be less than or equal to available FreezeBandwidthV2 balance';
  }
  if (contract.receiverAddress === contract.ownerAddress) return 'receiverAddress must not be the same as ownerAddress';
  if (!state.account(contract.receiverAddress))
    return `Account[${tronAddressToHex(contract.receiverAddress)}] not exists`;
  // Without a chosen lock period (the committee never raised the maximum) nothing about it is checked.
  if (contract.lock && choosableLockPeriod(parameters)) {
    const lockPeriod = lockPeriodBlocks(parameters, contract.lockPeriodBlocks);
    const max = parameters.maxDelegateLockPeriodBlocks;
    if (lockPeriod < 0n || lockPeriod > max)
      return `The lock period of delegate resource cannot be less than 0 and cannot exceed ${max}!`;
    const locked = state.delegations.get(delegationKey(contract.ownerAddress, contract.receiverAddress, true));
    if (locked) {
      const remainMs = locked.expireTimeMs[contract.resource] - nowMs;
      if (lockPeriod * BigInt(parameters.blockIntervalMs) < BigInt(remainMs)) {
        const name = contract.resource;
        return `The lock period for ${name} this time cannot be less than the remaining time[${remainMs}ms] of the last lock period for ${name}!`;
      }
    }
  }
  return null;
}

function undelegateRefusal(
  state: ChainState,
  contract: Extract<StakeContract, { type: 'UnDelegateResourceContract' }>,
  nowMs: number,
): string | null {
  if (!state.account(contract.ownerAddress))
    return `Account[${tronAddressToHex(contract.ownerAddress)}] does not exist`;
  if (contract.receiverAddress === contract.ownerAddress) return 'receiverAddress must not be the same as ownerAddress';
  const unlocked = state.delegations.get(delegationKey(contract.ownerAddress, contract.receiverAddress, false));
  const locked = state.delegations.get(delegationKey(contract.ownerAddress, contract.receiverAddress, true));
  if (!unlocked && !locked) return 'delegated Resource does not exist';
  if (contract.balanceSun <= 0n) return 'unDelegateBalance must be more than 0 TRX';
  const resource = contract.resource;
  let available = unlocked?.balanceSun[resource] ?? 0n;
  if (locked && locked.expireTimeMs[resource] < nowMs) available += locked.balanceSun[resource];
  if (available < contract.balanceSun) {
    return resource === 'ENERGY'
      ? `insufficient delegateFrozenBalance(Energy), request=${contract.balanceSun}, unlock_balance=${available}`
      : `insufficient delegatedFrozenBalance(BANDWIDTH), request=${contract.balanceSun}, unlock_balance=${available}`;
  }
  return null;
}

/** What a run of the contract reports besides success (TransactionInfo.withdraw_expire_amount). */
export interface StakeOutcome {
  readonly withdrawExpireAmountSun: bigint;
}

/** Runs a contract stakeRefusal accepted (the actuator's execute), journaling every change. */
export function executeStake(
  state: ChainState,
  parameters: ChainParameters,
  contract: StakeContract,
  nowMs: number,
  journal: JournalEntry[],
): StakeOutcome {
  const address = contract.ownerAddress;
  const owner = state.account(address);
  if (!owner) throw new Error(`account ${address} does not exist`);
  const stake = owner.stake ?? NO_STAKE;
  switch (contract.type) {
    case 'FreezeBalanceV2Contract': {
      const frozenSun = {
        ...stake.frozenSun,
        [contract.resource]: stake.frozenSun[contract.resource] + contract.frozenBalanceSun,
      };
      const next = { ...stake, frozenSun };
      addWeightChange(state, contract.resource, stake, next, journal);
      state.setStake(address, next, journal);
      state.addTrx(address, -contract.frozenBalanceSun, journal);
      return { withdrawExpireAmountSun: 0n };
    }
    case 'UnfreezeBalanceV2Contract': {
      const expired = withdrawableSun(stake, nowMs);
      const unfrozen = [
        ...stake.unfrozen.filter((item) => item.expireTimeMs > nowMs),
        {
          resource: contract.resource,
          amountSun: contract.unfreezeBalanceSun,
          expireTimeMs: nowMs + parameters.unfreezeDelayDays * FROZEN_PERIOD_MS,
        },
      ];
      const frozenSun = {
        ...stake.frozenSun,
        [contract.resource]: stake.frozenSun[contract.resource] - contract.unfreezeBalanceSun,
      };
      const next = { ...stake, frozenSun, unfrozen };
      addWeightChange(state, contract.resource, stake, next, journal);
      state.setStake(address, next, journal);
      if (expired > 0n) state.addTrx(address, expired, journal);
      return { withdrawExpireAmountSun: expired };
    }
    case 'WithdrawExpireUnfreezeContract': {
      const expired = withdrawableSun(stake, nowMs);
      state.setStake(
        address,
        { ...stake, unfrozen: stake.unfrozen.filter((item) => item.expireTimeMs > nowMs) },
        journal,
      );
      state.addTrx(address, expired, journal);
      return { withdrawExpireAmountSun: expired };
    }
    case 'DelegateResourceContract':
      executeDelegate(state, parameters, contract, nowMs, journal);
      return { withdrawExpireAmountSun: 0n };
    case 'UnDelegateResourceContract':
      executeUndelegate(state, parameters, contract, nowMs, journal);
      return { withdrawExpireAmountSun: 0n };
  }
}

function executeDelegate(
  state: ChainState,
  parameters: ChainParameters,
  contract: Extract<StakeContract, { type: 'DelegateResourceContract' }>,
  nowMs: number,
  journal: JournalEntry[],
): void {
  const { ownerAddress: from, receiverAddress: to, resource, balanceSun } = contract;
  unlockExpired(state, from, to, nowMs, journal);
  const expireTimeMs = contract.lock
    ? nowMs + Number(lockPeriodBlocks(parameters, contract.lockPeriodBlocks)) * parameters.blockIntervalMs
    : 0;
  const key = delegationKey(from, to, contract.lock);
  const record = state.delegations.get(key) ?? emptyDelegation(from, to, contract.lock);
  state.setDelegation(
    key,
    {
      ...record,
      balanceSun: { ...record.balanceSun, [resource]: record.balanceSun[resource] + balanceSun },
      expireTimeMs: { ...record.expireTimeMs, [resource]: expireTimeMs },
    },
    journal,
  );
  state.setDelegationIndex(delegationIndexKey(from, to), { from, to, timestampMs: nowMs }, journal);
  const receiver = stakeOf(state, to);
  state.setStake(
    to,
    { ...receiver, acquiredSun: { ...receiver.acquiredSun, [resource]: receiver.acquiredSun[resource] + balanceSun } },
    journal,
  );
  const owner = stakeOf(state, from);
  state.setStake(
    from,
    {
      ...owner,
      delegatedSun: { ...owner.delegatedSun, [resource]: owner.delegatedSun[resource] + balanceSun },
      frozenSun: { ...owner.frozenSun, [resource]: owner.frozenSun[resource] - balanceSun },
    },
    journal,
  );
}

function executeUndelegate(
  state: ChainState,
  parameters: ChainParameters,
  contract: Extract<StakeContract, { type: 'UnDelegateResourceContract' }>,
  nowMs: number,
  journal: JournalEntry[],
): void {
  const { ownerAddress: from, receiverAddress: to, resource, balanceSun } = contract;
  const now = slotAt(parameters, nowMs);
  let transferUsage = 0n;
  let receiverEnergy = UNUSED_RESOURCE;
  if (state.account(to)) {
    const receiver = stakeOf(state, to);
    let acquiredSun = receiver.acquiredSun[resource] - balanceSun;
    let energy = receiver.energy;
    if (resource === 'ENERGY') {
      energy = increased(receiver.energy, 0n, now);
      if (receiver.acquiredSun.ENERGY < balanceSun) acquiredSun = 0n;
      else {
        // The receiver gives back the share of its use that the undelegated stake bore, at most what that stake yields a day.
        const maxUsage = BigInt(
          Math.trunc(
            (Number(balanceSun) / Number(SUN_PER_TRX)) *
              (Number(parameters.totalEnergyLimit) / Number(state.totalEnergyWeightTrx)),
          ),
        );
        const share = BigInt(
          Math.trunc(Number(energy.usage) * (Number(balanceSun) / Number(allFrozenSun(receiver, 'ENERGY')))),
        );
        transferUsage = share < maxUsage ? share : maxUsage;
      }
      energy = { ...energy, usage: energy.usage - transferUsage, latestSlot: now };
      receiverEnergy = energy;
    } else if (acquiredSun < 0n) acquiredSun = 0n;
    state.setStake(
      to,
      { ...receiver, energy, acquiredSun: { ...receiver.acquiredSun, [resource]: acquiredSun } },
      journal,
    );
  }
  unlockExpired(state, from, to, nowMs, journal);
  const unlockKey = delegationKey(from, to, false);
  const unlocked = state.delegations.get(unlockKey) ?? emptyDelegation(from, to, false);
  const remaining: DelegationRecord = {
    ...unlocked,
    balanceSun: { ...unlocked.balanceSun, [resource]: unlocked.balanceSun[resource] - balanceSun },
    expireTimeMs: { ...unlocked.expireTimeMs, [resource]: 0 },
  };
  const owner = stakeOf(state, from);
  let ownerEnergy = owner.energy;
  if (resource === 'ENERGY' && state.account(to) && transferUsage > 0n)
    ownerEnergy = undelegateIncreased(owner.energy, receiverEnergy, transferUsage, now);
  state.setStake(
    from,
    {
      ...owner,
      energy: ownerEnergy,
      delegatedSun: { ...owner.delegatedSun, [resource]: owner.delegatedSun[resource] - balanceSun },
      frozenSun: { ...owner.frozenSun, [resource]: owner.frozenSun[resource] + balanceSun },
    },
    journal,
  );
  const empty = remaining.balanceSun.BANDWIDTH === 0n && remaining.balanceSun.ENERGY === 0n;
  state.setDelegation(unlockKey, empty ? undefined : remaining, journal);
  if (empty && !state.delegations.has(delegationKey(from, to, true)))
    state.setDelegationIndex(delegationIndexKey(from, to), undefined, journal);
}

/** DelegatedResourceStore.unLockExpireResource: a lock that ran out moves its balance to the unlocked record. */
function unlockExpired(
  state: ChainState,
  from: TronAddress,
  to: TronAddress,
  nowMs: number,
  journal: JournalEntry[],
): void {
  const lockKey = delegationKey(from, to, true);
  const locked = state.delegations.get(lockKey);
  if (!locked) return;
  if (locked.expireTimeMs.ENERGY >= nowMs && locked.expireTimeMs.BANDWIDTH >= nowMs) return;
  const unlockKey = delegationKey(from, to, false);
  let unlocked = state.delegations.get(unlockKey) ?? emptyDelegation(from, to, false);
  let stillLocked = locked;
  for (const resource of ['ENERGY', 'BANDWIDTH'] as const) {
    if (stillLocked.expireTimeMs[resource] >= nowMs) continue;
    unlocked = {
      ...unlocked,
      balanceSun: {
        ...unlocked.balanceSun,
        [resource]: unlocked.balanceSun[resource] + stillLocked.balanceSun[resource],
      },
      expireTimeMs: { ...unlocked.expireTimeMs, [resource]: 0 },
    };
    stillLocked = {
      ...stillLocked,
      balanceSun: { ...stillLocked.balanceSun, [resource]: 0n },
      expireTimeMs: { ...stillLocked.expireTimeMs, [resource]: 0 },
    };
  }
  const empty = stillLocked.balanceSun.BANDWIDTH === 0n && stillLocked.balanceSun.ENERGY === 0n;
  state.setDelegation(lockKey, empty ? undefined : stillLocked, journal);
  state.setDelegation(unlockKey, unlocked, journal);
}

function emptyDelegation(from: TronAddress, to: TronAddress, lock: boolean): DelegationRecord {
  return { from, to, lock, balanceSun: ZERO, expireTimeMs: { BANDWIDTH: 0, ENERGY: 0 } };
}

/** The network weight follows the account's own stake, delegated part included, in whole TRX (each before/after rounded down). */
function addWeightChange(
  state: ChainState,
  resource: ResourceCode,
  before: StakeState,
  after: StakeState,
  journal: JournalEntry[],
): void {
  const weight = (stake: StakeState) => (stake.frozenSun[resource] + stake.delegatedSun[resource]) / SUN_PER_TRX;
  const delta = weight(after) - weight(before);
  if (resource === 'ENERGY') state.addWeights(delta, 0n, journal);
  else state.addWeights(0n, delta, journal);
}

/** DynamicPropertiesStore.supportMaxDelegateLockPeriod: a lock period may be chosen only once the committee raised the maximum. */
function choosableLockPeriod(parameters: ChainParameters): boolean {
  return (
    parameters.maxDelegateLockPeriodBlocks > DEFAULT_DELEGATE_LOCK_PERIOD_BLOCKS && parameters.unfreezeDelayDays > 0
  );
}

/** DelegateResourceActuator.getLockPeriod: lock_period 0, or any when it cannot be chosen, is the fixed 3 days. */
function lockPeriodBlocks(parameters: ChainParameters, lockPeriod: bigint): bigint {
  return choosableLockPeriod(parameters) && lockPeriod !== 0n ? lockPeriod : DEFAULT_DELEGATE_LOCK_PERIOD_BLOCKS;
}

function unfreezingCount(stake: StakeState, nowMs: number): number {
  return stake.unfrozen.filter((item) => item.expireTimeMs > nowMs).length;
}

/** Unfrozen TRX whose wait is over at `nowMs` (getCanWithdrawUnfreezeAmount). */
export function withdrawableSun(stake: StakeState, nowMs: number): bigint {
  return stake.unfrozen.filter((item) => item.expireTimeMs <= nowMs).reduce((sum, item) => sum + item.amountSun, 0n);
}

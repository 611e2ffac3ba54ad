// Stake 2.0 state written in a java-tron full node's JSON (`visible: false`,
// proto3 zero fields left out): the Account fields Wallet.getAccount prints
// after bringing resource use up to the head (updateUsage; frozenV2 always
// lists BANDWIDTH, ENERGY and TRON_POWER, sortFrozenV2List; times in ms,
// genesis + slot × 3 s), AccountResourceMessage (Wallet.getAccountResource),
// DelegatedResourceList, DelegatedResourceAccountIndex and the small answers of
// getcandelegatedmaxsize, getcanwithdrawunfreezeamount and getavailableunfreezecount.
import { tronAddressToHex, type TronAddress } from '../tron/address.ts';
import type { ResourceCode } from '../tron/stake-contracts.ts';
import type { ChainParameters } from './chain-parameters.ts';
import type { ChainState, DelegationRecord, StakeState } from './chain-state.ts';
import { SUN_PER_TRX } from './resource-usage.ts';
import { bandwidthLimit, bandwidthNow, energyLimit, energyNow } from './stake-execution.ts';

/** An int64 field: a number when a double holds it exactly, else the bigint. */
function int64Json(value: bigint): number | bigint {
  const asNumber = Number(value);
  return Number.isSafeInteger(asNumber) ? asNumber : value;
}

function putNonZero(json: Record<string, unknown>, key: string, value: bigint): void {
  if (value !== 0n) json[key] = int64Json(value);
}

/** The time java-tron prints for a slot: genesis + slot × block interval, in ms. */
function slotTimeMs(parameters: ChainParameters, slot: bigint): bigint {
  return BigInt(parameters.genesisTimestampMs) + BigInt(parameters.blockIntervalMs) * slot;
}

/** The Stake 2.0 part of getaccount, in the pieces accountJson places among the other fields. */
export interface AccountStakeJson {
  /** Staked bandwidth's use (net_usage) and its last use (latest_consume_time, ms as Wallet.getAccount prints it). */
  readonly net: { readonly usage: bigint; readonly latestConsumeTimeMs: bigint };
  readonly accountResource: Record<string, unknown>;
  readonly tail: Record<string, unknown>;
}

/** The Stake 2.0 part of getaccount: `account_resource`, `frozenV2`, `unfrozenV2` and the delegated bandwidth balances. */
export function accountStakeJson(parameters: ChainParameters, stake: StakeState, nowMs: number): AccountStakeJson {
  const energy = energyNow(parameters, stake, nowMs);
  const bandwidth = bandwidthNow(parameters, stake, nowMs);
  const accountResource: Record<string, unknown> = {};
  putNonZero(accountResource, 'energy_usage', energy.usage);
  putNonZero(accountResource, 'latest_consume_time_for_energy', slotTimeMs(parameters, energy.latestSlot));
  putNonZero(accountResource, 'energy_window_size', energy.windowSize);
  putNonZero(accountResource, 'delegated_frozenV2_balance_for_energy', stake.delegatedSun.ENERGY);
  putNonZero(accountResource, 'acquired_delegated_frozenV2_balance_for_energy', stake.acquiredSun.ENERGY);
  if (energy.optimized) accountResource['energy_window_optimized'] = true;

  const frozen = (type: ResourceCode | 'TRON_POWER', amount: bigint) => {
    const entry: Record<string, unknown> = {};
    if (type !== 'BANDWIDTH') entry['type'] = type;
    putNonZero(entry, 'amount', amount);
    return entry;
  };
  const tail: Record<string, unknown> = {
    frozenV2: [
      frozen('BANDWIDTH', stake.frozenSun.BANDWIDTH),
      frozen('ENERGY', stake.frozenSun.ENERGY),
      frozen('TRON_POWER', 0n),
    ],
  };
  if (stake.unfrozen.length > 0) {
    tail['unfrozenV2'] = stake.unfrozen.map((item) => {
      const entry: Record<string, unknown> = {};
      if (item.resource !== 'BANDWIDTH') entry['type'] = item.resource;
      putNonZero(entry, 'unfreeze_amount', item.amountSun);
      entry['unfreeze_expire_time'] = item.expireTimeMs;
      return entry;
    });
  }
  putNonZero(tail, 'delegated_frozenV2_balance_for_bandwidth', stake.delegatedSun.BANDWIDTH);
  putNonZero(tail, 'acquired_delegated_frozenV2_balance_for_bandwidth', stake.acquiredSun.BANDWIDTH);
  const net = {
    usage: bandwidth.usage,
    latestConsumeTimeMs: bandwidth.latestSlot === 0n ? 0n : slotTimeMs(parameters, bandwidth.latestSlot),
  };
  return { net, accountResource, tail };
}

/**
 * getaccountresource (AccountResourceMessage, zero fields left out): NetUsed is the
 * staked bandwidth's use decayed to now, against NetLimit. tronPowerLimit is the whole stake in TRX
 * (AccountCapsule.getAllTronPower without the new resource model).
 */
export function accountResourceJson(
  parameters: ChainParameters,
  state: ChainState,
  stake: StakeState,
  freeBandwidthUsed: number,
  nowMs: number,
): Record<string, unknown> {
  const json: Record<string, unknown> = {};
  if (freeBandwidthUsed > 0) json['freeNetUsed'] = freeBandwidthUsed;
  json['freeNetLimit'] = parameters.freeBandwidthPerDay;
  putNonZero(json, 'NetUsed', bandwidthNow(parameters, stake, nowMs).usage);
  putNonZero(json, 'NetLimit', bandwidthLimit(state, parameters, stake));
  json['TotalNetLimit'] = int64Json(parameters.totalBandwidthLimit);
  json['TotalNetWeight'] = int64Json(state.totalBandwidthWeightTrx);
  const tronPower =
    (stake.frozenSun.BANDWIDTH + stake.frozenSun.ENERGY + stake.delegatedSun.BANDWIDTH + stake.delegatedSun.ENERGY) /
    SUN_PER_TRX;
  putNonZero(json, 'tronPowerLimit', tronPower);
  putNonZero(json, 'EnergyUsed', energyNow(parameters, stake, nowMs).usage);
  putNonZero(json, 'EnergyLimit', energyLimit(state, parameters, stake));
  json['TotalEnergyLimit'] = int64Json(parameters.totalEnergyLimit);
  json['TotalEnergyWeight'] = int64Json(state.totalEnergyWeightTrx);
  return json;
}

/** getaccountnet (AccountNetMessage): the free allowance, its use and the staked limit. */
export function accountNetJson(
  parameters: ChainParameters,
  state: ChainState,
  stake: StakeState,
  freeBandwidthUsed: number,
  nowMs: number,
): Record<string, unknown> {
  const json: Record<string, unknown> = {};
  if (freeBandwidthUsed > 0) json['freeNetUsed'] = freeBandwidthUsed;
  json['freeNetLimit'] = parameters.freeBandwidthPerDay;
  putNonZero(json, 'NetUsed', bandwidthNow(parameters, stake, nowMs).usage);
  putNonZero(json, 'NetLimit', bandwidthLimit(state, parameters, stake));
  json['TotalNetLimit'] = int64Json(parameters.totalBandwidthLimit);
  json['TotalNetWeight'] = int64Json(state.totalBandwidthWeightTrx);
  return json;
}

/** A DelegatedResource message. */
function delegatedResourceJson(record: DelegationRecord): Record<string, unknown> {
  const json: Record<string, unknown> = { from: tronAddressToHex(record.from), to: tronAddressToHex(record.to) };
  putNonZero(json, 'frozen_balance_for_bandwidth', record.balanceSun.BANDWIDTH);
  putNonZero(json, 'frozen_balance_for_energy', record.balanceSun.ENERGY);
  putNonZero(json, 'expire_time_for_bandwidth', BigInt(record.expireTimeMs.BANDWIDTH));
  putNonZero(json, 'expire_time_for_energy', BigInt(record.expireTimeMs.ENERGY));
  return json;
}

/** Wallet.getDelegatedResourceV2: the unlocked record, then the locked one, each only when not empty; `{}` when neither. */
export function delegatedResourceListJson(records: readonly (DelegationRecord | undefined)[]): Record<string, unknown> {
  const shown = records.filter(
    (record): record is DelegationRecord =>
      record !== undefined &&
      !(
        record.balanceSun.BANDWIDTH === 0n &&
        record.balanceSun.ENERGY === 0n &&
        record.expireTimeMs.BANDWIDTH === 0 &&
        record.expireTimeMs.ENERGY === 0
      ),
  );
  return shown.length === 0 ? {} : { delegatedResource: shown.map(delegatedResourceJson) };
}

/** DelegatedResourceAccountIndexStore.getV2Index: whom the account delegated to and who delegated to it, oldest delegation first. */
export function delegationIndexJson(state: ChainState, address: TronAddress): Record<string, unknown> {
  const entries = [...state.delegationIndex.values()].sort(
    (a, b) => a.timestampMs - b.timestampMs || tronAddressToHex(a.to).localeCompare(tronAddressToHex(b.to)),
  );
  const json: Record<string, unknown> = { account: tronAddressToHex(address) };
  const from = entries.filter((entry) => entry.to === address).map((entry) => tronAddressToHex(entry.from));
  const to = entries.filter((entry) => entry.from === address).map((entry) => tronAddressToHex(entry.to));
  if (from.length > 0) json['fromAccounts'] = from;
  if (to.length > 0) json['toAccounts'] = to;
  return json;
}

// The simulated chain written in a java-tron full node's JSON (docs/tron.md §1.8,
// `visible: false`): hex addresses (`41…`, 20-byte EVM hex in logs), hex
// topics and data, proto3 zero fields left out, block ids starting with the
// number. These are the shapes the production node client reads.
import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex, concatBytes, hexToBytes, utf8ToBytes } from '@noble/hashes/utils.js';
import { tronAddressToHex, type TronAddress } from '../tron/address.ts';
import { chainTransactionJson, isContractCall } from './chain-transaction.ts';
import type { ChainParameters } from './chain-parameters.ts';
import type { AccountStakeJson } from './stake-json.ts';
import type { AccountState } from './chain-state.ts';
import type { IncludedTransaction, SimulatedBlock } from './simulated-chain.ts';
import { usdtDeployerHex } from './usdt-contract-json.ts';
import { logAddressHex } from './usdt-execution.ts';

const BLOCK_VERSION = 34;
const EMPTY_TRIE_ROOT = '0'.repeat(64);

/** An int64 field: a number when a double holds it exactly (the plain, fast JSON.stringify), else the bigint. */
function int64Json(value: bigint): number | bigint {
  const asNumber = Number(value);
  return Number.isSafeInteger(asNumber) ? asNumber : value;
}

export function blockJson(
  block: SimulatedBlock,
  witnessHex: string,
  options: { readonly detail?: boolean } = {},
): Record<string, unknown> {
  const rawData: Record<string, unknown> = {};
  // java-tron leaves zero fields out: the genesis block has no number.
  if (block.number !== 0) rawData['number'] = block.number;
  rawData['txTrieRoot'] = block.transactions.length === 0 ? EMPTY_TRIE_ROOT : trieRoot(block.transactions);
  rawData['witness_address'] = witnessHex;
  rawData['parentHash'] = block.parentId;
  rawData['version'] = BLOCK_VERSION;
  rawData['timestamp'] = block.timestampMs;
  const json: Record<string, unknown> = {
    blockID: block.id,
    block_header: {
      raw_data: rawData,
      witness_signature: bytesToHex(sha256(utf8ToBytes(`witness signature\0${block.id}`))).repeat(2) + '00',
    },
  };
  if ((options.detail ?? true) && block.transactions.length > 0)
    json['transactions'] = block.transactions.map(blockTransactionJson);
  return json;
}

/**
 * A transaction as blocks and gettransactionbyid show it: its `ret` first, then
 * signature, txID, raw_data and raw_data_hex (java-tron Util.printBlockToJSON →
 * printTransactionToJSON, which adds raw_data_hex and txID but no `visible`:
 * only printCreateTransaction does). Deposit checks read raw_data_hex and
 * signature (tron/signed-calls.ts).
 */
export function blockTransactionJson(included: IncludedTransaction): Record<string, unknown> {
  const { visible: _visible, ...printed } = chainTransactionJson(included.transaction);
  // Transaction.Result: withdraw_expire_amount (27) follows contractRet (3).
  const withdrawn = included.receipt.withdrawExpireAmountSun ?? 0n;
  const ret = {
    contractRet: included.receipt.result,
    ...(withdrawn > 0n ? { withdraw_expire_amount: int64Json(withdrawn) } : {}),
  };
  return { ret: [ret], ...printed };
}

/** A TransactionInfo (gettransactioninfobyid, and each element of gettransactioninfobyblocknum). */
export function transactionInfoJson(
  included: IncludedTransaction,
  block: SimulatedBlock,
  options: { readonly logContract?: TronAddress } = {},
): Record<string, unknown> {
  const { receipt, transaction } = included;
  const receiptJson: Record<string, unknown> = {};
  if ((receipt.energyUsage ?? 0) > 0) receiptJson['energy_usage'] = receipt.energyUsage;
  if (receipt.energyFeeSun > 0n) receiptJson['energy_fee'] = int64Json(receipt.energyFeeSun);
  if (receipt.energyUsageTotal > 0) receiptJson['energy_usage_total'] = receipt.energyUsageTotal;
  if (receipt.netUsage > 0) receiptJson['net_usage'] = receipt.netUsage;
  if (receipt.netFeeSun > 0n) receiptJson['net_fee'] = int64Json(receipt.netFeeSun);
  // A system contract (TRX transfer, Stake 2.0) runs no code: its receipt has no result, the info no contract address.
  const call = isContractCall(transaction);
  if (call) receiptJson['result'] = receipt.result;
  // ResourceReceipt field 8, after result (protobuf field order).
  if ((receipt.energyPenaltyTotal ?? 0) > 0) receiptJson['energy_penalty_total'] = receipt.energyPenaltyTotal;
  const info: Record<string, unknown> = { id: transaction.txId };
  if (receipt.feeSun > 0n) info['fee'] = int64Json(receipt.feeSun);
  info['blockNumber'] = block.number;
  info['blockTimeStamp'] = block.timestampMs;
  info['contractResult'] = [receipt.contractResult];
  if (call) info['contract_address'] = tronAddressToHex(transaction.raw.contractAddress);
  info['receipt'] = receiptJson;
  if (receipt.logs.length > 0) {
    info['log'] = receipt.logs.map((log) => ({
      address: logAddressHex(options.logContract ?? log.contract),
      topics: log.topics,
      data: log.data,
    }));
  }
  if (receipt.result !== 'SUCCESS') {
    info['result'] = 'FAILED';
    if (receipt.resMessage) info['resMessage'] = bytesToHex(utf8ToBytes(receipt.resMessage));
  }
  // TransactionInfo field 28, after every field printed above.
  if ((receipt.withdrawExpireAmountSun ?? 0n) > 0n)
    info['withdraw_expire_amount'] = int64Json(receipt.withdrawExpireAmountSun!);
  return info;
}

export function accountJson(
  address: TronAddress,
  account: AccountState,
  freeBandwidthUsed: number,
  stake: AccountStakeJson,
): Record<string, unknown> {
  // In the Account message's field order: net_usage (8), create_time (9), free_net_usage (19), latest_consume_time (21), latest_consume_free_time (22).
  const json: Record<string, unknown> = { address: tronAddressToHex(address) };
  if (account.balanceSun > 0n) json['balance'] = int64Json(account.balanceSun);
  if (stake.net.usage > 0n) json['net_usage'] = int64Json(stake.net.usage);
  json['create_time'] = account.createTimeMs;
  if (freeBandwidthUsed > 0) json['free_net_usage'] = freeBandwidthUsed;
  if (stake.net.latestConsumeTimeMs > 0n) json['latest_consume_time'] = int64Json(stake.net.latestConsumeTimeMs);
  if (freeBandwidthUsed > 0) json['latest_consume_free_time'] = account.freeBandwidthTimeMs;
  // BandwidthProcessor.updateUsage leaves the optimized window (×1,000) on every account it reads.
  json['net_window_size'] = 28_800_000;
  json['net_window_optimized'] = true;
  json['account_resource'] = stake.accountResource;
  json['owner_permission'] = {
    permission_name: 'owner',
    threshold: 1,
    keys: [{ address: tronAddressToHex(address), weight: 1 }],
  };
  json['active_permission'] = [
    {
      type: 'Active',
      id: 2,
      permission_name: 'active',
      threshold: 1,
      operations: '7fff1fc0033ec30f000000000000000000000000000000000000000000000000',
      keys: [{ address: tronAddressToHex(address), weight: 1 }],
    },
  ];
  return { ...json, ...stake.tail };
}

/** The java-tron release whose answers the simulator copies (tronweb reads configNodeInfo.codeVersion). */
const SIMULATED_CODE_VERSION = '4.8.0';

/**
 * getnodeinfo: java-tron's NodeInfo bean as fastjson prints it. `block` and
 * `solidityBlock` are BlockId.getString ("Num:<n>,ID:<id>"); a simulator has no
 * peers, so the connection counts are 0 and the lists empty.
 */
export function nodeInfoJson(head: SimulatedBlock, solid: SimulatedBlock): Record<string, unknown> {
  return {
    activeConnectCount: 0,
    beginSyncNum: head.number,
    block: `Num:${head.number},ID:${head.id}`,
    cheatWitnessInfoMap: {},
    configNodeInfo: {
      activeNodeSize: 0,
      allowAdaptiveEnergy: 0,
      allowCreationOfContracts: 1,
      backupListenPort: 0,
      backupMemberSize: 0,
      backupPriority: 0,
      codeVersion: SIMULATED_CODE_VERSION,
      dbVersion: 2,
      discoverEnable: false,
      listenPort: 18_888,
      maxConnectCount: 30,
      maxTimeRatio: 5.0,
      minParticipationRate: 15,
      minTimeRatio: 0.0,
      p2pVersion: '11111',
      passiveNodeSize: 0,
      sameIpMaxConnectCount: 2,
      sendNodeSize: 0,
      supportConstant: true,
      versionNum: '18631',
    },
    currentConnectCount: 0,
    machineInfo: { cpuCount: 1, deadLockThreadCount: 0, deadLockThreadInfoList: [], memoryDescInfoList: [] },
    passiveConnectCount: 0,
    peerList: [],
    solidityBlock: `Num:${solid.number},ID:${solid.id}`,
    totalFlow: 0,
  };
}

export function chainParametersJson(parameters: ChainParameters): Record<string, unknown> {
  const chainParameter: { key: string; value?: number | bigint }[] = [
    { key: 'getMaintenanceTimeInterval', value: 21_600_000 },
    { key: 'getAccountUpgradeCost', value: 9_999_000_000 },
    { key: 'getCreateAccountFee', value: parameters.createAccountFeeSun },
    { key: 'getTransactionFee', value: parameters.bandwidthPriceSun },
    { key: 'getAssetIssueFee', value: 1_024_000_000 },
    { key: 'getWitnessPayPerBlock', value: 8_000_000 },
    { key: 'getWitnessStandbyAllowance', value: 115_200_000_000 },
    { key: 'getCreateNewAccountFeeInSystemContract', value: parameters.createNewAccountFeeSun },
    { key: 'getCreateNewAccountBandwidthRate', value: 1 },
    { key: 'getAllowCreationOfContracts', value: 1 },
    { key: 'getEnergyFee', value: parameters.energyPriceSun },
    { key: 'getFreeNetLimit', value: parameters.freeBandwidthPerDay },
    { key: 'getTotalEnergyLimit', value: parameters.totalEnergyLimit },
    { key: 'getMaxFeeLimit', value: parameters.maxFeeLimitSun },
    { key: 'getAllowTvmConstantinople', value: 1 },
    { key: 'getAllowDelegateResource', value: 1 },
    { key: 'getUnfreezeDelayDays', value: parameters.unfreezeDelayDays },
    { key: 'getMaxDelegateLockPeriod', value: parameters.maxDelegateLockPeriodBlocks },
  ];
  return { chainParameter };
}

/**
 * getcontractinfo of the USDT contract: SmartContractDataWrapper as java-tron's
 * GetContractInfoServlet prints it (Wallet.getContractInfo): the contract and
 * contract_state {energy_usage, energy_factor, update_cycle}, proto3's zero
 * fields left out (a factor of 0 has no energy_factor). The simulator has no
 * bytecode, so `bytecode` and `runtimecode` are absent, as empty bytes are.
 */
export function contractInfoJson(contract: TronAddress, energyFactor: number): Record<string, unknown> {
  const contractState: Record<string, unknown> = {};
  if (energyFactor > 0) contractState['energy_factor'] = energyFactor;
  return {
    smart_contract: {
      origin_address: usdtDeployerHex(contract),
      contract_address: tronAddressToHex(contract),
      consume_user_resource_percent: 100,
      name: 'TetherToken',
      origin_energy_limit: 10_000_000,
    },
    contract_state: contractState,
  };
}

/** The transaction part of a triggerconstantcontract answer (never to be signed: no fee_limit). */
export function constantCallTransactionJson(txIdSeed: string, ret: 'ok' | 'FAILED'): Record<string, unknown> {
  return {
    ret: [ret === 'ok' ? {} : { ret: 'FAILED' }],
    visible: false,
    txID: bytesToHex(sha256(utf8ToBytes(`constant call\0${txIdSeed}`))),
  };
}

export function hexText(text: string): string {
  return bytesToHex(utf8ToBytes(text));
}

function trieRoot(transactions: readonly IncludedTransaction[]): string {
  return bytesToHex(sha256(concatBytes(...transactions.map((included) => hexToBytes(included.transaction.txId)))));
}

export function witnessHex(seed: string): string {
  return `41${bytesToHex(sha256(utf8ToBytes(`witness\0${seed}`))).slice(0, 40)}`;
}

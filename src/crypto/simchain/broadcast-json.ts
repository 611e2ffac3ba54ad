// The JSON of the two broadcast paths. `/wallet/broadcasttransaction`: the node
// re-serializes the JSON `raw_data` (a TriggerSmartContract or a TransferContract)
// and ignores `raw_data_hex` (docs/tron.md §1.3), so a client whose JSON does not
// encode to the bytes it signed gets SIGERROR, exactly as on a real node.
// `/wallet/broadcasthex` answers with the decoded transaction as a JSON string
// (BroadcastHexServlet: JsonFormat.printToString(transaction, true)).
import { bytesToHex, hexToBytes } from '@noble/hashes/utils.js';
import { parseTronAddress, parseTronHexAddress, type TronAddress } from '../tron/address.ts';
import {
  encodeSignedTransaction,
  encodeTransferContractRaw,
  encodeTriggerSmartContractRaw,
  SIGNATURES_MAX,
  TRANSFER_CONTRACT_TYPE_URL,
  TRIGGER_SMART_CONTRACT_TYPE_URL,
} from '../tron/transaction.ts';
import { readFields } from '../tron/transaction-fields.ts';
import {
  encodeStakeTransactionRaw,
  STAKE_CONTRACT_TYPES,
  stakeContractTypeUrl,
  type ResourceCode,
  type StakeContractType,
} from '../tron/stake-contracts.ts';
import { isStakeTransaction, isTrxTransfer, type ChainTransaction } from './chain-transaction.ts';

export type BuiltTransaction =
  { readonly ok: true; readonly bytes: Uint8Array } | { readonly ok: false; readonly problem: string };

export function broadcastTransactionJson(body: Record<string, unknown>): BuiltTransaction {
  try {
    const visible = body['visible'] === true;
    const rawData = object(body['raw_data'], 'raw_data');
    const contracts = rawData['contract'];
    if (!Array.isArray(contracts) || contracts.length !== 1)
      return { ok: false, problem: 'raw_data.contract must hold one contract' };
    const contract = object(contracts[0], 'contract');
    const type = String(contract['type']);
    const encode = Object.hasOwn(RAW_ENCODERS, type) ? RAW_ENCODERS[type] : undefined;
    if (!encode)
      return {
        ok: false,
        problem: 'only TriggerSmartContract, TransferContract and Stake 2.0 contracts are supported',
      };
    const parameter = object(contract['parameter'], 'parameter');
    if (parameter['type_url'] !== undefined && parameter['type_url'] !== encode.typeUrl)
      return { ok: false, problem: 'type_url' };
    const value = object(parameter['value'], 'parameter.value');
    const signatures = body['signature'];
    if (!Array.isArray(signatures) || signatures.length === 0 || signatures.length > SIGNATURES_MAX)
      return { ok: false, problem: 'signature must be a list of 1..5' };
    const header = {
      refBlockBytes: hex(rawData['ref_block_bytes'], 'ref_block_bytes'),
      refBlockHash: hex(rawData['ref_block_hash'], 'ref_block_hash'),
      expirationMs: integer(rawData['expiration'], 'expiration'),
      timestampMs: optionalInteger(rawData['timestamp'], 'timestamp'),
    };
    const rawBytes = encode.raw(header, rawData, value, visible);
    return {
      ok: true,
      bytes: encodeSignedTransaction(
        rawBytes,
        signatures.map((signature) => hex(signature, 'signature')),
      ),
    };
  } catch (error) {
    return { ok: false, problem: (error as Error).message };
  }
}

/**
 * The `transaction` text of a broadcasthex answer: the protobuf printed field by
 * field in field-number order, zero fields left out, the contract's parameter as
 * its `Any` (type_url and the value bytes in hex), signatures in hex. Its
 * `visible` form writes addresses in Base58, but a Transaction's only addresses
 * sit inside the Any's bytes, so nothing here is Base58.
 */
export function broadcastHexTransactionText(transaction: ChainTransaction): string {
  const raw = readFields(transaction.rawBytes, 'raw', {
    1: 'bytes',
    4: 'bytes',
    8: 'varint',
    11: 'bytes',
    14: 'varint',
    18: 'varint',
  });
  const contract = readFields(raw.bytes(11) ?? new Uint8Array(), 'contract', { 1: 'varint', 2: 'bytes' });
  const any = readFields(contract.bytes(2) ?? new Uint8Array(), 'parameter', { 1: 'bytes', 2: 'bytes' });
  const rawData: Record<string, unknown> = {
    ref_block_bytes: bytesToHex(raw.bytes(1) ?? new Uint8Array()),
    ref_block_hash: bytesToHex(raw.bytes(4) ?? new Uint8Array()),
    expiration: Number(raw.varint(8) ?? 0n),
    contract: [
      {
        type: isStakeTransaction(transaction)
          ? transaction.raw.contract.type
          : isTrxTransfer(transaction)
            ? 'TransferContract'
            : 'TriggerSmartContract',
        parameter: {
          type_url: new TextDecoder().decode(any.bytes(1) ?? new Uint8Array()),
          value: bytesToHex(any.bytes(2) ?? new Uint8Array()),
        },
      },
    ],
  };
  const timestamp = raw.varint(14) ?? 0n;
  const feeLimit = raw.varint(18) ?? 0n;
  if (timestamp !== 0n) rawData['timestamp'] = Number(timestamp);
  if (feeLimit !== 0n) rawData['fee_limit'] = Number(feeLimit);
  return JSON.stringify({
    raw_data: rawData,
    signature: transaction.signatures.map((signature) => bytesToHex(signature)),
  });
}

interface RawHeaderFields {
  readonly refBlockBytes: Uint8Array;
  readonly refBlockHash: Uint8Array;
  readonly expirationMs: number;
  readonly timestampMs: number;
}

type Fields = Record<string, unknown>;

/** Each contract type the chain runs, re-encoded from its JSON `value` as the node's JsonFormat.merge reads it. */
interface RawEncoder {
  readonly typeUrl: string;
  raw(header: RawHeaderFields, rawData: Fields, value: Fields, visible: boolean): Uint8Array;
}

const RAW_ENCODERS: Record<string, RawEncoder> = {
  TriggerSmartContract: {
    typeUrl: TRIGGER_SMART_CONTRACT_TYPE_URL,
    raw: (header, rawData, value, visible) =>
      encodeTriggerSmartContractRaw({
        ...header,
        feeLimitSun: BigInt(optionalInteger(rawData['fee_limit'], 'fee_limit')),
        ownerAddress: address(value['owner_address'], visible),
        contractAddress: address(value['contract_address'], visible),
        callValueSun: BigInt(optionalInteger(value['call_value'], 'call_value')),
        data: value['data'] === undefined ? new Uint8Array() : hex(value['data'], 'data'),
      }),
  },
  TransferContract: {
    typeUrl: TRANSFER_CONTRACT_TYPE_URL,
    raw: (header, _rawData, value, visible) =>
      encodeTransferContractRaw({
        ...header,
        ownerAddress: address(value['owner_address'], visible),
        toAddress: address(value['to_address'], visible),
        amountSun: BigInt(integer(value['amount'], 'amount')),
      }),
  },
  ...Object.fromEntries(
    (Object.keys(STAKE_CONTRACT_TYPES) as StakeContractType[]).map((type) => [type, stakeEncoder(type)]),
  ),
};

/** A Stake 2.0 contract's JSON value, read as JsonFormat.merge reads it (the zero resource BANDWIDTH may be left out). */
function stakeEncoder(type: StakeContractType): RawEncoder {
  return {
    typeUrl: stakeContractTypeUrl(type),
    raw: (header, _rawData, value, visible) => {
      const owner = address(value['owner_address'], visible);
      const amount = (name: string) => BigInt(optionalInteger(value[name], name));
      const resource = resourceOf(value['resource']);
      switch (type) {
        case 'FreezeBalanceV2Contract':
          return encodeStakeTransactionRaw({
            ...header,
            contract: { type, ownerAddress: owner, frozenBalanceSun: amount('frozen_balance'), resource },
          });
        case 'UnfreezeBalanceV2Contract':
          return encodeStakeTransactionRaw({
            ...header,
            contract: { type, ownerAddress: owner, unfreezeBalanceSun: amount('unfreeze_balance'), resource },
          });
        case 'WithdrawExpireUnfreezeContract':
          return encodeStakeTransactionRaw({ ...header, contract: { type, ownerAddress: owner } });
        case 'DelegateResourceContract':
          return encodeStakeTransactionRaw({
            ...header,
            contract: {
              type,
              ownerAddress: owner,
              resource,
              balanceSun: amount('balance'),
              receiverAddress: address(value['receiver_address'], visible),
              lock: value['lock'] === true,
              lockPeriodBlocks: amount('lock_period'),
            },
          });
        case 'UnDelegateResourceContract':
          return encodeStakeTransactionRaw({
            ...header,
            contract: {
              type,
              ownerAddress: owner,
              resource,
              balanceSun: amount('balance'),
              receiverAddress: address(value['receiver_address'], visible),
            },
          });
      }
    },
  };
}

function resourceOf(value: unknown): ResourceCode {
  if (value === undefined || value === 'BANDWIDTH' || value === 0) return 'BANDWIDTH';
  if (value === 'ENERGY' || value === 1) return 'ENERGY';
  throw new Error('resource must be BANDWIDTH or ENERGY');
}

function optionalInteger(value: unknown, name: string): number {
  return value === undefined ? 0 : integer(value, name);
}

function object(value: unknown, name: string): Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new Error(`${name} must be an object`);
  return value as Record<string, unknown>;
}

function hex(value: unknown, name: string): Uint8Array {
  if (typeof value !== 'string' || !/^(?:[0-9a-fA-F]{2})*$/.test(value)) throw new Error(`${name} must be hex`);
  return hexToBytes(value);
}

function integer(value: unknown, name: string): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0)
    throw new Error(`${name} must be a whole number`);
  return value;
}

function address(value: unknown, visible: boolean): TronAddress {
  if (typeof value !== 'string') throw new Error('an address is missing');
  const parsed = visible ? parseTronAddress(value) : parseTronHexAddress(value);
  if (!parsed.ok) throw new Error(`address ${parsed.problem}`);
  return parsed.address;
}

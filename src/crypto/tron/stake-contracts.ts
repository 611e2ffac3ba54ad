// The Stake 2.0 system contracts (docs/tron.md §1.5 "Staking"): freeze TRX for
// energy or bandwidth, unfreeze it (a 14-day wait), withdraw what the wait
// released, delegate the staked resource to another account and take it back.
// Encoded and read offline like the USDT transfer (transaction.ts): java-tron's
// protobuf layout from core/contract/balance_contract.proto and core/Tron.proto
// (ContractType 54–58), proto3 zero fields left out, so the bytes equal what
// java-tron and tronweb write and the txID is theirs.
import { BinaryWriter, WireType } from '@bufbuild/protobuf/wire';
import { tronAddressFromBytes, tronAddressToBytes, tronAddressToHex, type TronAddress } from './address.ts';
import {
  encodeRaw,
  encodeSignedTransaction,
  INT64_MAX,
  readSignedEnvelope,
  transactionId,
  TRANSACTION_MAX_BYTES,
  type RawHeader,
} from './transaction.ts';
import { problemOf, readContractParameter, readFields, readRefBlock } from './transaction-fields.ts';
import { printTransactionJson } from './transaction-json.ts';
import { tronAddressFromPrivateKey } from './address.ts';
import { signTransactionId } from './signing.ts';

/** common.proto ResourceCode; TRON_POWER is refused by mainnet (no new resource model), so not written here. */
export type ResourceCode = 'BANDWIDTH' | 'ENERGY';
const RESOURCE_NUMBERS: Readonly<Record<ResourceCode, bigint>> = { BANDWIDTH: 0n, ENERGY: 1n };

export type StakeContract =
  | {
      readonly type: 'FreezeBalanceV2Contract';
      readonly ownerAddress: TronAddress;
      readonly frozenBalanceSun: bigint;
      readonly resource: ResourceCode;
    }
  | {
      readonly type: 'UnfreezeBalanceV2Contract';
      readonly ownerAddress: TronAddress;
      readonly unfreezeBalanceSun: bigint;
      readonly resource: ResourceCode;
    }
  | { readonly type: 'WithdrawExpireUnfreezeContract'; readonly ownerAddress: TronAddress }
  | {
      readonly type: 'DelegateResourceContract';
      readonly ownerAddress: TronAddress;
      readonly resource: ResourceCode;
      readonly balanceSun: bigint;
      readonly receiverAddress: TronAddress;
      readonly lock: boolean;
      /** Blocks (3 s each); 0 with `lock` means java-tron's default of 3 days. */
      readonly lockPeriodBlocks: bigint;
    }
  | {
      readonly type: 'UnDelegateResourceContract';
      readonly ownerAddress: TronAddress;
      readonly resource: ResourceCode;
      readonly balanceSun: bigint;
      readonly receiverAddress: TronAddress;
    };

export type StakeContractType = StakeContract['type'];

/** Transaction.Contract.ContractType numbers (core/Tron.proto). */
export const STAKE_CONTRACT_TYPES: Readonly<Record<StakeContractType, number>> = {
  FreezeBalanceV2Contract: 54,
  UnfreezeBalanceV2Contract: 55,
  WithdrawExpireUnfreezeContract: 56,
  DelegateResourceContract: 57,
  UnDelegateResourceContract: 58,
};

export function stakeContractTypeUrl(type: StakeContractType): string {
  return `type.googleapis.com/protocol.${type}`;
}

export interface StakeTransactionRaw extends RawHeader {
  readonly contract: StakeContract;
}

export interface SignedStakeTransaction {
  readonly kind: 'stake';
  readonly rawBytes: Uint8Array;
  readonly raw: StakeTransactionRaw;
  readonly txId: string;
  readonly signatures: readonly Uint8Array[];
}

/** The contract's own message (the bytes inside the Any), fields in number order, zeros left out. */
function encodeStakeContract(contract: StakeContract): Uint8Array {
  const writer = new BinaryWriter();
  writer.tag(1, WireType.LengthDelimited).bytes(tronAddressToBytes(contract.ownerAddress));
  const varint = (fieldNo: number, value: bigint) => {
    if (value < 0n || value > INT64_MAX) throw new RangeError(`field ${fieldNo}: ${value} is not a non-negative int64`);
    if (value !== 0n) writer.tag(fieldNo, WireType.Varint).int64(value);
  };
  switch (contract.type) {
    case 'FreezeBalanceV2Contract':
      varint(2, contract.frozenBalanceSun);
      varint(3, RESOURCE_NUMBERS[contract.resource]);
      break;
    case 'UnfreezeBalanceV2Contract':
      varint(2, contract.unfreezeBalanceSun);
      varint(3, RESOURCE_NUMBERS[contract.resource]);
      break;
    case 'WithdrawExpireUnfreezeContract':
      break;
    case 'DelegateResourceContract':
      varint(2, RESOURCE_NUMBERS[contract.resource]);
      varint(3, contract.balanceSun);
      writer.tag(4, WireType.LengthDelimited).bytes(tronAddressToBytes(contract.receiverAddress));
      if (contract.lock) writer.tag(5, WireType.Varint).bool(true);
      varint(6, contract.lockPeriodBlocks);
      break;
    case 'UnDelegateResourceContract':
      varint(2, RESOURCE_NUMBERS[contract.resource]);
      varint(3, contract.balanceSun);
      writer.tag(4, WireType.LengthDelimited).bytes(tronAddressToBytes(contract.receiverAddress));
      break;
  }
  return writer.finish();
}

/** The protobuf bytes of `Transaction.raw` holding one Stake 2.0 contract (no fee_limit: no contract code runs). */
export function encodeStakeTransactionRaw(raw: StakeTransactionRaw): Uint8Array {
  const { contract } = raw;
  return encodeRaw(
    raw,
    {
      type: STAKE_CONTRACT_TYPES[contract.type],
      typeUrl: stakeContractTypeUrl(contract.type),
      parameter: encodeStakeContract(contract),
    },
    0n,
  );
}

/** Encodes, identifies and signs one Stake 2.0 transaction, refusing a key that is not the owner's. */
export function signStakeTransaction(
  raw: StakeTransactionRaw,
  privateKey: Uint8Array,
): SignedStakeTransaction & { readonly bytes: Uint8Array } {
  const signer = tronAddressFromPrivateKey(privateKey);
  if (signer !== raw.contract.ownerAddress)
    throw new Error(`the key signs for ${signer}, not for the owner ${raw.contract.ownerAddress}`);
  const rawBytes = encodeStakeTransactionRaw(raw);
  const txId = transactionId(rawBytes);
  const signatures = [signTransactionId(txId, privateKey)];
  return { kind: 'stake', rawBytes, raw, txId, signatures, bytes: encodeSignedTransaction(rawBytes, signatures) };
}

export type DecodedStakeRaw =
  { readonly ok: true; readonly raw: StakeTransactionRaw } | { readonly ok: false; readonly problem: string };

/**
 * Reads `Transaction.raw` bytes that must hold exactly one Stake 2.0 contract
 * (the ContractType says which) and nothing we do not model. Untrusted input:
 * every malformation is a `problem`, never an exception.
 */
export function decodeStakeTransactionRaw(bytes: Uint8Array): DecodedStakeRaw {
  if (bytes.length > TRANSACTION_MAX_BYTES)
    return { ok: false, problem: `raw data is ${bytes.length} bytes, over ${TRANSACTION_MAX_BYTES}` };
  try {
    const fields = readFields(bytes, 'raw', { 1: 'bytes', 4: 'bytes', 8: 'varint', 11: 'bytes', 14: 'varint' });
    const contractFields = readFields(fields.bytes(11) ?? new Uint8Array(), 'contract', { 1: 'varint', 2: 'bytes' });
    const typeNumber = Number(contractFields.varint(1) ?? 0n);
    const type = (Object.keys(STAKE_CONTRACT_TYPES) as StakeContractType[]).find(
      (name) => STAKE_CONTRACT_TYPES[name] === typeNumber,
    );
    if (type === undefined) return { ok: false, problem: `contract type ${typeNumber} is not a Stake 2.0 contract` };
    const value = readContractParameter(contractFields, stakeContractTypeUrl(type), type, CONTRACT_FIELDS[type]);
    const contract = stakeContractOf(type, value);
    if (typeof contract === 'string') return { ok: false, problem: contract };
    const { refBlockBytes, refBlockHash } = readRefBlock(fields);
    const expiration = fields.varint(8) ?? 0n;
    const timestamp = fields.varint(14) ?? 0n;
    if (expiration <= 0n || expiration > BigInt(Number.MAX_SAFE_INTEGER))
      return { ok: false, problem: 'expiration is missing or out of range' };
    if (timestamp < 0n || timestamp > BigInt(Number.MAX_SAFE_INTEGER))
      return { ok: false, problem: 'timestamp is out of range' };
    return {
      ok: true,
      raw: { refBlockBytes, refBlockHash, expirationMs: Number(expiration), timestampMs: Number(timestamp), contract },
    };
  } catch (error) {
    return { ok: false, problem: problemOf(error) };
  }
}

const CONTRACT_FIELDS: Readonly<Record<StakeContractType, Readonly<Record<number, 'bytes' | 'varint'>>>> = {
  FreezeBalanceV2Contract: { 1: 'bytes', 2: 'varint', 3: 'varint' },
  UnfreezeBalanceV2Contract: { 1: 'bytes', 2: 'varint', 3: 'varint' },
  WithdrawExpireUnfreezeContract: { 1: 'bytes' },
  DelegateResourceContract: { 1: 'bytes', 2: 'varint', 3: 'varint', 4: 'bytes', 5: 'varint', 6: 'varint' },
  UnDelegateResourceContract: { 1: 'bytes', 2: 'varint', 3: 'varint', 4: 'bytes' },
};

/** The contract from its fields, or the problem. A resource other than BANDWIDTH/ENERGY is read as given and refused by the chain's checks. */
function stakeContractOf(
  type: StakeContractType,
  value: { bytes(fieldNo: number): Uint8Array | undefined; varint(fieldNo: number): bigint | undefined },
): StakeContract | string {
  const ownerAddress = addressOf(value.bytes(1));
  if (ownerAddress === undefined) return 'owner_address is not 21 bytes starting with 0x41';
  const amount = (fieldNo: number) => value.varint(fieldNo) ?? 0n;
  const resource = (fieldNo: number): ResourceCode | string => {
    const number = amount(fieldNo);
    if (number === 0n) return 'BANDWIDTH';
    if (number === 1n) return 'ENERGY';
    return `resource ${number} is not BANDWIDTH or ENERGY`;
  };
  switch (type) {
    case 'FreezeBalanceV2Contract':
    case 'UnfreezeBalanceV2Contract': {
      const code = resource(3);
      if (code !== 'BANDWIDTH' && code !== 'ENERGY') return code;
      if (amount(2) < 0n) return 'the balance must not be negative';
      return type === 'FreezeBalanceV2Contract'
        ? { type, ownerAddress, frozenBalanceSun: amount(2), resource: code }
        : { type, ownerAddress, unfreezeBalanceSun: amount(2), resource: code };
    }
    case 'WithdrawExpireUnfreezeContract':
      return { type, ownerAddress };
    case 'DelegateResourceContract':
    case 'UnDelegateResourceContract': {
      const code = resource(2);
      if (code !== 'BANDWIDTH' && code !== 'ENERGY') return code;
      const receiverAddress = addressOf(value.bytes(4));
      if (receiverAddress === undefined) return 'receiver_address is not 21 bytes starting with 0x41';
      if (amount(3) < 0n) return 'balance must not be negative';
      if (type === 'UnDelegateResourceContract')
        return { type, ownerAddress, resource: code, balanceSun: amount(3), receiverAddress };
      const lock = amount(5);
      if (lock > 1n) return 'lock is not a bool';
      if (amount(6) < 0n) return 'lock_period must not be negative';
      return {
        type,
        ownerAddress,
        resource: code,
        balanceSun: amount(3),
        receiverAddress,
        lock: lock === 1n,
        lockPeriodBlocks: amount(6),
      };
    }
  }
}

/**
 * The contract's `parameter.value` as java-tron prints it (hex addresses,
 * `visible: false`; the zero resource BANDWIDTH and other zeros left out, as
 * JsonFormat prints proto3).
 */
function stakeContractJson(contract: StakeContract): Record<string, unknown> {
  const json: Record<string, unknown> = {};
  const put = (key: string, value: bigint) => {
    if (value !== 0n) json[key] = Number(value);
  };
  switch (contract.type) {
    case 'FreezeBalanceV2Contract':
      put('frozen_balance', contract.frozenBalanceSun);
      json['owner_address'] = tronAddressToHex(contract.ownerAddress);
      if (contract.resource !== 'BANDWIDTH') json['resource'] = contract.resource;
      break;
    case 'UnfreezeBalanceV2Contract':
      json['owner_address'] = tronAddressToHex(contract.ownerAddress);
      if (contract.resource !== 'BANDWIDTH') json['resource'] = contract.resource;
      put('unfreeze_balance', contract.unfreezeBalanceSun);
      break;
    case 'WithdrawExpireUnfreezeContract':
      json['owner_address'] = tronAddressToHex(contract.ownerAddress);
      break;
    case 'DelegateResourceContract':
    case 'UnDelegateResourceContract':
      put('balance', contract.balanceSun);
      if (contract.type === 'DelegateResourceContract') {
        if (contract.lock) json['lock'] = true;
        put('lock_period', contract.lockPeriodBlocks);
      }
      json['owner_address'] = tronAddressToHex(contract.ownerAddress);
      json['receiver_address'] = tronAddressToHex(contract.receiverAddress);
      if (contract.resource !== 'BANDWIDTH') json['resource'] = contract.resource;
      break;
  }
  return json;
}

/** The node's JSON of a Stake 2.0 transaction (`visible: false`), signed or not. */
export function stakeTransactionJson(
  transaction: Pick<SignedStakeTransaction, 'rawBytes' | 'raw' | 'txId' | 'signatures'>,
): Record<string, unknown> {
  const { contract } = transaction.raw;
  return printTransactionJson({
    ...transaction,
    contract: { type: contract.type, typeUrl: stakeContractTypeUrl(contract.type), value: stakeContractJson(contract) },
  });
}

/** Reads the signed envelope (raw + 1..5 signatures; `ret` skipped) around a Stake 2.0 raw. */
export function decodeSignedStakeTransaction(
  bytes: Uint8Array,
):
  | { readonly ok: true; readonly transaction: SignedStakeTransaction }
  | { readonly ok: false; readonly problem: string } {
  const envelope = readSignedEnvelope(bytes);
  if (!envelope.ok) return envelope;
  const { rawBytes, signatures } = envelope;
  const decoded = decodeStakeTransactionRaw(rawBytes);
  if (!decoded.ok) return decoded;
  return {
    ok: true,
    transaction: { kind: 'stake', rawBytes, raw: decoded.raw, txId: transactionId(rawBytes), signatures },
  };
}

function addressOf(bytes: Uint8Array | undefined): TronAddress | undefined {
  return bytes && bytes.length === 21 && bytes[0] === 0x41 ? tronAddressFromBytes(bytes) : undefined;
}

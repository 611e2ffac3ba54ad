// A TRON transaction that calls a smart contract (a TRC20 transfer), encoded
// and read offline. docs/tron.md §1.2/§2: the id is sha256 of the protobuf bytes of
// `Transaction.raw`, so our bytes must be exactly what java-tron's protobuf
// writes: fields in number order, proto3 defaults omitted. @bufbuild/protobuf's
// wire writer and reader do the varints and length prefixes; the field layout
// is written here, from core/Tron.proto and core/contract/smart_contract.proto.
import { BinaryReader, BinaryWriter, WireType } from '@bufbuild/protobuf/wire';
import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex, hexToBytes } from '@noble/hashes/utils.js';
import { tronAddressFromBytes, tronAddressToBytes, tronAddressToHex, type TronAddress } from './address.ts';
import {
  problemOf,
  readContractParameter,
  readFields,
  readRefBlock,
  REF_BLOCK_BYTES_LENGTH,
  REF_BLOCK_HASH_LENGTH,
} from './transaction-fields.ts';
import { printTransactionJson, safeJsonNumber } from './transaction-json.ts';

/** `Transaction.Contract.ContractType.TriggerSmartContract`. */
const TRIGGER_SMART_CONTRACT_TYPE = 31;
export const TRIGGER_SMART_CONTRACT_TYPE_URL = 'type.googleapis.com/protocol.TriggerSmartContract';
/** java-tron refuses a transaction larger than this (Constant.TRANSACTION_MAX_BYTE_SIZE). */
export const TRANSACTION_MAX_BYTES = 500 * 1024;
/** TRON permissions hold at most 5 keys, so more signatures are never needed. */
export const SIGNATURES_MAX = 5;

export const INT64_MAX = (1n << 63n) - 1n;

/** The fields of a `Transaction.raw` holding one TriggerSmartContract call. */
export type TriggerSmartContractRaw = {
  /** The last 2 bytes of the reference block's number (TaPoS). */
  readonly refBlockBytes: Uint8Array;
  /** Bytes 8..16 of the reference block's id (TaPoS). */
  readonly refBlockHash: Uint8Array;
  /** Milliseconds since the epoch after which no node accepts the transaction. */
  readonly expirationMs: number;
  /** Milliseconds since the epoch when it was built. */
  readonly timestampMs: number;
  /** The most TRX (in sun) the caller lets the call burn for energy. */
  readonly feeLimitSun: bigint;
  readonly ownerAddress: TronAddress;
  readonly contractAddress: TronAddress;
  /** TRX (in sun) sent along with the call; 0 for a TRC20 transfer. */
  readonly callValueSun?: bigint;
  /** The ABI calldata (selector ‖ words). */
  readonly data: Uint8Array;
};

export type DecodedRaw =
  | { readonly ok: true; readonly raw: Required<TriggerSmartContractRaw> }
  | { readonly ok: false; readonly problem: string };

export type SignedTransaction = {
  /** The exact `Transaction.raw` bytes that were signed; the id is their sha256. */
  readonly rawBytes: Uint8Array;
  readonly raw: Required<TriggerSmartContractRaw>;
  /** Hex, lower case, as nodes print it. */
  readonly txId: string;
  /** 65 bytes each: r ‖ s ‖ v. */
  readonly signatures: readonly Uint8Array[];
};

export type DecodedSignedTransaction =
  { readonly ok: true; readonly transaction: SignedTransaction } | { readonly ok: false; readonly problem: string };

/** The protobuf bytes of `Transaction.raw`, as java-tron and tronweb serialize it. */
export function encodeTriggerSmartContractRaw(raw: TriggerSmartContractRaw): Uint8Array {
  assertRaw(raw);
  const call = new BinaryWriter();
  call.tag(1, WireType.LengthDelimited).bytes(tronAddressToBytes(raw.ownerAddress));
  call.tag(2, WireType.LengthDelimited).bytes(tronAddressToBytes(raw.contractAddress));
  const callValueSun = raw.callValueSun ?? 0n;
  if (callValueSun !== 0n) call.tag(3, WireType.Varint).int64(callValueSun);
  if (raw.data.length > 0) call.tag(4, WireType.LengthDelimited).bytes(raw.data);

  const contract = {
    type: TRIGGER_SMART_CONTRACT_TYPE,
    typeUrl: TRIGGER_SMART_CONTRACT_TYPE_URL,
    parameter: call.finish(),
  };
  return encodeRaw(raw, contract, raw.feeLimitSun);
}

/** `Transaction.Contract.ContractType.TransferContract`: a plain TRX transfer (gas top-ups). */
export const TRANSFER_CONTRACT_TYPE = 1;
export const TRANSFER_CONTRACT_TYPE_URL = 'type.googleapis.com/protocol.TransferContract';

/** The fields of a `Transaction.raw` holding one TransferContract (TRX from owner to `toAddress`). */
export type TransferContractRaw = {
  readonly refBlockBytes: Uint8Array;
  readonly refBlockHash: Uint8Array;
  readonly expirationMs: number;
  readonly timestampMs: number;
  readonly ownerAddress: TronAddress;
  readonly toAddress: TronAddress;
  /** Sun, > 0. */
  readonly amountSun: bigint;
};

/**
 * The protobuf bytes of a TransferContract `Transaction.raw`, as java-tron and
 * tronweb serialize it (core/contract/balance_contract.proto: owner_address 1,
 * to_address 2, amount 3); no fee_limit (a TRX transfer runs no contract code).
 */
export function encodeTransferContractRaw(raw: TransferContractRaw): Uint8Array {
  assertRaw({ ...raw, feeLimitSun: 0n, contractAddress: raw.toAddress, data: new Uint8Array() });
  if (raw.amountSun <= 0n || raw.amountSun > INT64_MAX)
    throw new RangeError(`amount ${raw.amountSun} is not a positive int64`);
  const call = new BinaryWriter();
  call.tag(1, WireType.LengthDelimited).bytes(tronAddressToBytes(raw.ownerAddress));
  call.tag(2, WireType.LengthDelimited).bytes(tronAddressToBytes(raw.toAddress));
  call.tag(3, WireType.Varint).int64(raw.amountSun);

  const contract = { type: TRANSFER_CONTRACT_TYPE, typeUrl: TRANSFER_CONTRACT_TYPE_URL, parameter: call.finish() };
  return encodeRaw(raw, contract, 0n);
}

/** The header fields every `Transaction.raw` we write carries. */
export interface RawHeader {
  readonly refBlockBytes: Uint8Array;
  readonly refBlockHash: Uint8Array;
  readonly expirationMs: number;
  readonly timestampMs: number;
}

/** One contract of a `Transaction.raw`: its type, and its parameter as a `google.protobuf.Any`. */
export interface RawContract {
  readonly type: number;
  readonly typeUrl: string;
  readonly parameter: Uint8Array;
}

/** `Transaction.raw` holding one contract; fee_limit 0 is omitted, as proto3 does. */
export function encodeRaw(header: RawHeader, contract: RawContract, feeLimitSun: bigint): Uint8Array {
  const any = new BinaryWriter();
  any.tag(1, WireType.LengthDelimited).string(contract.typeUrl);
  any.tag(2, WireType.LengthDelimited).bytes(contract.parameter);

  const contractWriter = new BinaryWriter();
  contractWriter.tag(1, WireType.Varint).int32(contract.type);
  contractWriter.tag(2, WireType.LengthDelimited).bytes(any.finish());

  const writer = new BinaryWriter();
  writer.tag(1, WireType.LengthDelimited).bytes(header.refBlockBytes);
  writer.tag(4, WireType.LengthDelimited).bytes(header.refBlockHash);
  writer.tag(8, WireType.Varint).int64(header.expirationMs);
  writer.tag(11, WireType.LengthDelimited).bytes(contractWriter.finish());
  if (header.timestampMs !== 0) writer.tag(14, WireType.Varint).int64(header.timestampMs);
  if (feeLimitSun !== 0n) writer.tag(18, WireType.Varint).int64(feeLimitSun);
  return writer.finish();
}

/** txID = sha256(raw bytes), hex: signatures are not part of it (docs/tron.md §1.3). */
export function transactionId(rawBytes: Uint8Array): string {
  return bytesToHex(sha256(rawBytes));
}

/** A whole `Transaction` (raw + signatures), the body of `/wallet/broadcasthex`. */
export function encodeSignedTransaction(rawBytes: Uint8Array, signatures: readonly Uint8Array[]): Uint8Array {
  if (signatures.length === 0 || signatures.length > SIGNATURES_MAX)
    throw new RangeError(`a transaction carries 1..${SIGNATURES_MAX} signatures`);
  const writer = new BinaryWriter();
  writer.tag(1, WireType.LengthDelimited).bytes(rawBytes);
  for (const signature of signatures) writer.tag(2, WireType.LengthDelimited).bytes(signature);
  return writer.finish();
}

/**
 * Reads `Transaction.raw` bytes that must hold exactly one TriggerSmartContract
 * and nothing we do not model (no auths, scripts, permission id or TRC10 value).
 * Untrusted input: every malformation is a `problem`, never an exception.
 */
export function decodeTriggerSmartContractRaw(bytes: Uint8Array): DecodedRaw {
  if (bytes.length > TRANSACTION_MAX_BYTES)
    return { ok: false, problem: `raw data is ${bytes.length} bytes, over ${TRANSACTION_MAX_BYTES}` };
  try {
    const fields = readFields(bytes, 'raw', {
      1: 'bytes',
      4: 'bytes',
      8: 'varint',
      11: 'bytes',
      14: 'varint',
      18: 'varint',
    });
    const contractBytes = fields.bytes(11);
    if (contractBytes === undefined) return { ok: false, problem: 'raw has no contract' };
    const contract = readFields(contractBytes, 'contract', { 1: 'varint', 2: 'bytes' });
    const type = contract.varint(1) ?? 0n;
    if (type !== BigInt(TRIGGER_SMART_CONTRACT_TYPE))
      return { ok: false, problem: `contract type ${type} is not TriggerSmartContract (31)` };
    const call = readContractParameter(contract, TRIGGER_SMART_CONTRACT_TYPE_URL, 'TriggerSmartContract', {
      1: 'bytes',
      2: 'bytes',
      3: 'varint',
      4: 'bytes',
    });
    const { refBlockBytes, refBlockHash } = readRefBlock(fields);
    const owner = call.bytes(1);
    const target = call.bytes(2);
    const ownerAddress = owner && isTronAddressBytes(owner) ? tronAddressFromBytes(owner) : undefined;
    const contractAddress = target && isTronAddressBytes(target) ? tronAddressFromBytes(target) : undefined;
    if (ownerAddress === undefined) return { ok: false, problem: 'owner_address is not 21 bytes starting with 0x41' };
    if (contractAddress === undefined)
      return { ok: false, problem: 'contract_address is not 21 bytes starting with 0x41' };
    const expirationMs = safeMilliseconds(fields.varint(8) ?? 0n);
    const timestampMs = safeMilliseconds(fields.varint(14) ?? 0n);
    if (expirationMs === undefined || expirationMs === 0)
      return { ok: false, problem: 'expiration is missing or out of range' };
    if (timestampMs === undefined) return { ok: false, problem: 'timestamp is out of range' };
    const feeLimitSun = fields.varint(18) ?? 0n;
    const callValueSun = call.varint(3) ?? 0n;
    if (feeLimitSun < 0n || callValueSun < 0n)
      return { ok: false, problem: 'fee_limit and call_value must not be negative' };
    return {
      ok: true,
      raw: {
        refBlockBytes,
        refBlockHash,
        expirationMs,
        timestampMs,
        feeLimitSun,
        ownerAddress,
        contractAddress,
        callValueSun,
        data: call.bytes(4) ?? new Uint8Array(),
      },
    };
  } catch (error) {
    return { ok: false, problem: problemOf(error) };
  }
}

/**
 * The signed envelope of any `Transaction`: its raw_data bytes and 1..SIGNATURES_MAX
 * signatures, read the same way whatever contract the raw data holds.
 */
export function readSignedEnvelope(
  bytes: Uint8Array,
):
  | { readonly ok: true; readonly rawBytes: Uint8Array; readonly signatures: readonly Uint8Array[] }
  | { readonly ok: false; readonly problem: string } {
  if (bytes.length > TRANSACTION_MAX_BYTES)
    return { ok: false, problem: `transaction is ${bytes.length} bytes, over ${TRANSACTION_MAX_BYTES}` };
  let rawBytes: Uint8Array | undefined;
  const signatures: Uint8Array[] = [];
  try {
    const reader = new BinaryReader(bytes);
    while (reader.pos < reader.len) {
      const [fieldNo, wireType] = reader.tag();
      if (fieldNo === 1 && wireType === WireType.LengthDelimited && rawBytes === undefined) rawBytes = reader.bytes();
      else if (fieldNo === 2 && wireType === WireType.LengthDelimited && signatures.length < SIGNATURES_MAX)
        signatures.push(reader.bytes());
      // `ret` (5) is filled in by nodes after execution; it is not signed and carries nothing we trust.
      else if (fieldNo === 5) reader.skip(wireType, fieldNo);
      else
        return {
          ok: false,
          problem: `transaction field ${fieldNo} (wire type ${wireType}) is unexpected, repeated or over the limit`,
        };
    }
  } catch (error) {
    return { ok: false, problem: `malformed protobuf: ${(error as Error).message}` };
  }
  if (rawBytes === undefined) return { ok: false, problem: 'transaction has no raw_data' };
  if (signatures.length === 0) return { ok: false, problem: 'transaction has no signature' };
  return { ok: true, rawBytes, signatures };
}

/** Reads a whole signed `Transaction` (what `/wallet/broadcasthex` receives). */
export function decodeSignedTransaction(bytes: Uint8Array): DecodedSignedTransaction {
  const envelope = readSignedEnvelope(bytes);
  if (!envelope.ok) return envelope;
  const { rawBytes, signatures } = envelope;
  const decoded = decodeTriggerSmartContractRaw(rawBytes);
  if (!decoded.ok) return decoded;
  return { ok: true, transaction: { rawBytes, raw: decoded.raw, txId: transactionId(rawBytes), signatures } };
}

/** TaPoS fields for a reference block: java-tron keys recent blocks by the last 2 bytes of the number. */
export function referenceBlockFields(
  blockNumber: number,
  blockIdHex: string,
): { refBlockBytes: Uint8Array; refBlockHash: Uint8Array } {
  if (!Number.isSafeInteger(blockNumber) || blockNumber < 0) throw new RangeError(`block number ${blockNumber}`);
  if (!/^[0-9a-fA-F]{64}$/.test(blockIdHex)) throw new RangeError('a block id is 32 bytes (64 hex digits)');
  const blockId = hexToBytes(blockIdHex);
  // A TRON block id starts with its number (8 bytes, big-endian): a mismatch means a confused or lying node.
  const numberInId = new DataView(blockId.buffer, blockId.byteOffset, 8).getBigUint64(0);
  if (numberInId !== BigInt(blockNumber))
    throw new RangeError(`block id ${blockIdHex} belongs to block ${numberInId}, not ${blockNumber}`);
  return {
    refBlockBytes: Uint8Array.of((blockNumber >>> 8) & 0xff, blockNumber & 0xff),
    refBlockHash: blockId.slice(8, 16),
  };
}

/** The node's JSON of a transaction (`visible: false`, hex addresses), as `getblock` and `gettransactionbyid` print it. */
export function transactionJson(
  transaction: Pick<SignedTransaction, 'rawBytes' | 'raw'> & {
    readonly signatures?: readonly Uint8Array[];
    readonly txId?: string;
  },
) {
  const { raw } = transaction;
  const value: Record<string, string | number> = {
    data: bytesToHex(raw.data),
    owner_address: tronAddressToHex(raw.ownerAddress),
    contract_address: tronAddressToHex(raw.contractAddress),
  };
  if (raw.callValueSun !== 0n) value['call_value'] = safeJsonNumber(raw.callValueSun);
  return printTransactionJson({
    contract: { type: 'TriggerSmartContract', typeUrl: TRIGGER_SMART_CONTRACT_TYPE_URL, value },
    raw,
    rawBytes: transaction.rawBytes,
    // A decoded or signed transaction knows its id already (the sha256 of its raw bytes).
    txId: transaction.txId ?? transactionId(transaction.rawBytes),
    signatures: transaction.signatures,
  });
}

function assertRaw(raw: TriggerSmartContractRaw): void {
  if (raw.refBlockBytes.length !== REF_BLOCK_BYTES_LENGTH) throw new RangeError('ref_block_bytes is 2 bytes');
  if (raw.refBlockHash.length !== REF_BLOCK_HASH_LENGTH) throw new RangeError('ref_block_hash is 8 bytes');
  if (!Number.isSafeInteger(raw.expirationMs) || raw.expirationMs <= 0)
    throw new RangeError(`expiration ${raw.expirationMs} ms`);
  if (!Number.isSafeInteger(raw.timestampMs) || raw.timestampMs < 0)
    throw new RangeError(`timestamp ${raw.timestampMs} ms`);
  for (const [name, value] of [
    ['fee_limit', raw.feeLimitSun],
    ['call_value', raw.callValueSun ?? 0n],
  ] as const) {
    if (value < 0n || value > INT64_MAX) throw new RangeError(`${name} ${value} is not a non-negative int64`);
  }
}

function isTronAddressBytes(bytes: Uint8Array): boolean {
  return bytes.length === 21 && bytes[0] === 0x41;
}

function safeMilliseconds(value: bigint): number | undefined {
  return value >= 0n && value <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(value) : undefined;
}

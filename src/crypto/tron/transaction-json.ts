// The JSON a java-tron node prints for a transaction (JsonFormat with
// visible=false, as /wallet/* builders and gettransactionbyid answer, and as
// tronweb builds it): one printer for every contract we build or read
// (TriggerSmartContract, TransferContract, the Stake 2.0 contracts), each
// caller giving only its contract's `parameter.value`.
import { bytesToHex } from '@noble/hashes/utils.js';

/** The raw fields every contract shares (Transaction.raw), as the printer needs them. */
interface PrintedRaw {
  readonly refBlockBytes: Uint8Array;
  readonly refBlockHash: Uint8Array;
  readonly expirationMs: number;
  /** 0 is proto3's default: not printed. */
  readonly timestampMs: number;
  /** Only TriggerSmartContract has one; 0 or absent: not printed. */
  readonly feeLimitSun?: bigint;
}

export interface PrintedTransaction {
  readonly contract: {
    /** Transaction.Contract.ContractType's name, e.g. `TriggerSmartContract`. */
    readonly type: string;
    readonly typeUrl: string;
    readonly value: Readonly<Record<string, unknown>>;
  };
  readonly raw: PrintedRaw;
  readonly rawBytes: Uint8Array;
  readonly txId: string;
  /** An empty or absent list is not printed (JsonFormat leaves empty repeated fields out). */
  readonly signatures?: readonly Uint8Array[] | undefined;
}

export type TransactionJson = {
  readonly signature?: string[];
  readonly txID: string;
  readonly raw_data: Record<string, unknown>;
  readonly raw_data_hex: string;
  readonly visible: false;
};

export function printTransactionJson(transaction: PrintedTransaction): TransactionJson {
  const { raw, contract } = transaction;
  const rawData: Record<string, unknown> = {
    contract: [{ parameter: { value: contract.value, type_url: contract.typeUrl }, type: contract.type }],
    ref_block_bytes: bytesToHex(raw.refBlockBytes),
    ref_block_hash: bytesToHex(raw.refBlockHash),
    expiration: raw.expirationMs,
  };
  if (raw.feeLimitSun !== undefined && raw.feeLimitSun !== 0n) rawData['fee_limit'] = safeJsonNumber(raw.feeLimitSun);
  if (raw.timestampMs !== 0) rawData['timestamp'] = raw.timestampMs;
  const signatures = transaction.signatures ?? [];
  return {
    ...(signatures.length > 0 ? { signature: signatures.map((signature) => bytesToHex(signature)) } : {}),
    txID: transaction.txId,
    raw_data: rawData,
    raw_data_hex: bytesToHex(transaction.rawBytes),
    visible: false,
  };
}

/** An int64 as the JSON number java-tron prints; refused past 2^53, where a JSON number would lose digits. */
export function safeJsonNumber(value: bigint): number {
  if (value > BigInt(Number.MAX_SAFE_INTEGER)) throw new RangeError(`${value} does not fit a JSON number exactly`);
  return Number(value);
}

// The kinds of transaction the simulated chain takes: a TriggerSmartContract
// call (USDT transfers; decoded by tron/transaction.ts), a TransferContract
// (plain TRX, the sending side's gas top-ups) and the Stake 2.0 contracts
// (tron/stake-contracts.ts). The TransferContract reader is
// as strict as the other: one contract, only the fields java-tron's protobuf
// writes for it, each once; anything else is a problem, never an exception.
import { tronAddressFromBytes, tronAddressToHex, type TronAddress } from '../tron/address.ts';
import {
  decodeSignedTransaction,
  readSignedEnvelope,
  TRANSACTION_MAX_BYTES,
  TRANSFER_CONTRACT_TYPE,
  TRANSFER_CONTRACT_TYPE_URL,
  transactionId,
  transactionJson,
  type SignedTransaction,
  type TransferContractRaw,
} from '../tron/transaction.ts';
import { problemOf, readContractParameter, readFields, readRefBlock } from '../tron/transaction-fields.ts';
import { printTransactionJson } from '../tron/transaction-json.ts';
import {
  decodeSignedStakeTransaction,
  stakeTransactionJson,
  type SignedStakeTransaction,
} from '../tron/stake-contracts.ts';

/** A signed TRX transfer (TransferContract). */
export interface SignedTrxTransfer {
  readonly kind: 'trx';
  readonly rawBytes: Uint8Array;
  readonly raw: TransferContractRaw;
  readonly txId: string;
  readonly signatures: readonly Uint8Array[];
}

export type ChainTransaction = SignedTransaction | SignedTrxTransfer | SignedStakeTransaction;

export function isTrxTransfer(transaction: ChainTransaction): transaction is SignedTrxTransfer {
  return 'kind' in transaction && transaction.kind === 'trx';
}

export function isStakeTransaction(transaction: ChainTransaction): transaction is SignedStakeTransaction {
  return 'kind' in transaction && transaction.kind === 'stake';
}

/** Who signs and pays for the transaction. */
export function ownerOf(transaction: ChainTransaction): TronAddress {
  return isStakeTransaction(transaction) ? transaction.raw.contract.ownerAddress : transaction.raw.ownerAddress;
}

/** A smart-contract call (the USDT contract); anything else is a system contract that runs no code. */
export function isContractCall(transaction: ChainTransaction): transaction is SignedTransaction {
  return !('kind' in transaction);
}

export type DecodedChainTransaction =
  { readonly ok: true; readonly transaction: ChainTransaction } | { readonly ok: false; readonly problem: string };

/** A whole signed `Transaction` of either kind. */
export function decodeChainTransaction(bytes: Uint8Array): DecodedChainTransaction {
  const call = decodeSignedTransaction(bytes);
  if (call.ok) return call;
  const type = /^contract type (\d+) is not/.exec(call.problem)?.[1];
  if (type !== undefined && type !== '1') {
    const stake = decodeSignedStakeTransaction(bytes);
    // A type that is neither a call, a TRX transfer nor a Stake 2.0 contract keeps the first reader's problem.
    return stake.ok || !/is not a Stake 2.0 contract/.test(stake.problem) ? stake : call;
  }
  if (type === undefined) return call;
  // The raw data holds a TransferContract: read the envelope again, then the contract.
  const envelope = readSignedEnvelope(bytes);
  if (!envelope.ok) return envelope;
  const { rawBytes, signatures } = envelope;
  const raw = decodeTransferContractRaw(rawBytes);
  if (!raw.ok) return raw;
  return { ok: true, transaction: { kind: 'trx', rawBytes, raw: raw.raw, txId: transactionId(rawBytes), signatures } };
}

function decodeTransferContractRaw(
  bytes: Uint8Array,
): { readonly ok: true; readonly raw: TransferContractRaw } | { readonly ok: false; readonly problem: string } {
  if (bytes.length > TRANSACTION_MAX_BYTES)
    return { ok: false, problem: `raw data is ${bytes.length} bytes, over ${TRANSACTION_MAX_BYTES}` };
  try {
    const fields = readFields(bytes, 'raw', { 1: 'bytes', 4: 'bytes', 8: 'varint', 11: 'bytes', 14: 'varint' });
    const contract = readFields(fields.bytes(11) ?? new Uint8Array(), 'contract', { 1: 'varint', 2: 'bytes' });
    if (contract.varint(1) !== BigInt(TRANSFER_CONTRACT_TYPE))
      return { ok: false, problem: 'contract type is not TransferContract (1)' };
    const value = readContractParameter(contract, TRANSFER_CONTRACT_TYPE_URL, 'TransferContract', {
      1: 'bytes',
      2: 'bytes',
      3: 'varint',
    });
    const { refBlockBytes, refBlockHash } = readRefBlock(fields);
    const ownerAddress = address(value.bytes(1));
    const toAddress = address(value.bytes(2));
    if (ownerAddress === undefined) return { ok: false, problem: 'owner_address is not 21 bytes starting with 0x41' };
    if (toAddress === undefined) return { ok: false, problem: 'to_address is not 21 bytes starting with 0x41' };
    const expiration = fields.varint(8) ?? 0n;
    const timestamp = fields.varint(14) ?? 0n;
    if (expiration <= 0n || expiration > BigInt(Number.MAX_SAFE_INTEGER))
      return { ok: false, problem: 'expiration is missing or out of range' };
    if (timestamp < 0n || timestamp > BigInt(Number.MAX_SAFE_INTEGER))
      return { ok: false, problem: 'timestamp is out of range' };
    const amountSun = value.varint(3) ?? 0n;
    return {
      ok: true,
      raw: {
        refBlockBytes,
        refBlockHash,
        expirationMs: Number(expiration),
        timestampMs: Number(timestamp),
        ownerAddress,
        toAddress,
        amountSun,
      },
    };
  } catch (error) {
    return { ok: false, problem: problemOf(error) };
  }
}

/** The node's JSON of a transaction of either kind (`visible: false`); an unsigned one has no `signature` (an empty repeated field is not printed). */
export function chainTransactionJson(transaction: ChainTransaction): Record<string, unknown> {
  if (isStakeTransaction(transaction)) return stakeTransactionJson(transaction);
  if (!isTrxTransfer(transaction)) return transactionJson(transaction);
  const { raw } = transaction;
  return printTransactionJson({
    ...transaction,
    contract: {
      type: 'TransferContract',
      typeUrl: TRANSFER_CONTRACT_TYPE_URL,
      value: {
        amount: Number(raw.amountSun),
        owner_address: tronAddressToHex(raw.ownerAddress),
        to_address: tronAddressToHex(raw.toAddress),
      },
    },
  });
}

function address(bytes: Uint8Array | undefined): TronAddress | undefined {
  return bytes && bytes.length === 21 && bytes[0] === 0x41 ? tronAddressFromBytes(bytes) : undefined;
}

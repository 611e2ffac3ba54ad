// What a java-tron node checks before it takes a transaction into its pool
// (docs/tron.md §1.4; jt Manager.validateTapos / validateCommon / validateDup,
// TransactionCapsule signature check, BandwidthProcessor, Wallet.broadcastTransaction).
// Each refusal carries the node's code and a message in its words.
import { bytesToHex, hexToBytes } from '@noble/hashes/utils.js';
import { recoverSignerAddress } from '../tron/signing.ts';
import { encodeSignedTransaction, TRANSACTION_MAX_BYTES } from '../tron/transaction.ts';
import type { TransferContractRaw } from '../tron/transaction.ts';
import type { TronAddress } from '../tron/address.ts';
import {
  decodeChainTransaction,
  isStakeTransaction,
  isTrxTransfer,
  ownerOf,
  type ChainTransaction,
} from './chain-transaction.ts';
import { checkStakeTransaction } from './stake-intake.ts';
import type { ChainParameters } from './chain-parameters.ts';
import type { ChainState } from './chain-state.ts';
import { bandwidthCharge, trxTransferCost } from './usdt-execution.ts';

type RefusalCode =
  | 'SIGERROR'
  | 'CONTRACT_VALIDATE_ERROR'
  | 'BANDWITH_ERROR'
  | 'DUP_TRANSACTION_ERROR'
  | 'TAPOS_ERROR'
  | 'TOO_BIG_TRANSACTION_ERROR'
  | 'TRANSACTION_EXPIRATION_ERROR'
  | 'SERVER_BUSY'
  | 'OTHER_ERROR';

export interface IntakeRefusal {
  readonly code: RefusalCode;
  readonly message: string;
}

export interface IncomingTransaction {
  readonly transaction: ChainTransaction;
  /** Signed size + the result bytes java-tron adds: what bandwidth charges. */
  readonly sizeBytes: number;
}

/** The chain as the checks see it. */
export interface IntakeView {
  readonly parameters: ChainParameters;
  readonly state: ChainState;
  readonly headNumber: number;
  readonly headTimestampMs: number;
  blockId(number: number): string | undefined;
  /** In the pool, on chain, or recently broadcast. */
  knows(txId: string): boolean;
  /** The address whose key made `signature` over `txId` (recoverSignerAddress, or its result from the server's worker pool). */
  recoverSigner?(txId: string, signature: Uint8Array): TronAddress | undefined;
}

export function decodeIncoming(
  parameters: ChainParameters,
  hex: string,
): { ok: true; incoming: IncomingTransaction } | { ok: false; refusal: IntakeRefusal } {
  if (!/^(?:[0-9a-fA-F]{2})+$/.test(hex))
    return { ok: false, refusal: { code: 'OTHER_ERROR', message: 'transaction is not hex' } };
  if (hex.length / 2 > TRANSACTION_MAX_BYTES) {
    return {
      ok: false,
      refusal: {
        code: 'TOO_BIG_TRANSACTION_ERROR',
        message: `too big transaction, the size is ${hex.length / 2} bytes`,
      },
    };
  }
  const decoded = decodeChainTransaction(hexToBytes(hex));
  if (!decoded.ok) return { ok: false, refusal: { code: 'OTHER_ERROR', message: decoded.problem } };
  return { ok: true, incoming: incomingOf(parameters, decoded.transaction) };
}

export function incomingOf(parameters: ChainParameters, transaction: ChainTransaction): IncomingTransaction {
  const signedBytes = encodeSignedTransaction(transaction.rawBytes, transaction.signatures).length;
  return { transaction, sizeBytes: signedBytes + parameters.resultBytesPerTransaction };
}

/** null when a node would take it into its pool. */
export function checkIntake(
  view: IntakeView,
  incoming: IncomingTransaction,
  options: { readonly skipDuplicateCheck?: boolean } = {},
): IntakeRefusal | null {
  const { transaction } = incoming;
  const { raw } = transaction;
  const { parameters } = view;

  const tapos = checkTapos(view, raw.refBlockBytes, raw.refBlockHash);
  if (tapos) return tapos;

  if (raw.expirationMs <= view.headTimestampMs) {
    return {
      code: 'TRANSACTION_EXPIRATION_ERROR',
      message: `Transaction expiration, transaction expiration time is ${raw.expirationMs}, but headBlockTime is ${view.headTimestampMs}`,
    };
  }
  if (raw.expirationMs > view.headTimestampMs + parameters.maxExpirationMs) {
    return {
      code: 'TRANSACTION_EXPIRATION_ERROR',
      message: `Transaction expiration time is ${raw.expirationMs}, but maximum is ${view.headTimestampMs + parameters.maxExpirationMs}`,
    };
  }
  if (!options.skipDuplicateCheck && view.knows(transaction.txId))
    return { code: 'DUP_TRANSACTION_ERROR', message: 'Dup trans' };

  if (transaction.signatures.length !== 1)
    return { code: 'SIGERROR', message: 'Validate signature error: only one signature is supported' };
  const signer = (view.recoverSigner ?? recoverSignerAddress)(transaction.txId, transaction.signatures[0]!);
  if (signer !== ownerOf(transaction)) {
    return {
      code: 'SIGERROR',
      message: `Validate signature error: ${transaction.txId} is signed by ${signer ?? 'an unrecoverable key'} but it is not contained of permission.`,
    };
  }

  if (isTrxTransfer(transaction)) return checkTrxTransfer(view, incoming, transaction.raw);
  if (isStakeTransaction(transaction)) return checkStakeTransaction(view, incoming, transaction);
  const call = transaction.raw;
  if (!view.state.account(call.ownerAddress)) {
    return { code: 'CONTRACT_VALIDATE_ERROR', message: 'Validate TriggerSmartContract error, no OwnerAccount.' };
  }
  if (call.contractAddress !== parameters.usdtContract) {
    return { code: 'CONTRACT_VALIDATE_ERROR', message: 'No contract or not a smart contract' };
  }
  if (call.feeLimitSun > parameters.maxFeeLimitSun) {
    return { code: 'CONTRACT_VALIDATE_ERROR', message: `feeLimit must be >= 0 and <= ${parameters.maxFeeLimitSun}` };
  }
  if (call.callValueSun !== 0n) return { code: 'CONTRACT_VALIDATE_ERROR', message: 'the USDT contract is not payable' };

  const bandwidth = bandwidthCharge(
    view.state,
    parameters,
    call.ownerAddress,
    incoming.sizeBytes,
    view.headTimestampMs + parameters.blockIntervalMs,
  );
  if (!bandwidth.ok) return { code: 'BANDWITH_ERROR', message: bandwidth.reason };
  return null;
}

/** TransferContract (jt TransferActuator.validate, BandwidthProcessor): TRX moves, a new recipient costs the account-creation fees. */
function checkTrxTransfer(
  view: IntakeView,
  incoming: IncomingTransaction,
  raw: TransferContractRaw,
): IntakeRefusal | null {
  const { parameters, state } = view;
  const owner = state.account(raw.ownerAddress);
  if (!owner) return { code: 'CONTRACT_VALIDATE_ERROR', message: 'Validate TransferContract error, no OwnerAccount.' };
  if (raw.amountSun <= 0n) return { code: 'CONTRACT_VALIDATE_ERROR', message: 'Amount must be greater than 0.' };
  if (raw.toAddress === raw.ownerAddress)
    return { code: 'CONTRACT_VALIDATE_ERROR', message: 'Cannot transfer TRX to yourself.' };
  const cost = trxTransferCost(
    state,
    parameters,
    raw,
    incoming.sizeBytes,
    view.headTimestampMs + parameters.blockIntervalMs,
  );
  if (!cost.ok) return { code: 'BANDWITH_ERROR', message: cost.reason };
  if (owner.balanceSun < raw.amountSun + cost.burnSun + cost.createFeeSun) {
    return { code: 'CONTRACT_VALIDATE_ERROR', message: 'Validate TransferContract error, balance is not sufficient.' };
  }
  return null;
}

function checkTapos(view: IntakeView, refBlockBytes: Uint8Array, refBlockHash: Uint8Array): IntakeRefusal | null {
  const low16 = ((refBlockBytes[0] ?? 0) << 8) | (refBlockBytes[1] ?? 0);
  const window = view.parameters.taposWindowBlocks;
  // The most recent block whose number ends in those 2 bytes (jt keeps them keyed so).
  const number = view.headNumber - ((((view.headNumber - low16) % window) + window) % window);
  const id = number >= 0 ? view.blockId(number) : undefined;
  const refHex = bytesToHex(refBlockHash);
  if (id === undefined)
    return { code: 'TAPOS_ERROR', message: `Tapos failed, block not found, ref block ${bytesToHex(refBlockBytes)}` };
  if (id.slice(16, 32) !== refHex) {
    return {
      code: 'TAPOS_ERROR',
      message: `Tapos failed, different block hash, ${refHex}, ${id.slice(16, 32)} , recent block ${number}, head block ${view.headNumber}`,
    };
  }
  return null;
}

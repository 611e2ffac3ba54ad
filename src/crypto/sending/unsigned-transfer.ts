// What is signed: each queued transfer's raw transaction (a TRC20 transfer(), a
// TRX transfer, or the hot wallet's DelegateResource / UnDelegateResource of
// staked energy) referencing the solid block, its txID, and the private key of
// its sending address. Encoded here, not through signTriggerSmartContract /
// signTransferContract: those derive the public key again for every
// transaction (a third of signing's cost); the key is checked once per pass.
import type { DepositSigningKey } from '../keys/hd-keys.ts';
import { tronAddressFromPrivateKey, type TronAddress } from '../tron/address.ts';
import type { BlockHeader } from '../tron/node-client.ts';
import {
  encodeTransferContractRaw,
  encodeTriggerSmartContractRaw,
  referenceBlockFields,
  transactionId,
} from '../tron/transaction.ts';
import { transferCalldata } from '../tron/trc20-usdt.ts';
import { encodeStakeTransactionRaw, type StakeContract } from '../tron/stake-contracts.ts';
import type { ExecutorContext } from './executor-context.ts';
import type { OutgoingTransferRow } from './sending-repository.ts';
import type { SignJob } from './signing-decisions.ts';

/** A transaction expires this long after the head block it was built at (java-tron's default is 60 s; docs/tron.md §1.4: keep it short). */
export const EXPIRATION_MS = 90_000;

/** The chain as a signing pass sees it: transactions reference `solid` and expire after `head`. */
export interface SigningWindow {
  readonly head: BlockHeader;
  readonly solid: BlockHeader;
  readonly now: Date;
}

/** The private key that signs a transfer from `from`. */
export type PrivateKeyOf = (row: OutgoingTransferRow, from: TronAddress) => Uint8Array;

export interface UnsignedTransfer {
  readonly row: OutgoingTransferRow;
  readonly feeLimit: bigint;
  readonly energy: SignJob['energy'];
  readonly privateKey: Uint8Array;
  readonly rawBytes: Uint8Array;
  /** Hex, as the node names it. */
  readonly txId: string;
}

/** A transfer this pass cannot sign, and why (unsignable-transfers.ts holds it; the rest of its pass is signed). */
export interface Unsignable {
  readonly row: OutgoingTransferRow;
  readonly reason: string;
}

/** The signing key does not derive the transfer's sending address: no key here can move its funds. */
export class UnsignableTransferError extends Error {
  override readonly name = 'UnsignableTransferError';
}

/** One private key per sending address per pass (derivation and its check are not free). */
export function privateKeysOf(key: DepositSigningKey): PrivateKeyOf {
  const keys = new Map<string, Uint8Array>();
  return (row, from) => {
    let privateKey = keys.get(from);
    if (!privateKey) {
      privateKey =
        row.from_kind === 'hot_wallet' ? key.hotWalletPrivateKey() : key.privateKey(Number(row.from_derivation_index));
      if (tronAddressFromPrivateKey(privateKey) !== from)
        throw new UnsignableTransferError(`outgoing transfer ${row.id}: the signing key does not derive ${from}`);
      keys.set(from, privateKey);
    }
    return privateKey;
  };
}

/**
 * Every job's raw transaction and txID, in the jobs' order, and the jobs that could not be built: one
 * transfer's error (its key, its fields) is that transfer's alone, never its chunk's.
 */
export function unsignedTransfers(
  context: Pick<ExecutorContext, 'nextTimestampMs' | 'usdtContract'>,
  jobs: readonly SignJob[],
  privateKeyOf: PrivateKeyOf,
  window: Pick<SigningWindow, 'head' | 'solid'>,
): { prepared: UnsignedTransfer[]; unsignable: Unsignable[] } {
  const common: CommonFields = {
    ...referenceBlockFields(window.solid.number, window.solid.id),
    expirationMs: window.head.timestamp + EXPIRATION_MS,
  };
  const prepared: UnsignedTransfer[] = [];
  const unsignable: Unsignable[] = [];
  for (const job of jobs) {
    try {
      prepared.push(unsignedTransfer(context, job, privateKeyOf, common));
    } catch (error) {
      unsignable.push({ row: job.row, reason: error instanceof Error ? error.message : String(error) });
    }
  }
  return { prepared, unsignable };
}

/** What every transaction of a pass shares: its reference block and its expiration. */
type CommonFields = ReturnType<typeof referenceBlockFields> & { readonly expirationMs: number };

function unsignedTransfer(
  context: Pick<ExecutorContext, 'nextTimestampMs' | 'usdtContract'>,
  { row, from, feeLimit, energy }: SignJob,
  privateKeyOf: PrivateKeyOf,
  common: CommonFields,
): UnsignedTransfer {
  const privateKey = privateKeyOf(row, from);
  const timestampMs = context.nextTimestampMs();
  const to = row.to_address as TronAddress;
  let rawBytes: Uint8Array;
  if (row.asset === 'USDT')
    rawBytes = encodeTriggerSmartContractRaw({
      ...common,
      timestampMs,
      ownerAddress: from,
      feeLimitSun: feeLimit,
      contractAddress: context.usdtContract,
      data: transferCalldata(to, row.amount),
    });
  else if (row.asset === 'ENERGY')
    rawBytes = encodeStakeTransactionRaw({ ...common, timestampMs, contract: energyContract(row, from, to) });
  else
    rawBytes = encodeTransferContractRaw({
      ...common,
      timestampMs,
      ownerAddress: from,
      toAddress: to,
      amountSun: row.amount,
    });
  return { row, feeLimit, energy, privateKey, rawBytes, txId: transactionId(rawBytes) };
}

/**
 * The Stake 2.0 contract of an ENERGY transfer: a delegation without lock (it can
 * be taken back at once: java-tron's DelegateResourceActuator records an unlocked
 * delegation when `lock` is false), or the undelegation of the same amount.
 */
function energyContract(row: OutgoingTransferRow, from: TronAddress, to: TronAddress): StakeContract {
  const common = { ownerAddress: from, resource: 'ENERGY' as const, balanceSun: row.amount, receiverAddress: to };
  return row.purpose === 'energy_delegation'
    ? { type: 'DelegateResourceContract', ...common, lock: false, lockPeriodBlocks: 0n }
    : { type: 'UnDelegateResourceContract', ...common };
}

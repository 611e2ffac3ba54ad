// Where a transfer is signed. Queued transfers, oldest first, within the
// in-flight bound, the outflow cap and what the sending address holds
// (signing-decisions.ts); each attempt (bytes, txID, expiration) is committed
// BEFORE its first broadcast (broadcaster.ts). Signed chunk by chunk: the node
// checks one chunk while the next is signed.
import { bytesToHex } from '@noble/hashes/utils.js';
import { ConfigError } from '../../config.ts';
import { inTransaction } from '../../db/transaction.ts';
import type { DepositSigningKey } from '../keys/hd-keys.ts';
import { tronAddressFromPrivateKey, type TronAddress } from '../tron/address.ts';
import type { BlockHeader } from '../tron/node-client.ts';
import {
  encodeSignedTransaction,
  encodeTransferContractRaw,
  encodeTriggerSmartContractRaw,
  referenceBlockFields,
  transactionId,
} from '../tron/transaction.ts';
import { transferCalldata } from '../tron/trc20-usdt.ts';
import { broadcastAll, type SignedTransfer } from './broadcaster.ts';
import type { ExecutorContext, ExecutorPassResult } from './executor-context.ts';
import { inThreadSigning } from './signing-pool.ts';
import type { OutgoingTransferRow } from './sending-repository.ts';
import * as repository from './sending-repository.ts';
import type { SignJob } from './signing-decisions.ts';

/** A transaction expires this long after the head block it was built at (java-tron's default is 60 s; docs/tron.md §1.4: keep it short). */
const EXPIRATION_MS = 90_000;
/** Transfers signed per signing transaction. */
const SIGN_CHUNK = 250;

export interface SigningWindow {
  readonly head: BlockHeader;
  readonly solid: BlockHeader;
  readonly now: Date;
}

/** The signing key, or the configuration error (logged) when none is set: nothing can be signed until an operator sets it and restarts. */
export async function loadSigningKey(
  context: ExecutorContext,
): Promise<{ key: DepositSigningKey } | { error: ConfigError }> {
  try {
    return { key: await context.signingKey() };
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    context.logger.error(
      { chain: context.chain, err: error },
      'outgoing transfers cannot be signed: the signing key is not configured',
    );
    return { error };
  }
}

/** One private key per sending address per pass (derivation and its check are not free). */
function privateKeys(key: DepositSigningKey): (row: OutgoingTransferRow, from: TronAddress) => Uint8Array {
  const keys = new Map<string, Uint8Array>();
  return (row, from) => {
    let privateKey = keys.get(from);
    if (!privateKey) {
      privateKey =
        row.from_kind === 'hot_wallet' ? key.hotWalletPrivateKey() : key.privateKey(Number(row.from_derivation_index));
      if (tronAddressFromPrivateKey(privateKey) !== from)
        throw new Error(`outgoing transfer ${row.id}: the signing key does not derive ${from}`);
      keys.set(from, privateKey);
    }
    return privateKey;
  };
}

/** Signs every job, commits each chunk's attempts, broadcasts each chunk while the next is signed. */
export async function signAndBroadcast(
  context: ExecutorContext,
  key: DepositSigningKey,
  jobs: readonly SignJob[],
  window: SigningWindow,
  result: ExecutorPassResult,
): Promise<void> {
  const privateKeyOf = privateKeys(key);
  const broadcasts: Promise<void>[] = [];
  try {
    for (let start = 0; start < jobs.length; start += SIGN_CHUNK) {
      const signed = await signChunk(context, jobs.slice(start, start + SIGN_CHUNK), privateKeyOf, window);
      const committed = await commitAttempts(context, signed, window);
      result.signed += committed.length;
      await context.step('after-sign');
      broadcasts.push(broadcastAll(context, committed, result));
    }
  } finally {
    // A crash between chunks still waits for the broadcasts already under way (their answers are recorded).
    const settled = await Promise.allSettled(broadcasts);
    const failed = settled.find((outcome) => outcome.status === 'rejected');
    if (failed) throw failed.reason;
  }
}

type Signed = SignedTransfer & { readonly feeLimit: bigint };

async function signChunk(
  context: ExecutorContext,
  jobs: readonly SignJob[],
  privateKeyOf: (row: OutgoingTransferRow, from: TronAddress) => Uint8Array,
  window: SigningWindow,
): Promise<Signed[]> {
  const common = {
    ...referenceBlockFields(window.solid.number, window.solid.id),
    expirationMs: window.head.timestamp + EXPIRATION_MS,
  };
  // Encoded here, not through signTriggerSmartContract / signTransferContract: those derive the public
  // key again for every transaction (a third of signing's cost); privateKeyOf checked it once per pass.
  const prepared = jobs.map(({ row, from, feeLimit }) => {
    const timestampMs = context.nextTimestampMs();
    const to = row.to_address as TronAddress;
    const rawBytes =
      row.asset === 'USDT'
        ? encodeTriggerSmartContractRaw({
            ...common,
            timestampMs,
            ownerAddress: from,
            feeLimitSun: feeLimit,
            contractAddress: context.usdtContract,
            data: transferCalldata(to, row.amount),
          })
        : encodeTransferContractRaw({
            ...common,
            timestampMs,
            ownerAddress: from,
            toAddress: to,
            amountSun: row.amount,
          });
    return { row, feeLimit, privateKey: privateKeyOf(row, from), rawBytes, txId: transactionId(rawBytes) };
  });
  // Signed by key (the hot wallet's, a sweep's deposit address's), on the signing pool when there is one.
  const byKey = new Map<Uint8Array, number[]>();
  for (const [index, item] of prepared.entries()) {
    const indexes = byKey.get(item.privateKey);
    if (indexes) indexes.push(index);
    else byKey.set(item.privateKey, [index]);
  }
  const signatures: Uint8Array[] = [];
  const signer = context.signing ?? inThreadSigning;
  await Promise.all(
    [...byKey].map(async ([privateKey, indexes]) => {
      const made = await signer.sign(
        privateKey,
        indexes.map((index) => prepared[index]!.txId),
      );
      for (const [position, index] of indexes.entries()) signatures[index] = made[position]!;
    }),
  );
  return prepared.map((item, index) => ({
    transfer: item.row,
    txId: item.txId,
    hex: bytesToHex(encodeSignedTransaction(item.rawBytes, [signatures[index]!])),
    feeLimit: item.feeLimit,
  }));
}

/** Bytes, txID and expiration are committed before the first broadcast; the outflow cap decides again in that transaction. */
async function commitAttempts(
  context: ExecutorContext,
  signed: readonly Signed[],
  window: SigningWindow,
): Promise<Signed[]> {
  const claimed = await inTransaction(context.db, async (tx) => {
    const allowed = await context.outflowCap?.claim(
      tx,
      signed.map((item) => item.transfer),
      window.now,
    );
    const attempts = signed
      .filter((item) => allowed?.has(item.transfer.id) ?? true)
      .map((item) => ({
        id: item.transfer.id,
        attempts: item.transfer.attempts,
        txId: item.txId,
        signedHex: item.hex,
        feeLimitSun: item.feeLimit,
      }));
    const ids = await repository.recordSignedAttempts(tx, attempts, {
      expiration: new Date(window.head.timestamp + EXPIRATION_MS),
      refBlockNumber: window.solid.number,
      signedAt: window.now,
    });
    await context.outflowCap?.record(
      tx,
      signed.filter((item) => ids.has(item.transfer.id)).map((item) => item.transfer),
      window.now,
    );
    return ids;
  });
  return signed.filter((item) => claimed.has(item.transfer.id));
}

// Where a transfer is signed (what is signed: unsigned-transfer.ts). Queued transfers, oldest first, within the
// in-flight bound, the outflow cap and what the sending address holds
// (signing-decisions.ts); each attempt (bytes, txID, expiration) is committed
// BEFORE its first broadcast (broadcaster.ts). Signed chunk by chunk: the node
// checks one chunk while the next is signed.
import { bytesToHex } from '@noble/hashes/utils.js';
import { ConfigError } from '../../config.ts';
import { inTransaction } from '../../db/transaction.ts';
import type { DepositSigningKey } from '../keys/hd-keys.ts';
import { encodeSignedTransaction } from '../tron/transaction.ts';
import { broadcastAll, type SignedTransfer } from './broadcaster.ts';
import type { ExecutorContext, ExecutorPassResult } from './executor-context.ts';
import { inThreadSigning } from './signing-pool.ts';
import * as repository from './sending-repository.ts';
import type { SignJob } from './signing-decisions.ts';
import { holdUnsignable } from './unsignable-transfers.ts';
import {
  EXPIRATION_MS,
  unsignedTransfers,
  type PrivateKeyOf,
  type SigningWindow,
  type Unsignable,
} from './unsigned-transfer.ts';

/** Transfers signed per signing transaction. */
const SIGN_CHUNK = 250;

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

/** Signs every job, commits each chunk's attempts, broadcasts each chunk while the next is signed. */
export async function signAndBroadcast(
  context: ExecutorContext,
  privateKeyOf: PrivateKeyOf,
  jobs: readonly SignJob[],
  window: SigningWindow,
  result: ExecutorPassResult,
): Promise<void> {
  const broadcasts: Promise<void>[] = [];
  try {
    for (let start = 0; start < jobs.length; start += SIGN_CHUNK) {
      const chunk = jobs.slice(start, start + SIGN_CHUNK);
      const { signed, unsignable } = await signChunk(context, chunk, privateKeyOf, window);
      await holdUnsignable(context, unsignable, window.now, result);
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

type Signed = SignedTransfer & { readonly feeLimit: bigint; readonly energy: SignJob['energy'] };

async function signChunk(
  context: ExecutorContext,
  jobs: readonly SignJob[],
  privateKeyOf: PrivateKeyOf,
  window: SigningWindow,
): Promise<{ signed: Signed[]; unsignable: Unsignable[] }> {
  const { prepared, unsignable } = unsignedTransfers(context, jobs, privateKeyOf, window);
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
  const signed = prepared.map((item, index) => ({
    transfer: item.row,
    txId: item.txId,
    hex: bytesToHex(encodeSignedTransaction(item.rawBytes, [signatures[index]!])),
    feeLimit: item.feeLimit,
    energy: item.energy,
  }));
  return { signed, unsignable };
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
        energyPlan: item.energy.plan,
        rentalSun: item.energy.rentalSun,
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

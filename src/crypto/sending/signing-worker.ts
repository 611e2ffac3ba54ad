// A worker thread of the executor's signing pool (signing-pool.ts): signs each
// txID it is sent with the key sent alongside (signTransactionId, as the
// executor's own thread would).
import { parentPort } from 'node:worker_threads';
import { signTransactionId } from '../tron/signing.ts';

export interface SigningRequest {
  readonly id: number;
  readonly privateKey: Uint8Array;
  readonly txIds: readonly string[];
}

export type SigningReply =
  { readonly id: number; readonly signatures: readonly Uint8Array[] } | { readonly id: number; readonly error: string };

parentPort?.on('message', (request: SigningRequest) => {
  try {
    const reply: SigningReply = {
      id: request.id,
      signatures: request.txIds.map((txId) => signTransactionId(txId, request.privateKey)),
    };
    parentPort!.postMessage(reply);
  } catch (error) {
    parentPort!.postMessage({ id: request.id, error: (error as Error).message } satisfies SigningReply);
  }
});

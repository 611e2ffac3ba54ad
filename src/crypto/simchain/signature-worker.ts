// A worker thread of the simulated chain's signature pool (signature-pool.ts):
// recovers the signer of each (txID, signature) it is sent, exactly as intake
// would on the main thread (recoverSignerAddress).
import { parentPort } from 'node:worker_threads';
import { recoverSignerAddress } from '../tron/signing.ts';

export interface RecoveryRequest {
  readonly id: number;
  readonly items: readonly { readonly txId: string; readonly signature: Uint8Array }[];
}

export interface RecoveryReply {
  readonly id: number;
  /** One per item, in order: the signer's address, or null when nothing recovers. */
  readonly signers: readonly (string | null)[];
}

parentPort?.on('message', (request: RecoveryRequest) => {
  const reply: RecoveryReply = {
    id: request.id,
    signers: request.items.map((item) => recoverSignerAddress(item.txId, item.signature) ?? null),
  };
  parentPort!.postMessage(reply);
});

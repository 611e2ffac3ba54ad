// Signature recovery off the simulated chain's main thread: a small pool of
// worker threads, each running recoverSignerAddress (secp256k1 public key
// recovery by libsecp256k1, about 0.3 ms: still the dearest part of taking a
// transaction in). The chain server recovers a broadcast's signature here before intake
// runs, then hands the result to intake (SimulatedChain.withRecoveredSignatures),
// so the main thread keeps answering while the signatures of other requests
// are recovered on other cores. Nothing is skipped or trusted: every signature
// is recovered from the bytes received.
import { Worker } from 'node:worker_threads';
import type { TronAddress } from '../tron/address.ts';
import type { RecoveryReply, RecoveryRequest } from './signature-worker.ts';

export interface SignaturePool {
  recover(txId: string, signature: Uint8Array): Promise<TronAddress | undefined>;
  close(): Promise<void>;
}

export function createSignaturePool(size: number, options: { readonly unref?: boolean } = {}): SignaturePool {
  if (!Number.isSafeInteger(size) || size < 1 || size > 64)
    throw new RangeError(`signature workers must be 1..64, got ${size}`);
  const pending = new Map<
    number,
    { resolve: (signer: TronAddress | undefined) => void; reject: (error: Error) => void }
  >();
  let nextId = 0;
  let closed = false;
  const owner = new Map<number, Worker>();
  const workers = Array.from({ length: size }, () => {
    const worker = new Worker(new URL('./signature-worker.ts', import.meta.url));
    if (options.unref) worker.unref();
    worker.on('message', (reply: RecoveryReply) => {
      const waiting = pending.get(reply.id);
      pending.delete(reply.id);
      waiting?.resolve((reply.signers[0] ?? undefined) as TronAddress | undefined);
    });
    worker.on('error', (error) => {
      // A worker that dies fails what it held; those broadcasts answer as a node in trouble would (HTTP 500).
      for (const [id, waiting] of pending) if (owner.get(id) === worker) waiting.reject(error);
    });
    return worker;
  });
  // Least-loaded dispatch: a slow (descheduled) worker does not collect a queue.
  const load = new Map<Worker, number>(workers.map((worker) => [worker, 0]));

  return {
    recover(txId, signature) {
      if (closed) return Promise.reject(new Error('the signature pool is closed'));
      const id = nextId++;
      let worker = workers[0]!;
      for (const candidate of workers) if (load.get(candidate)! < load.get(worker)!) worker = candidate;
      load.set(worker, load.get(worker)! + 1);
      owner.set(id, worker);
      return new Promise<TronAddress | undefined>((resolve, reject) => {
        pending.set(id, { resolve, reject });
        const request: RecoveryRequest = { id, items: [{ txId, signature }] };
        worker.postMessage(request);
      }).finally(() => {
        owner.delete(id);
        load.set(worker, load.get(worker)! - 1);
      });
    },
    async close() {
      closed = true;
      await Promise.all(workers.map((worker) => worker.terminate()));
      for (const waiting of pending.values()) waiting.reject(new Error('the signature pool is closed'));
      pending.clear();
    },
  };
}

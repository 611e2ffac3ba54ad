// Signing off the executor's main thread: noble's secp256k1 signature costs
// about 0.5-0.7 ms, and while the main thread signs a chunk it cannot send the
// previous chunk's broadcasts nor read their answers. On a worker thread the
// two overlap. The key never leaves the process (a worker thread shares it).
import { Worker } from 'node:worker_threads';
import { signTransactionId } from '../tron/signing.ts';
import type { SigningReply, SigningRequest } from './signing-worker.ts';

export interface SigningPool {
  /** One signature per txID, in order (r ‖ s ‖ v, as signTransactionId). */
  sign(privateKey: Uint8Array, txIds: readonly string[]): Promise<Uint8Array[]>;
  close(): Promise<void>;
}

/** Signs on the calling thread (the executor's default), yielding every 25 signatures so broadcasts under way progress. */
export const inThreadSigning: SigningPool = {
  async sign(privateKey, txIds) {
    const signatures: Uint8Array[] = [];
    for (const [index, txId] of txIds.entries()) {
      if (index % 25 === 24) await new Promise((resolve) => setImmediate(resolve));
      signatures.push(signTransactionId(txId, privateKey));
    }
    return signatures;
  },
  close: () => Promise.resolve(),
};

export function createSigningPool(size: number): SigningPool {
  if (!Number.isSafeInteger(size) || size < 1 || size > 64)
    throw new RangeError(`signing workers must be 1..64, got ${size}`);
  const pending = new Map<
    number,
    { resolve: (signatures: Uint8Array[]) => void; reject: (error: Error) => void; worker: Worker }
  >();
  let nextId = 0;
  let closed = false;
  const load = new Map<Worker, number>();
  const workers = Array.from({ length: size }, () => {
    const worker = new Worker(new URL('./signing-worker.ts', import.meta.url));
    // An idle pool does not keep the process alive (a worker's exit must not wait for it).
    worker.unref();
    worker.on('message', (reply: SigningReply) => {
      const waiting = pending.get(reply.id);
      pending.delete(reply.id);
      if (!waiting) return;
      if ('error' in reply) waiting.reject(new Error(`signing worker: ${reply.error}`));
      else waiting.resolve([...reply.signatures]);
    });
    worker.on('error', (error) => {
      for (const [id, waiting] of pending) {
        if (waiting.worker !== worker) continue;
        pending.delete(id);
        waiting.reject(error);
      }
    });
    load.set(worker, 0);
    return worker;
  });
  return {
    sign(privateKey, txIds) {
      if (closed) return Promise.reject(new Error('the signing pool is closed'));
      if (txIds.length === 0) return Promise.resolve([]);
      const id = nextId++;
      let worker = workers[0]!;
      for (const candidate of workers) if (load.get(candidate)! < load.get(worker)!) worker = candidate;
      load.set(worker, load.get(worker)! + 1);
      // Held while it works (the answer is awaited), let go when idle.
      worker.ref();
      return new Promise<Uint8Array[]>((resolve, reject) => {
        pending.set(id, { resolve, reject, worker });
        worker.postMessage({ id, privateKey, txIds } satisfies SigningRequest);
      }).finally(() => {
        load.set(worker, load.get(worker)! - 1);
        if (load.get(worker) === 0) worker.unref();
      });
    },
    async close() {
      closed = true;
      await Promise.all(workers.map((worker) => worker.terminate()));
      for (const waiting of pending.values()) waiting.reject(new Error('the signing pool is closed'));
      pending.clear();
    },
  };
}

// The executor's leader lease: one executor sends per chain; a crashed leader's
// lease runs out. Correctness never rests on it: a transfer's attempt number is
// claimed by a conditional UPDATE and the attempt's primary key, so two
// executors can never sign two transactions for the same transfer.
import type { ExecutorContext } from './executor-context.ts';
import * as repository from './sending-repository.ts';

const LEASE_MS = 30_000;

/** Thrown by a step that finds the lease gone: the pass ends quietly. */
export class LostLeadershipError extends Error {}

/** Takes or renews the lease; false when another executor holds it. */
export async function renewLease(context: ExecutorContext): Promise<boolean> {
  const now = context.clock.now();
  return repository.takeLease(
    context.db,
    context.chain,
    context.token,
    now,
    new Date(now.getTime() + (context.leaseMs ?? LEASE_MS)),
  );
}

/** Takes the lease for the pass, creating the chain's lease row on first use. */
export async function takeLeaseForPass(context: ExecutorContext): Promise<boolean> {
  await repository.ensureLeaseRow(context.db, context.chain, context.clock.now());
  return renewLease(context);
}

export function releaseLease(context: ExecutorContext): Promise<void> {
  return repository.releaseLease(context.db, context.chain, context.token);
}

/** Records how far the results were read; the lease lost meanwhile ends the pass. */
export async function recordScannedBlock(context: ExecutorContext, block: number): Promise<void> {
  if (!(await repository.setScannedBlock(context.db, context.chain, context.token, block, context.clock.now())))
    throw new LostLeadershipError();
}

// The idempotency module: one create-under-a-key sequence for every create operation,
// and the worker that purges records whose window is over (docs/idempotency.md).
import type { AppContext } from '../context.ts';
import type { BuiltModule } from '../gateway-module.ts';
import { createIdempotencyPurgeWorker } from './idempotency-purge-worker.ts';
import {
  createAtomically,
  createAtomicallyWith,
  findPrior,
  inIdempotentTransaction,
  recordCreated,
} from './idempotency-service.ts';

export type IdempotencyModuleDeps = Pick<AppContext, 'db' | 'clock' | 'logger' | 'health'>;

/** What other modules ask of idempotency, each inside their own transaction. */
export interface IdempotencyService {
  readonly inIdempotentTransaction: typeof inIdempotentTransaction;
  readonly findPrior: typeof findPrior;
  readonly recordCreated: typeof recordCreated;
  readonly createAtomically: typeof createAtomically;
  readonly createAtomicallyWith: typeof createAtomicallyWith;
}

export function createIdempotencyModule(deps: IdempotencyModuleDeps): BuiltModule<IdempotencyService> {
  return {
    module: { name: 'idempotency', workers: () => [createIdempotencyPurgeWorker(deps)] },
    service: { inIdempotentTransaction, findPrior, recordCreated, createAtomically, createAtomicallyWith },
  };
}

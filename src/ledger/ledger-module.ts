// The ledger module: double-entry postings other modules make inside their own
// transaction, the merchant's balance API, and the worker that voids expired reservations.
import type { AppContext } from '../context.ts';
import type { BuiltModule } from '../gateway-module.ts';
import { balanceRoutes } from './balance-routes.ts';
import {
  executeBatch,
  executeLinked,
  findTransfer,
  post,
  reserve,
  reverse,
  transfer,
  voidPending,
} from './ledger-service.ts';
import { createReservationExpiryWorker } from './reservation-expiry-worker.ts';

export type LedgerModuleDeps = Pick<AppContext, 'db' | 'clock' | 'logger' | 'health' | 'notifications'>;

/** The postings other modules make, each inside the caller's transaction. */
export interface LedgerService {
  readonly transfer: typeof transfer;
  readonly reserve: typeof reserve;
  readonly post: typeof post;
  readonly voidPending: typeof voidPending;
  readonly reverse: typeof reverse;
  readonly executeLinked: typeof executeLinked;
  readonly executeBatch: typeof executeBatch;
  readonly findTransfer: typeof findTransfer;
}

export function createLedgerModule(deps: LedgerModuleDeps): BuiltModule<LedgerService> {
  return {
    module: { name: 'ledger', routes: balanceRoutes(deps), workers: () => [createReservationExpiryWorker(deps)] },
    service: { transfer, reserve, post, voidPending, reverse, executeLinked, executeBatch, findTransfer },
  };
}

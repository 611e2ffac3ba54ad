// The custody module: on-chain holdings reconciled against the ledger per book; a
// shortfall pauses the book's signing (docs/custody.md). Its service is the pause
// check the payouts module asks before taking a payout.
import type { AppContext } from '../../context.ts';
import type { GatewayModule } from '../../gateway-module.ts';
import type { CryptoDeps } from '../chain/chain-module.ts';
import { registerCustodyMetrics } from './custody-metrics.ts';
import { registerTransferCostMetrics } from '../sending/transfer-costs.ts';
import { createCustodyReconciliationWorker } from './reconciliation-worker.ts';
import type { LedgerBook } from '../../ledger/ledger-service.ts';
import { createSigningPauseCheck, isSigningPaused, type SigningPauseCheck } from './signing-pause.ts';

export type CustodyModuleDeps = CryptoDeps & Pick<AppContext, 'notifications' | 'metrics'>;

export interface CustodyService {
  readonly signingPause: SigningPauseCheck;
  /** Whether the book's signing is paused, read from the database on every call (the executor asks once a pass). */
  isSigningPaused(book: LedgerBook): Promise<boolean>;
}

export function createCustodyModule(deps: CustodyModuleDeps): { module: GatewayModule; service: CustodyService } {
  // One cache of the books' pause state per module (it listens for their changes).
  const signingPause = createSigningPauseCheck(deps.notifications);
  // Every process serving /metrics reports the latest reconciliation, whichever worker made it.
  registerCustodyMetrics(deps);
  // And what the outgoing transfers of today cost (the custody view's daily sums).
  registerTransferCostMetrics(deps);
  return {
    module: {
      name: 'crypto-custody',
      workers: () => [createCustodyReconciliationWorker(deps)],
      close: async () => signingPause.close(),
    },
    service: { signingPause, isSigningPaused: (book) => isSigningPaused(deps.db, book) },
  };
}

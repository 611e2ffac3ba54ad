// The crypto payouts module: payouts and batch payouts from the balance (docs/payouts-api.md).
// It owns the statement batchers its creations share (creation-batches.ts) and its
// memory of committed ledger account ids (payout-ledger.ts).
import type { GatewayModule } from '../../gateway-module.ts';
import { createPayoutCreationBatches } from './creation-batches.ts';
import { createCommittedAccountIds } from './payout-ledger.ts';
import type { PayoutDeps } from './payout-service.ts';
import { payoutRoutes } from './routes/payout-routes.ts';

export type PayoutsModuleDeps = Omit<PayoutDeps, 'batches' | 'committedAccountIds'>;

export function createPayoutsModule(deps: PayoutsModuleDeps): { module: GatewayModule } {
  const batches = createPayoutCreationBatches(deps.db, deps.clock);
  const committedAccountIds = createCommittedAccountIds();
  return { module: { name: 'crypto-payouts', routes: payoutRoutes({ ...deps, batches, committedAccountIds }) } };
}

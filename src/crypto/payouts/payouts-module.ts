// The crypto payouts module: payouts and batch payouts from the balance (docs/payouts-api.md).
import type { GatewayModule } from '../../gateway-module.ts';
import type { PayoutDeps } from './payout-service.ts';
import { payoutRoutes } from './routes/payout-routes.ts';

export function createPayoutsModule(deps: PayoutDeps): { module: GatewayModule } {
  return { module: { name: 'crypto-payouts', routes: payoutRoutes(deps) } };
}

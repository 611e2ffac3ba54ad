// The crypto refunds module: deposits sent back minus the network fee (docs/refunds-and-withdrawals.md).
import type { GatewayModule } from '../../gateway-module.ts';
import type { CryptoDeps } from '../chain/chain-module.ts';
import { refundRoutes } from './routes/refund-routes.ts';

export function createRefundsModule(deps: CryptoDeps): { module: GatewayModule } {
  return { module: { name: 'crypto-refunds', routes: refundRoutes(deps) } };
}

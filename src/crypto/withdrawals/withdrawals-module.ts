// The crypto withdrawals module: cabinet withdrawals, with no worker (the cabinet and the
// CLI call withdrawal-service.ts; the sending module sends them) and one route, the
// sandbox's test helper that asks for one the way the cabinet does.
import type { GatewayModule } from '../../gateway-module.ts';
import type { CryptoDeps } from '../chain/chain-module.ts';
import { withdrawalTestHelperRoutes } from './routes/withdrawal-test-helper-routes.ts';

export function createWithdrawalsModule(deps: CryptoDeps): { module: GatewayModule } {
  return { module: { name: 'crypto-withdrawals', routes: withdrawalTestHelperRoutes(deps) } };
}

// The crypto sweeping module: deposits' USDT moved to the hot wallet (docs/sweeping.md).
import type { AppContext } from '../../context.ts';
import type { GatewayModule } from '../../gateway-module.ts';
import type { CryptoDeps } from '../chain/chain-module.ts';
import { createSweeperWorker } from './sweeping-worker.ts';

export function createSweepingModule(deps: CryptoDeps & Pick<AppContext, 'notifications'>): { module: GatewayModule } {
  return { module: { name: 'crypto-sweeping', workers: () => [createSweeperWorker(deps)] } };
}

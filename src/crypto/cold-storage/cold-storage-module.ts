// The crypto cold-storage module: the hot wallet's surplus above its ceiling, reported
// and moved to the cold address (docs/payouts.md).
import type { AppContext } from '../../context.ts';
import type { GatewayModule } from '../../gateway-module.ts';
import type { CryptoDeps } from '../chain/chain-module.ts';
import { createColdStorageWorker } from './cold-storage-worker.ts';

export function createColdStorageModule(deps: CryptoDeps & Pick<AppContext, 'metrics'>): { module: GatewayModule } {
  return { module: { name: 'crypto-cold-storage', workers: () => [createColdStorageWorker(deps)] } };
}

// The crypto receiving module: invoices, static wallets, deposits, the chain watcher,
// the test-helper routes and the hosted invoice page, over the chain module's handle.
// It owns the deposit addresses this process claimed from the pool (address-pool.ts).
import type { AppContext } from '../../context.ts';
import type { GatewayModule } from '../../gateway-module.ts';
import type { CryptoDeps } from '../chain/chain-module.ts';
import { createAddressPool } from './address-pool.ts';
import { invoicePageRoutes } from './page/invoice-page-routes.ts';
import { createAddressPoolWorker, createChainWatcherWorker, createInvoiceExpiryWorker } from './receiving-workers.ts';
import { cryptoReceivingRoutes } from './routes/crypto-routes.ts';

export type ReceivingModuleDeps = CryptoDeps & Pick<AppContext, 'notifications'>;

export function createReceivingModule(deps: ReceivingModuleDeps): { module: GatewayModule } {
  const addressPool = createAddressPool();
  return {
    module: {
      name: 'crypto',
      routes: cryptoReceivingRoutes({ ...deps, addressPool }),
      publicRoutes: invoicePageRoutes(deps),
      workers: () => [createChainWatcherWorker(deps), createInvoiceExpiryWorker(deps), createAddressPoolWorker(deps)],
    },
  };
}

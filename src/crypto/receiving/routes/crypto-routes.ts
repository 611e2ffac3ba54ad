// Every /v1 route of crypto receiving, as the one plugin the receiving module mounts.
import type { ModuleRoutes } from '../../../gateway-module.ts';
import type { CryptoDeps } from '../../chain/chain-module.ts';
import type { AddressPoolDeps } from '../address-pool.ts';
import { chainTestHelperRoutes } from './chain-test-helper-routes.ts';
import { invoiceRoutes } from './invoice-routes.ts';
import { invoiceTestHelperRoutes } from './invoice-test-helper-routes.ts';
import { walletRoutes } from './wallet-routes.ts';

export const cryptoReceivingRoutes =
  (deps: CryptoDeps & AddressPoolDeps): ModuleRoutes =>
  async (app) => {
    await app.register(invoiceRoutes(deps));
    await app.register(walletRoutes(deps));
    await app.register(chainTestHelperRoutes(deps));
    await app.register(invoiceTestHelperRoutes(deps));
  };

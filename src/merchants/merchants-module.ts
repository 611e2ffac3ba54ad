// The merchants module: merchants, shops and API keys; GET /v1/account.
import type { AppContext } from '../context.ts';
import type { BuiltModule } from '../gateway-module.ts';
import { accountRoutes } from './account-routes.ts';
import { countMerchants } from './merchant-repository.ts';
import { createMerchant, findShopProfile, type CreateMerchantInput, type CreatedMerchant } from './merchant-service.ts';

export type MerchantsModuleDeps = Pick<AppContext, 'db' | 'clock' | 'keyring' | 'notifications'>;

/** What other modules and the runtime ask of merchants. */
export interface MerchantsService {
  countMerchants(): Promise<number>;
  createMerchant(input: CreateMerchantInput): Promise<CreatedMerchant>;
  /** A shop's merchant, name and mode, inside the caller's transaction or not. */
  readonly findShopProfile: typeof findShopProfile;
}

export function createMerchantsModule(deps: MerchantsModuleDeps): BuiltModule<MerchantsService> {
  return {
    module: { name: 'merchants', routes: accountRoutes(deps) },
    service: {
      countMerchants: () => countMerchants(deps.db),
      createMerchant: (input) => createMerchant(deps, input),
      findShopProfile,
    },
  };
}

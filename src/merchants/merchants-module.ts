// The merchants module: merchants, shops and API keys; GET /v1/account.
import type { AppContext } from '../context.ts';
import type { BuiltModule } from '../gateway-module.ts';
import type { ApiKeyAuthenticator, ApiPrincipal } from '../http/authentication.ts';
import { accountRoutes } from './account-routes.ts';
import { createApiKeyCache, type ApiKeyCache } from './api-key-cache.ts';
import { createApiKeyLastUse } from './api-key-last-use.ts';
import { countMerchants } from './merchant-repository.ts';
import {
  authenticateApiKey,
  createMerchant,
  findShopProfile,
  type CreateMerchantInput,
  type CreatedMerchant,
} from './merchant-service.ts';

export type MerchantsModuleDeps = Pick<AppContext, 'db' | 'clock' | 'keyring' | 'notifications'>;

/** What other modules and the runtime ask of merchants. */
export interface MerchantsService {
  countMerchants(): Promise<number>;
  createMerchant(input: CreateMerchantInput): Promise<CreatedMerchant>;
  /** A shop's merchant, name and mode, inside the caller's transaction or not. */
  readonly findShopProfile: typeof findShopProfile;
  /** The bearer key's principal, from the cache of keys that authenticated (api-key-cache.ts) or the database. */
  readonly authenticate: ApiKeyAuthenticator;
}

export function createMerchantsModule(deps: MerchantsModuleDeps): BuiltModule<MerchantsService> {
  // Made on the first authentication (a worker-process authenticates nothing), and only with
  // notifications: without them nothing would tell the cache of a revocation.
  let cache: ApiKeyCache<ApiPrincipal> | undefined;
  const keyCache = () =>
    (cache ??= deps.notifications && createApiKeyCache<ApiPrincipal>(deps.notifications, deps.clock));
  const lastUse = createApiKeyLastUse(deps.db, deps.clock);
  return {
    module: { name: 'merchants', routes: accountRoutes(deps), close: async () => cache?.close() },
    service: {
      countMerchants: () => countMerchants(deps.db),
      createMerchant: (input) => createMerchant(deps, input),
      findShopProfile,
      authenticate: (apiKey) => authenticateApiKey(deps.db, apiKey, keyCache(), lastUse),
    },
  };
}

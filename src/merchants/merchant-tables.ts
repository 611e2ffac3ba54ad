import type { Generated } from 'kysely';
import type { ApiKeyScope } from '../http/api-scopes.ts';

export type ShopMode = 'sandbox' | 'live';

export interface MerchantTables {
  merchants: {
    id: string;
    name: string;
    email: string;
    created_at: Date;
  };
  shops: {
    id: string;
    merchant_id: string;
    name: string;
    mode: Generated<ShopMode>;
    created_at: Date;
  };
  api_keys: {
    id: string;
    shop_id: string;
    key_hash: Uint8Array;
    key_prefix: string;
    scopes: ApiKeyScope[];
    created_at: Date;
    revoked_at: Date | null;
    /** Chosen by people (migration 0033); '' for keys made before names. */
    name: Generated<string>;
    /** Written at most once a minute per key (api-key-last-use.ts). */
    last_used_at: Generated<Date | null>;
  };
}

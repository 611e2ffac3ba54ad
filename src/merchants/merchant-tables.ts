import type { Generated } from 'kysely';

export type ShopMode = 'sandbox' | 'live';
export type ApiKeyScope = 'payments' | 'crypto' | 'payouts' | 'webhooks' | 'read';
export const API_KEY_SCOPES: readonly ApiKeyScope[] = ['payments', 'crypto', 'payouts', 'webhooks', 'read'];

export interface MerchantTables {
  merchants: {
    id: string;
    name: string;
    email: string;
    password_hash: string | null;
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
  };
}

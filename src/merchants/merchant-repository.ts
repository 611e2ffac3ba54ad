// SQL of the merchants module: merchants, shops and API keys.
import type { Insertable, Selectable } from 'kysely';
import type { Executor } from '../db/transaction.ts';
import type { ApiKeyScope } from '../http/api-scopes.ts';
import type { MerchantTables, ShopMode } from './merchant-tables.ts';

export type ShopRow = Selectable<MerchantTables['shops']>;

export async function insertMerchant(
  db: Executor<MerchantTables>,
  row: Insertable<MerchantTables['merchants']>,
): Promise<void> {
  await db.insertInto('merchants').values(row).execute();
}

export async function findMerchant(
  db: Executor<MerchantTables>,
  merchantId: string,
): Promise<{ id: string; name: string } | undefined> {
  return db.selectFrom('merchants').select(['id', 'name']).where('id', '=', merchantId).executeTakeFirst();
}

export async function insertShop(
  db: Executor<MerchantTables>,
  row: Insertable<MerchantTables['shops']>,
): Promise<void> {
  await db.insertInto('shops').values(row).execute();
}

export async function insertApiKey(
  db: Executor<MerchantTables>,
  row: Insertable<MerchantTables['api_keys']>,
): Promise<void> {
  await db.insertInto('api_keys').values(row).execute();
}

export async function findShop(db: Executor<MerchantTables>, shopId: string): Promise<ShopRow | undefined> {
  return db.selectFrom('shops').selectAll().where('id', '=', shopId).executeTakeFirst();
}

export async function countMerchants(db: Executor<MerchantTables>): Promise<number> {
  const row = await db
    .selectFrom('merchants')
    .select((eb) => eb.fn.countAll<bigint>().as('count'))
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

export interface ApiKeyWithShop {
  readonly keyId: string;
  readonly keyHash: Uint8Array;
  readonly scopes: ApiKeyScope[];
  readonly revokedAt: Date | null;
  readonly shopId: string;
  readonly shopMode: ShopMode;
  readonly merchantId: string;
}

export async function findApiKeyByHash(
  db: Executor<MerchantTables>,
  keyHash: Uint8Array,
): Promise<ApiKeyWithShop | undefined> {
  const row = await db
    .selectFrom('api_keys')
    .innerJoin('shops', 'shops.id', 'api_keys.shop_id')
    .select([
      'api_keys.id as keyId',
      'api_keys.key_hash as keyHash',
      'api_keys.scopes as scopes',
      'api_keys.revoked_at as revokedAt',
      'shops.id as shopId',
      'shops.mode as shopMode',
      'shops.merchant_id as merchantId',
    ])
    .where('api_keys.key_hash', '=', keyHash)
    .executeTakeFirst();
  return row;
}

/** Marks a key revoked; returns false when no such key exists. Revoking twice keeps the first time. */
export async function revokeApiKey(db: Executor<MerchantTables>, keyId: string, at: Date): Promise<boolean> {
  const result = await db
    .updateTable('api_keys')
    .set((eb) => ({ revoked_at: eb.fn.coalesce('revoked_at', eb.val(at)) }))
    .where('id', '=', keyId)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

export function merchantsByIds(
  db: Executor<MerchantTables>,
  merchantIds: readonly string[],
): Promise<Array<{ id: string; name: string }>> {
  if (merchantIds.length === 0) return Promise.resolve([]);
  return db.selectFrom('merchants').select(['id', 'name']).where('id', 'in', merchantIds).execute();
}

export function shopsOfMerchant(db: Executor<MerchantTables>, merchantId: string): Promise<ShopRow[]> {
  return db.selectFrom('shops').selectAll().where('merchant_id', '=', merchantId).orderBy('created_at').execute();
}

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

/** Marks a key revoked; returns its shop and whether this call revoked it (revoking twice keeps the first time). */
export async function revokeApiKey(
  db: Executor<MerchantTables>,
  keyId: string,
  at: Date,
): Promise<{ shopId: string; merchantId: string; newly: boolean } | undefined> {
  const key = await db
    .selectFrom('api_keys')
    .innerJoin('shops', 'shops.id', 'api_keys.shop_id')
    .select(['api_keys.shop_id as shopId', 'shops.merchant_id as merchantId', 'api_keys.revoked_at as revokedAt'])
    .where('api_keys.id', '=', keyId)
    .forUpdate()
    .executeTakeFirst();
  if (!key) return undefined;
  if (key.revokedAt === null)
    await db.updateTable('api_keys').set({ revoked_at: at }).where('id', '=', keyId).execute();
  return { shopId: key.shopId, merchantId: key.merchantId, newly: key.revokedAt === null };
}

export interface ApiKeyListing {
  readonly id: string;
  readonly name: string;
  readonly key_prefix: string;
  readonly scopes: ApiKeyScope[];
  readonly created_at: Date;
  readonly last_used_at: Date | null;
  readonly revoked_at: Date | null;
}

/** A shop's keys, newest first (never their hashes). */
export function apiKeysOfShop(db: Executor<MerchantTables>, shopId: string): Promise<ApiKeyListing[]> {
  return db
    .selectFrom('api_keys')
    .select(['id', 'name', 'key_prefix', 'scopes', 'created_at', 'last_used_at', 'revoked_at'])
    .where('shop_id', '=', shopId)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .execute();
}

/** Moves a key's last use forward to `at` (never back: instances may write out of order). */
export async function touchApiKey(db: Executor<MerchantTables>, keyId: string, at: Date): Promise<void> {
  await db
    .updateTable('api_keys')
    .set({ last_used_at: at })
    .where('id', '=', keyId)
    .where((eb) => eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<', at)]))
    .execute();
}

export async function renameShop(db: Executor<MerchantTables>, shopId: string, name: string): Promise<void> {
  await db.updateTable('shops').set({ name }).where('id', '=', shopId).execute();
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

// Merchants, shops and API keys: creation, key issuance and revocation, and the
// lookup that turns a bearer key into the shop it acts for.
import type { Clock } from '../clock.ts';
import { InvalidRequestError, NotFoundError, UnauthorizedError } from '../errors.ts';
import { newId } from '../ids.ts';
import { inTransaction, isUniqueViolation, type Db, type Executor, type Tx } from '../db/transaction.ts';
import { apiKeyHashesEqual, apiKeyPrefix, generateApiKey, hashApiKey, isWellFormedApiKey } from './api-key-secrets.ts';
import { API_KEY_SCOPES, type ApiKeyScope } from '../http/api-scopes.ts';
import type { ApiPrincipal } from '../http/authentication.ts';
import type { ShopMode } from './merchant-tables.ts';
import * as repository from './merchant-repository.ts';
import type { Keyring } from '../kms/keyring.ts';
import { API_KEYS_CHANNEL, type Notifications } from '../db/notifications.ts';
import { apiKeyChanged, type ApiKeyCache } from './api-key-cache.ts';
import { createWebhookEndpoint } from '../webhooks/webhook-secrets.ts';
import { OPERATOR, recordAudit, type AuditActor } from '../audit/audit-service.ts';
import type { ApiKeyLastUse } from './api-key-last-use.ts';

export interface MerchantServiceDeps {
  readonly db: Db;
  readonly clock: Clock;
  /** Seals the shop's webhook signing secret before it is stored. */
  readonly keyring: Keyring;
  /** When present, a revocation reaches this process's key cache before `revokeApiKey` returns. */
  readonly notifications?: Notifications | undefined;
}

export interface CreateMerchantInput {
  readonly name: string;
  readonly email: string;
  readonly shopName?: string | undefined;
  readonly mode?: ShopMode | undefined;
}

export interface CreatedMerchant {
  readonly merchant_id: string;
  readonly shop_id: string;
  readonly api_key: string;
  readonly webhook_secret: string;
}

export interface CreateShopInput {
  readonly merchantId: string;
  readonly name?: string | undefined;
  readonly mode: ShopMode;
  /** Who the audit log names (the operator when not given: the CLI). */
  readonly actor?: AuditActor | undefined;
}

const SHOP_NAME_MAX = 200;
export const API_KEY_NAME_MAX = 100;

/**
 * Another shop for an existing merchant, e.g. a live shop beside the sandbox one.
 * Its key sees the merchant's money in the book of its own mode only.
 */
export async function createShop(deps: MerchantServiceDeps, input: CreateShopInput): Promise<CreatedMerchant> {
  return inTransaction(deps.db, async (tx) => {
    const merchant = await repository.findMerchant(tx, input.merchantId);
    if (!merchant) throw new NotFoundError(`No merchant ${input.merchantId}.`);
    const name = input.name?.trim() || merchant.name;
    if (name.length > SHOP_NAME_MAX) throw new InvalidRequestError('name must be 1 to 200 characters');
    const created = await openShop(tx, deps, { merchantId: merchant.id, name, mode: input.mode });
    await recordAudit(tx, deps.clock, {
      actor: input.actor ?? OPERATOR,
      action: 'shop.created',
      merchantId: merchant.id,
      shopId: created.shop_id,
      target: created.shop_id,
      details: { name, mode: input.mode },
    });
    return created;
  });
}

/** Renames a shop of the merchant (a shop of another merchant is not found). */
export async function renameShop(
  deps: Pick<MerchantServiceDeps, 'db' | 'clock'>,
  input: { merchantId: string; shopId: string; name: string; actor: AuditActor },
): Promise<void> {
  const name = input.name.trim();
  if (name.length < 1 || name.length > SHOP_NAME_MAX) throw new InvalidRequestError('name must be 1 to 200 characters');
  await inTransaction(deps.db, async (tx) => {
    const shop = await repository.findShop(tx, input.shopId);
    if (!shop || shop.merchant_id !== input.merchantId) throw new NotFoundError(`No shop ${input.shopId}.`);
    if (shop.name === name) return;
    await repository.renameShop(tx, shop.id, name);
    await recordAudit(tx, deps.clock, {
      actor: input.actor,
      action: 'shop.renamed',
      merchantId: shop.merchant_id,
      shopId: shop.id,
      target: shop.id,
      details: { from: shop.name, to: name },
    });
  });
}

/** A shop row, its webhook endpoint and an API key with every scope, inside the caller's transaction. */
async function openShop(
  tx: Tx,
  deps: MerchantServiceDeps,
  shop: { merchantId: string; name: string; mode: ShopMode },
): Promise<CreatedMerchant> {
  const shopId = newId('shop');
  await repository.insertShop(tx, {
    id: shopId,
    merchant_id: shop.merchantId,
    name: shop.name,
    mode: shop.mode,
    created_at: deps.clock.now(),
  });
  const webhookSecret = await createWebhookEndpoint(tx, deps.keyring, shopId);
  const key = await issueApiKey(tx, deps.clock, shopId, shop.mode, API_KEY_SCOPES);
  return { merchant_id: shop.merchantId, shop_id: shopId, api_key: key.api_key, webhook_secret: webhookSecret };
}

export interface CreatedApiKey {
  readonly key_id: string;
  readonly api_key: string;
}

/** An address with one @ and a dot in its domain: enough to catch a typo, not a validator of RFC 5322. */
export const EMAIL_PATTERN = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

export function parseScopes(list: string): ApiKeyScope[] {
  const scopes = list
    .split(',')
    .map((scope) => scope.trim())
    .filter(Boolean);
  if (scopes.length === 0)
    throw new InvalidRequestError(`scopes must list at least one of ${API_KEY_SCOPES.join(', ')}`);
  for (const scope of scopes) {
    if (!API_KEY_SCOPES.includes(scope as ApiKeyScope)) {
      throw new InvalidRequestError(`unknown scope "${scope}"; known scopes: ${API_KEY_SCOPES.join(', ')}`);
    }
  }
  return [...new Set(scopes)] as ApiKeyScope[];
}

export type { ShopMode } from './merchant-tables.ts';

/** What other modules may know of a shop: its merchant (whose money), its name and its mode (which book). */
export interface ShopProfile {
  readonly shopId: string;
  readonly merchantId: string;
  readonly name: string;
  readonly mode: ShopMode;
}

export async function findShopProfile(db: Executor, shopId: string): Promise<ShopProfile | undefined> {
  const shop = await repository.findShop(db, shopId);
  return shop && { shopId: shop.id, merchantId: shop.merchant_id, name: shop.name, mode: shop.mode };
}

/**
 * A merchant with its first shop and key. `alsoInTransaction` runs in the same transaction once the
 * merchant exists (the cabinet adds its owner there, so a failed owner leaves no merchant behind).
 */
/** The names of these merchants, by id (the cabinet's merchant switch). */
export async function merchantNames(db: Executor, merchantIds: readonly string[]): Promise<Map<string, string>> {
  const rows = await repository.merchantsByIds(db, merchantIds);
  return new Map(rows.map((row) => [row.id, row.name]));
}

/** Every shop of a merchant, oldest first. */
export async function shopsOfMerchant(db: Executor, merchantId: string): Promise<ShopProfile[]> {
  const rows = await repository.shopsOfMerchant(db, merchantId);
  return rows.map((shop) => ({ shopId: shop.id, merchantId: shop.merchant_id, name: shop.name, mode: shop.mode }));
}

export async function createMerchant(
  deps: MerchantServiceDeps,
  input: CreateMerchantInput,
  alsoInTransaction?: (tx: Executor, merchantId: string) => Promise<void>,
): Promise<CreatedMerchant> {
  const name = input.name.trim();
  const email = input.email.trim();
  if (name.length < 1 || name.length > 200) throw new InvalidRequestError('name must be 1 to 200 characters');
  if (!EMAIL_PATTERN.test(email) || email.length > 320)
    throw new InvalidRequestError(`"${email}" is not an email address`);
  const mode = input.mode ?? 'sandbox';
  const now = deps.clock.now();
  const merchantId = newId('merchant');
  try {
    return await inTransaction(deps.db, async (tx) => {
      await repository.insertMerchant(tx, {
        id: merchantId,
        name,
        email,
        created_at: now,
      });
      const created = await openShop(tx, deps, { merchantId, name: input.shopName?.trim() || name, mode });
      await alsoInTransaction?.(tx, merchantId);
      return created;
    });
  } catch (error) {
    if (isUniqueViolation(error)) throw new InvalidRequestError(`a merchant with email ${email} already exists`);
    throw error;
  }
}

async function issueApiKey(
  tx: Executor,
  clock: Clock,
  shopId: string,
  mode: ShopMode,
  scopes: readonly ApiKeyScope[],
  name = '',
): Promise<CreatedApiKey> {
  const apiKey = generateApiKey(mode);
  const keyId = newId('apiKey');
  await repository.insertApiKey(tx, {
    id: keyId,
    shop_id: shopId,
    key_hash: hashApiKey(apiKey),
    key_prefix: apiKeyPrefix(apiKey),
    scopes: [...scopes],
    name,
    created_at: clock.now(),
    revoked_at: null,
  });
  return { key_id: keyId, api_key: apiKey };
}

export interface ApiKeyOptions {
  /** What people call the key (up to 100 characters). */
  readonly name?: string | undefined;
  /** Who the audit log names (the operator when not given: the CLI). */
  readonly actor?: AuditActor | undefined;
}

export async function createApiKey(
  deps: MerchantServiceDeps,
  shopId: string,
  scopes: readonly ApiKeyScope[],
  options: ApiKeyOptions = {},
): Promise<CreatedApiKey> {
  const name = (options.name ?? '').trim();
  if (name.length > API_KEY_NAME_MAX) throw new InvalidRequestError('name must be at most 100 characters');
  if (scopes.length === 0)
    throw new InvalidRequestError(`scopes must list at least one of ${API_KEY_SCOPES.join(', ')}`);
  return inTransaction(deps.db, async (tx) => {
    const shop = await repository.findShop(tx, shopId);
    if (!shop) throw new NotFoundError(`no shop ${shopId}`);
    const key = await issueApiKey(tx, deps.clock, shopId, shop.mode, scopes, name);
    await recordAudit(tx, deps.clock, {
      actor: options.actor ?? OPERATOR,
      action: 'api_key.created',
      merchantId: shop.merchant_id,
      shopId,
      target: key.key_id,
      details: { name, scopes: [...scopes] },
    });
    return key;
  });
}

/**
 * Revokes a key: the API refuses it at once on this process, within a notification on the others.
 * With `shopId`, a key of another shop is not found (the cabinet revokes within one shop).
 */
export async function revokeApiKey(
  deps: MerchantServiceDeps,
  keyId: string,
  options: { readonly shopId?: string | undefined; readonly actor?: AuditActor | undefined } = {},
): Promise<void> {
  await inTransaction(deps.db, async (tx) => {
    const revoked = await repository.revokeApiKey(tx, keyId, deps.clock.now());
    if (!revoked || (options.shopId !== undefined && revoked.shopId !== options.shopId))
      throw new NotFoundError(`no API key ${keyId}`);
    if (!revoked.newly) return;
    await recordAudit(tx, deps.clock, {
      actor: options.actor ?? OPERATOR,
      action: 'api_key.revoked',
      merchantId: revoked.merchantId,
      shopId: revoked.shopId,
      target: keyId,
    });
  });
  // Other processes hear of it from the database (migration 0014's trigger).
  deps.notifications?.deliverLocally(API_KEYS_CHANNEL, apiKeyChanged(keyId));
}

export type { ApiKeyListing } from './merchant-repository.ts';

/** A shop's keys for the cabinet's list: name, prefix, scopes, dates; never a secret or hash. */
export function apiKeysOfShop(db: Executor, shopId: string): Promise<repository.ApiKeyListing[]> {
  return repository.apiKeysOfShop(db, shopId);
}

/**
 * Resolves a bearer key to its principal, or throws 401 for a malformed, unknown or revoked key.
 * With a cache, a key that authenticated recently is not looked up again (api-key-cache.ts).
 */
export async function authenticateApiKey(
  db: Executor,
  apiKey: string,
  cache?: ApiKeyCache<ApiPrincipal>,
  lastUse?: ApiKeyLastUse,
): Promise<ApiPrincipal> {
  if (!isWellFormedApiKey(apiKey)) throw new UnauthorizedError('The API key is malformed.');
  const presentedHash = hashApiKey(apiKey);
  const cached = cache?.get(presentedHash);
  if (cached) {
    await lastUse?.used(cached.keyId);
    return cached;
  }
  const ticket = cache?.beginLookup();
  const row = await repository.findApiKeyByHash(db, presentedHash);
  if (!row || !apiKeyHashesEqual(row.keyHash, presentedHash)) throw new UnauthorizedError('The API key is not valid.');
  if (row.revokedAt !== null) throw new UnauthorizedError('The API key has been revoked.');
  // Frozen: one object serves every request of the key while it is cached.
  const principal: ApiPrincipal = Object.freeze({
    keyId: row.keyId,
    shopId: row.shopId,
    merchantId: row.merchantId,
    shopMode: row.shopMode,
    scopes: Object.freeze([...row.scopes]),
  });
  if (cache && ticket) cache.store(presentedHash, principal, ticket);
  await lastUse?.used(principal.keyId);
  return principal;
}

// Webhook signing secrets at rest: sealed by envelope encryption (src/kms/),
// bound to their shop, so neither the database, its WAL nor a backup holds a
// secret that can sign a webhook. Opened only to sign, with a small cache so the
// delivery path does not decrypt the same secret for every attempt.
import { LRUCache } from 'lru-cache';
import type { Db, Tx } from '../db/transaction.ts';
import { inTransaction } from '../db/transaction.ts';
import { needsRewrap, open, rewrap, seal } from '../kms/envelope.ts';
import type { Keyring } from '../kms/keyring.ts';
import { generateSigningSecret } from './signing.ts';
import * as repository from './webhook-repository.ts';

const PLAINTEXT_PREFIX = 'whsec_';
const OPENED_CACHE_MAX = 1_000;
const BATCH = 200;

const context = (shopId: string) => `webhook_secret:${shopId}`;

export function sealWebhookSecret(keyring: Keyring, shopId: string, secret: string): string {
  return seal(keyring, secret, context(shopId));
}

export function openWebhookSecret(keyring: Keyring, shopId: string, sealed: string): string {
  return open(keyring, sealed, context(shopId));
}

/** Opens a shop's sealed secret to sign with. */
export type WebhookSecretOpener = (shopId: string, sealed: string) => string;

/**
 * An opener that keeps the secrets it opened (the oldest dropped past OPENED_CACHE_MAX), so the
 * delivery path does not decrypt the same secret for every attempt. Made by whoever signs, with
 * the keyring it signs with: a cached secret is served only to that keyring.
 */
export function createWebhookSecretOpener(keyring: Keyring): WebhookSecretOpener {
  const opened = new LRUCache<string, string>({ max: OPENED_CACHE_MAX });
  return (shopId, sealed) => {
    const cacheKey = `${shopId}\u0000${sealed}`;
    const cached = opened.get(cacheKey);
    if (cached !== undefined) return cached;
    const secret = openWebhookSecret(keyring, shopId, sealed);
    opened.set(cacheKey, secret);
    return secret;
  };
}

/**
 * A new shop's webhook endpoint, inside the caller's transaction (merchants
 * creates shops): a fresh signing secret, stored sealed. Returns the secret,
 * which the caller shows the merchant once.
 */
export async function createWebhookEndpoint(tx: Tx, keyring: Keyring, shopId: string): Promise<string> {
  const secret = generateSigningSecret();
  await repository.insertEndpoint(tx, shopId, sealWebhookSecret(keyring, shopId, secret));
  return secret;
}

/** Seals secrets written in clear by versions before sealing existed; returns how many shops it changed. Runs at start. */
export async function sealPlaintextWebhookSecrets(db: Db, keyring: Keyring): Promise<number> {
  return transformStoredSecrets(db, (shopId, stored) =>
    stored.startsWith(PLAINTEXT_PREFIX) ? sealWebhookSecret(keyring, shopId, stored) : stored,
  );
}

/** After a root key rotation: re-wraps every secret's data key under the current root key; returns how many shops it changed. */
export async function rewrapWebhookSecrets(db: Db, keyring: Keyring): Promise<number> {
  return transformStoredSecrets(db, (_shopId, stored) =>
    needsRewrap(keyring, stored) ? rewrap(keyring, stored) : stored,
  );
}

async function transformStoredSecrets(db: Db, transform: (shopId: string, stored: string) => string): Promise<number> {
  let changed = 0;
  let after = '';
  for (;;) {
    const shops = await repository.listShopSecrets(db, after, BATCH);
    if (shops.length === 0) return changed;
    for (const shop of shops) {
      const secret = transform(shop.id, shop.webhook_secret);
      const previous = shop.previous_webhook_secret === null ? null : transform(shop.id, shop.previous_webhook_secret);
      if (secret === shop.webhook_secret && previous === shop.previous_webhook_secret) continue;
      // Compare-and-set: a rotation that ran meanwhile wins, and this shop is picked up next time.
      const updated = await inTransaction(db, (tx) =>
        repository.replaceShopSecrets(tx, shop.id, {
          from: shop,
          to: { webhook_secret: secret, previous_webhook_secret: previous },
        }),
      );
      if (updated) changed++;
    }
    after = shops.at(-1)!.id;
  }
}

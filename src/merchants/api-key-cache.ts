// The in-process cache of authenticated API keys, so that a request does not
// wait for a database lookup of its key. It must never let a revoked key in for
// longer than a second, on any instance:
// - every change of a key or its shop (revocation, scopes, the shop's mode)
//   sends a notification (migration 0014's triggers) that drops the entries of
//   that key or shop here, on every instance, as soon as it commits;
// - while the notifications' connection is down (some may be lost), an entry is
//   trusted for at most a second; when it comes back, everything is dropped;
// - otherwise an entry is trusted for TRUSTED_WHILE_LISTENING_MS at most, a
//   backstop against a notification lost without the connection dropping;
// - a lookup that overlapped any invalidation is not stored (it may have read
//   the row just before the change committed).
// Ages are measured on the gateway's clock, which tests drive.
// Only keys that authenticated are stored, keyed by the key's SHA-256 (never the
// key itself), in a bounded LRU: unknown or revoked keys never take a place.
import type { Clock } from '../clock.ts';
import { API_KEYS_CHANNEL, type Notifications } from '../db/notifications.ts';
import { createNotifiedCache, type LookupTicket } from '../db/notified-cache.ts';

const CACHED_KEYS_MAX = 10_000;
export const TRUSTED_WHILE_LISTENING_MS = 5_000;
export const TRUSTED_WHILE_NOT_LISTENING_MS = 1_000;

/** The notification payloads of migration 0014 (`key:<id>`, `shop:<id>`). */
export const apiKeyChanged = (keyId: string): string => `key:${keyId}`;
const shopChanged = (shopId: string): string => `shop:${shopId}`;

/** What a cached key stands for; kept to what invalidation needs to match. */
export interface CachedKey {
  readonly keyId: string;
  readonly shopId: string;
}

export interface ApiKeyCache<T extends CachedKey> {
  /** The entry for a key hash, when present and still trusted. */
  get(keyHash: Uint8Array): T | undefined;
  /** Call before reading the key from the database; hand the ticket to `store`. */
  beginLookup(): LookupTicket;
  /** Stores what a lookup found, unless something was invalidated since it began; it ages from then. */
  store(keyHash: Uint8Array, value: T, ticket: LookupTicket): void;
  readonly size: number;
  close(): void;
}

export function createApiKeyCache<T extends CachedKey>(
  notifications: Notifications,
  clock: Clock,
  options: { readonly maxEntries?: number } = {},
): ApiKeyCache<T> {
  const cache = createNotifiedCache<T>(notifications, {
    channel: API_KEYS_CHANNEL,
    tagsOf: (value) => [apiKeyChanged(value.keyId), shopChanged(value.shopId)],
    maxEntries: options.maxEntries ?? CACHED_KEYS_MAX,
    trustedWhileListeningMs: TRUSTED_WHILE_LISTENING_MS,
    trustedWhileNotListeningMs: TRUSTED_WHILE_NOT_LISTENING_MS,
    nowMs: () => clock.now().getTime(),
  });
  // The key's hash, never the key, names its entry.
  const cacheKey = (keyHash: Uint8Array) => Buffer.from(keyHash).toString('base64');
  return {
    get: (keyHash) => cache.get(cacheKey(keyHash)),
    beginLookup: () => cache.beginLookup(),
    store: (keyHash, value, ticket) => cache.store(cacheKey(keyHash), value, ticket),
    get size() {
      return cache.size;
    },
    close: () => cache.close(),
  };
}

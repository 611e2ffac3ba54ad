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
// Only keys that authenticated are stored, keyed by the key's SHA-256 (never the
// key itself), in a bounded LRU: unknown or revoked keys never take a place.
import { LRUCache } from 'lru-cache';
import { performance } from 'node:perf_hooks';
import { API_KEYS_CHANNEL, type Notifications } from '../db/notifications.ts';

export const CACHED_KEYS_MAX = 10_000;
export const TRUSTED_WHILE_LISTENING_MS = 5_000;
export const TRUSTED_WHILE_NOT_LISTENING_MS = 1_000;

/** The notification payloads of migration 0014 (`key:<id>`, `shop:<id>`). */
export const apiKeyChanged = (keyId: string): string => `key:${keyId}`;
export const shopChanged = (shopId: string): string => `shop:${shopId}`;

/** What a cached key stands for; kept to what invalidation needs to match. */
export interface CachedKey {
  readonly keyId: string;
  readonly shopId: string;
}

/** Taken before a lookup reads the database. */
export interface LookupTicket {
  readonly generation: number;
  readonly startedAtMs: number;
}

interface Entry<T> {
  readonly value: T;
  readonly cachedAtMs: number;
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
  options: { readonly maxEntries?: number; readonly nowMs?: () => number } = {},
): ApiKeyCache<T> {
  const nowMs = options.nowMs ?? (() => performance.now());
  const entries = new LRUCache<string, Entry<T>>({ max: options.maxEntries ?? CACHED_KEYS_MAX });
  /** Counts invalidations; a lookup that saw it change stores nothing. */
  let generation = 0;

  function dropWhere(matches: (value: T) => boolean): void {
    generation += 1;
    for (const [hash, entry] of entries.entries()) if (matches(entry.value)) entries.delete(hash);
  }

  function dropAll(): void {
    generation += 1;
    entries.clear();
  }

  const unsubscribe = [
    notifications.subscribe(API_KEYS_CHANNEL, (payload) => {
      const separator = payload.indexOf(':');
      const kind = payload.slice(0, separator);
      const id = payload.slice(separator + 1);
      if (kind === 'key') dropWhere((value) => value.keyId === id);
      else if (kind === 'shop') dropWhere((value) => value.shopId === id);
      else dropAll();
    }),
    notifications.onListeningChange(dropAll),
  ];

  const cacheKey = (keyHash: Uint8Array) => Buffer.from(keyHash).toString('base64');

  return {
    get(keyHash) {
      const key = cacheKey(keyHash);
      const entry = entries.get(key);
      if (!entry) return undefined;
      const trustedMs = notifications.listening ? TRUSTED_WHILE_LISTENING_MS : TRUSTED_WHILE_NOT_LISTENING_MS;
      if (nowMs() - entry.cachedAtMs <= trustedMs) return entry.value;
      entries.delete(key);
      return undefined;
    },
    beginLookup: () => ({ generation, startedAtMs: nowMs() }),
    store(keyHash, value, ticket) {
      if (ticket.generation !== generation) return;
      entries.set(cacheKey(keyHash), { value, cachedAtMs: ticket.startedAtMs });
    },
    get size() {
      return entries.size;
    },
    close() {
      for (const stop of unsubscribe) stop();
      entries.clear();
    },
  };
}

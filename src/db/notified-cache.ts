// An in-process cache whose entries the database's notifications invalidate
// (db/notifications.ts), for rows read on every request that change rarely
// (a shop's method settings). Each entry carries tags; a notification whose
// payload equals a tag drops the entries carrying it, on every instance, as
// soon as the change commits. While the listening connection is down
// (notifications may be lost) an entry is trusted only briefly, and when it
// comes back everything is dropped. A lookup that overlapped an invalidation
// stores nothing: it may have read the row just before the change committed.
// Ages are read from `nowMs` (the gateway's clock where the owner passes it, so
// tests drive it); an entry that seems to come from the future after the clock
// was set back is not trusted.
import { LRUCache } from 'lru-cache';
import { performance } from 'node:perf_hooks';
import type { NotificationChannel, Notifications } from './notifications.ts';

/** Taken before a lookup reads the database; handed to `store`. */
export interface LookupTicket {
  readonly generation: number;
  readonly startedAtMs: number;
}

export interface NotifiedCacheOptions<V> {
  readonly channel: NotificationChannel;
  /** The notification payloads that drop this value, e.g. `shop:<id>`. */
  readonly tagsOf: (value: V) => readonly string[];
  readonly maxEntries: number;
  /** Backstop against a notification lost while the connection stayed up. */
  readonly trustedWhileListeningMs: number;
  /** How stale an entry may be while notifications can be missed. */
  readonly trustedWhileNotListeningMs: number;
  readonly nowMs?: () => number;
}

export interface NotifiedCache<V> {
  /** The value for `key`, when present and still trusted. */
  get(key: string): V | undefined;
  beginLookup(): LookupTicket;
  /** Stores what a lookup found, unless something was invalidated since it began; it ages from then. */
  store(key: string, value: V, ticket: LookupTicket): void;
  readonly size: number;
  close(): void;
}

interface Entry<V> {
  readonly value: V;
  readonly tags: readonly string[];
  readonly cachedAtMs: number;
}

export function createNotifiedCache<V extends object>(
  notifications: Notifications,
  options: NotifiedCacheOptions<V>,
): NotifiedCache<V> {
  const nowMs = options.nowMs ?? (() => performance.now());
  const entries = new LRUCache<string, Entry<V>>({ max: options.maxEntries });
  let generation = 0;

  function dropTagged(tag: string): void {
    generation += 1;
    for (const [key, entry] of entries.entries()) if (entry.tags.includes(tag)) entries.delete(key);
  }

  function dropAll(): void {
    generation += 1;
    entries.clear();
  }

  const unsubscribe = [notifications.subscribe(options.channel, dropTagged), notifications.onListeningChange(dropAll)];

  return {
    get(key) {
      const entry = entries.get(key);
      if (!entry) return undefined;
      const trustedMs = notifications.listening ? options.trustedWhileListeningMs : options.trustedWhileNotListeningMs;
      const ageMs = nowMs() - entry.cachedAtMs;
      if (ageMs >= 0 && ageMs <= trustedMs) return entry.value;
      entries.delete(key);
      return undefined;
    },
    beginLookup: () => ({ generation, startedAtMs: nowMs() }),
    store(key, value, ticket) {
      if (ticket.generation !== generation) return;
      entries.set(key, { value, tags: options.tagsOf(value), cachedAtMs: ticket.startedAtMs });
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

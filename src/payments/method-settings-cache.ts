// A shop's method settings, read on every payment creation and changed rarely,
// kept per instance so that creating a payment is one round trip (the insert).
// A change of a shop's settings notifies `shop:<id>` (migration 0016's trigger)
// and drops the entry on every instance as soon as it commits; the entry is
// otherwise trusted for at most 5 s (1 s while notifications can be missed) of
// the gateway's clock.
import type { Clock } from '../clock.ts';
import { API_KEYS_CHANNEL, type Notifications } from '../db/notifications.ts';
import { createNotifiedCache } from '../db/notified-cache.ts';
import type { Executor } from '../db/transaction.ts';
import { shopMethodSettings, type MethodSettings } from './payment-methods.ts';

const CACHED_SHOPS_MAX = 10_000;

export interface MethodSettingsSource {
  /** The shop's settings of every method (defaults filled in). */
  settingsOf(db: Executor, shopId: string): Promise<readonly MethodSettings[]>;
  close(): void;
}

interface CachedSettings {
  readonly shopId: string;
  readonly settings: readonly MethodSettings[];
}

/** Without notifications nothing would tell the cache of a change: every call reads the database. */
export function createMethodSettingsSource(
  notifications: Notifications | undefined,
  clock: Clock,
): MethodSettingsSource {
  if (!notifications) return { settingsOf: shopMethodSettings, close: () => undefined };
  const cache = createNotifiedCache<CachedSettings>(notifications, {
    channel: API_KEYS_CHANNEL,
    tagsOf: (value) => [`shop:${value.shopId}`],
    maxEntries: CACHED_SHOPS_MAX,
    trustedWhileListeningMs: 5_000,
    trustedWhileNotListeningMs: 1_000,
    nowMs: () => clock.now().getTime(),
  });
  return {
    async settingsOf(db, shopId) {
      const cached = cache.get(shopId);
      if (cached) return cached.settings;
      const ticket = cache.beginLookup();
      const settings = await shopMethodSettings(db, shopId);
      cache.store(shopId, { shopId, settings }, ticket);
      return settings;
    },
    close: () => cache.close(),
  };
}

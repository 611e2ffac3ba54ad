// When each API key was last used, recorded cheaply: authentication writes a
// key's last_used_at at most once a minute per key and per process, so the hot
// path stays a cache hit and no write. The per-key "last written" times live
// here, in memory; another instance keeps its own (a key used on three
// instances is written up to three times a minute, and never moved backwards).
import type { Clock } from '../clock.ts';
import type { Executor } from '../db/transaction.ts';
import { touchApiKey } from './merchant-repository.ts';

const LAST_USE_WRITE_INTERVAL_MS = 60_000;
/** Past this many keys the table of write times starts over (a few redundant writes, no growth). */
const TRACKED_KEYS_MAX = 50_000;

export interface ApiKeyLastUse {
  /** Records a use of the key now, writing only when its last write is a minute old or more. */
  used(keyId: string): Promise<void>;
}

export function createApiKeyLastUse(db: Executor, clock: Clock): ApiKeyLastUse {
  const writtenAtMs = new Map<string, number>();
  return {
    async used(keyId) {
      const now = clock.now();
      const last = writtenAtMs.get(keyId);
      if (last !== undefined && now.getTime() - last < LAST_USE_WRITE_INTERVAL_MS) return;
      if (writtenAtMs.size >= TRACKED_KEYS_MAX) writtenAtMs.clear();
      writtenAtMs.set(keyId, now.getTime());
      try {
        await touchApiKey(db, keyId, now);
      } catch {
        // A lost write is only a stale "last used": the request goes on; the next one tries again.
        writtenAtMs.delete(keyId);
      }
    },
  };
}

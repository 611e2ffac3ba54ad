// A book's signing pause: custody reconciliation sets it on a shortfall beyond
// the tolerance, an operator's acknowledgement lifts it. While it holds, new
// payouts are 503 service_unavailable and the executor signs nothing of that
// book (queued transfers wait). Payout creation reads it on every request, so
// each instance caches it; a pause or resume notifies `custody:<book>`
// (migration 0027's trigger) and drops the entry everywhere as it commits.
import { API_KEYS_CHANNEL, type Notifications } from '../../db/notifications.ts';
import { createNotifiedCache, type NotifiedCache } from '../../db/notified-cache.ts';
import type { Executor } from '../../db/transaction.ts';
import { ServiceUnavailableError } from '../../errors.ts';
import type { LedgerBook } from '../../ledger/ledger-service.ts';
import { findBookState } from './custody-repository.ts';

/** How long a client is told to wait: an operator has to look first. */
const PAUSED_RETRY_AFTER_SECONDS = 600;

const SIGNING_PAUSED_MESSAGE =
  'New payouts are paused: the gateway’s custody check found less USDT on chain than it holds for its merchants, and its operator must review it. Payouts already accepted wait and are sent once it is resolved; retry later.';

/** Whether a book's signing is paused now: read from the database on every call (the executor, once a pass). */
export async function isSigningPaused(db: Executor, book: LedgerBook): Promise<boolean> {
  const state = await findBookState(db, book, 'USDT');
  return state?.paused_since != null;
}

export interface SigningPauseCheck {
  /** 503 service_unavailable when the book's signing is paused. */
  assertNotPaused(db: Executor, book: LedgerBook): Promise<void>;
}

interface CachedPause {
  readonly book: LedgerBook;
  readonly paused: boolean;
}

/** Without notifications nothing would tell a cache of a change: every call reads the database. */
export function createSigningPauseCheck(
  notifications: Notifications | undefined,
): SigningPauseCheck & { close(): void } {
  const cache: NotifiedCache<CachedPause> | undefined =
    notifications &&
    createNotifiedCache<CachedPause>(notifications, {
      channel: API_KEYS_CHANNEL,
      tagsOf: (value) => [`custody:${value.book}`],
      maxEntries: 2,
      trustedWhileListeningMs: 5_000,
      trustedWhileNotListeningMs: 1_000,
    });
  const pausedNow = async (db: Executor, book: LedgerBook): Promise<boolean> => {
    const cached = cache?.get(book);
    if (cached) return cached.paused;
    const ticket = cache?.beginLookup();
    const paused = await isSigningPaused(db, book);
    if (cache && ticket) cache.store(book, { book, paused }, ticket);
    return paused;
  };
  return {
    async assertNotPaused(db, book) {
      if (await pausedNow(db, book))
        throw new ServiceUnavailableError(SIGNING_PAUSED_MESSAGE, PAUSED_RETRY_AFTER_SECONDS);
    },
    close: () => cache?.close(),
  };
}

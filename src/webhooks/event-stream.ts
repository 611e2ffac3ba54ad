// The shop's event stream (GET /v1/webhooks/stream): the same events the outbox
// stores, read in commit-safe order (webhook-repository.ts `eventsAfter`) and
// handed out as they commit. Resuming after an event id continues exactly after
// it. A committed event wakes its shop's streams through a database
// notification (migration 0044); without notifications, or while they can be
// missed, streams poll. Open streams are bounded per shop in this process, and
// `closeAll` ends them so that a stopping server does not wait on them.
import type { AppContext } from '../context.ts';
import { WEBHOOK_EVENTS_CHANNEL } from '../db/notifications.ts';
import { InvalidRequestError, RateLimitedError } from '../errors.ts';
import {
  currentStreamPosition,
  eventsAfter,
  streamPositionOf,
  type StreamPosition,
  type StreamedEventRow,
} from './webhook-repository.ts';

/** How far back a resume replays: older events are not streamed again. */
const REPLAY_WINDOW_MS = 24 * 3_600_000;
/** Events read per query. */
const PAGE_SIZE = 100;
/** Pause between reads without notifications, or while they can be missed. */
const POLL_MS = 500;
/** Longest sleep with notifications on: finds whatever a lost notification announced. */
const BACKSTOP_MS = 10_000;
/** First look again when committed events wait behind an older open transaction; doubled up to the poll. */
const HELD_BACK_FIRST_MS = 20;
/** Patterns of `types` at most, and their form: type names with `*` for any run of characters. */
export const MAX_TYPE_PATTERNS = 20;
const TYPE_PATTERN = /^[A-Za-z0-9_.*-]{1,100}$/;

export type EventStreamDeps = Pick<AppContext, 'db' | 'clock' | 'config' | 'notifications'>;

export interface StreamedEvent {
  readonly id: string;
  readonly type: string;
  /** The exact body a webhook delivery of this event carries. */
  readonly payload: string;
}

export interface EventStream {
  /** The next events (waiting for them if there are none yet); empty once the stream is closed. */
  next(): Promise<StreamedEvent[]>;
  close(): void;
  readonly closed: boolean;
}

interface OpenStreamInput {
  readonly shopId: string;
  /** Resume after this event of the shop (Last-Event-ID); from now when absent. */
  readonly afterEventId?: string | undefined;
  /** Only types matching one of these (`payment.*`); every type when absent. */
  readonly typePatterns?: readonly string[] | undefined;
}

/** A matcher of event types for patterns where `*` stands for any run of characters. */
function typeMatcher(patterns: readonly string[] | undefined): (type: string) => boolean {
  if (!patterns || patterns.length === 0) return () => true;
  for (const pattern of patterns)
    if (!TYPE_PATTERN.test(pattern))
      throw new InvalidRequestError(`types: "${pattern}" is not an event type or a pattern with *`);
  const escaped = patterns.map((pattern) =>
    pattern
      .split('*')
      .map((part) => part.replace(/[.\\^$+?()[\]{}|-]/g, '\\$&'))
      .join('.*'),
  );
  const regex = new RegExp(`^(?:${escaped.join('|')})$`);
  return (type) => regex.test(type);
}

export interface EventStreamHub {
  /** Opens a stream; refuses a resume point that is not an event of the shop, and a shop over its bound. */
  open(input: OpenStreamInput): Promise<EventStream>;
  /** Ends every open stream (server shutdown) and stops listening. */
  closeAll(): void;
}

export function createEventStreamHub(deps: EventStreamDeps): EventStreamHub {
  const openByShop = new Map<string, Set<StreamState>>();
  const unsubscribe = subscribeToCommits(deps, openByShop);

  return {
    async open(input) {
      const matches = typeMatcher(input.typePatterns);
      const open = openByShop.get(input.shopId) ?? new Set<StreamState>();
      if (open.size >= deps.config.eventStreamsPerShop)
        throw new RateLimitedError(
          5,
          `This shop has ${open.size} event streams open, the most allowed; close one or retry in 5 s.`,
        );
      const state = new StreamState(deps, input.shopId, matches, () => {
        open.delete(state);
        if (open.size === 0) openByShop.delete(input.shopId);
      });
      // Counted before the first await, so concurrent opens cannot pass the bound together.
      open.add(state);
      openByShop.set(input.shopId, open);
      try {
        state.position = await startPosition(deps, input);
      } catch (error) {
        state.close();
        throw error;
      }
      return state;
    },
    closeAll() {
      unsubscribe();
      for (const open of [...openByShop.values()]) for (const state of [...open]) state.close();
    },
  };
}

async function startPosition(deps: EventStreamDeps, input: OpenStreamInput): Promise<StreamPosition> {
  if (input.afterEventId === undefined) return currentStreamPosition(deps.db);
  const position = await streamPositionOf(deps.db, input.shopId, input.afterEventId);
  if (!position)
    throw new InvalidRequestError(
      `Last-Event-ID: ${input.afterEventId} is not a streamable event of this shop; reconnect without it to start from now`,
    );
  return position;
}

/** Wakes a shop's streams when its events commit; every stream when notifications may have been missed. */
function subscribeToCommits(deps: EventStreamDeps, openByShop: Map<string, Set<StreamState>>): () => void {
  const notifications = deps.notifications;
  if (!notifications) return () => undefined;
  const stops = [
    notifications.subscribe(WEBHOOK_EVENTS_CHANNEL, (shopId) => {
      for (const state of openByShop.get(shopId) ?? []) state.wake();
    }),
    notifications.onListeningChange(() => {
      for (const open of openByShop.values()) for (const state of open) state.wake();
    }),
  ];
  return () => stops.forEach((stop) => stop());
}

class StreamState implements EventStream {
  position: StreamPosition = { txId: '0', eventId: '' };
  #closed = false;
  /** Set by a wake-up: something may have committed since the last read began. */
  #dirty = true;
  #wake: (() => void) | undefined;
  #heldBackWaitMs = HELD_BACK_FIRST_MS;
  readonly #deps: EventStreamDeps;
  readonly #shopId: string;
  readonly #matches: (type: string) => boolean;
  readonly #onClose: () => void;

  constructor(deps: EventStreamDeps, shopId: string, matches: (type: string) => boolean, onClose: () => void) {
    this.#deps = deps;
    this.#shopId = shopId;
    this.#matches = matches;
    this.#onClose = onClose;
  }

  get closed(): boolean {
    return this.#closed;
  }

  wake(): void {
    this.#dirty = true;
    this.#wake?.();
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#onClose();
    this.#wake?.();
  }

  async next(): Promise<StreamedEvent[]> {
    while (!this.#closed) {
      this.#dirty = false;
      const { events, heldBack } = await this.#read();
      const last = events.at(-1);
      if (last) this.position = { txId: last.txId, eventId: last.id };
      const wanted = events.filter((event) => this.#matches(event.type));
      if (this.#closed) break;
      if (wanted.length > 0) return wanted.map(({ id, type, payload }) => ({ id, type, payload }));
      // A full page of other types: read on at once.
      if (events.length === PAGE_SIZE) continue;
      if (!this.#dirty) await this.#sleep(this.#pauseMs(heldBack));
    }
    return [];
  }

  #read(): Promise<{ events: StreamedEventRow[]; heldBack: boolean }> {
    const since = new Date(this.#deps.clock.now().getTime() - REPLAY_WINDOW_MS);
    return eventsAfter(this.#deps.db, { shopId: this.#shopId, after: this.position, since, limit: PAGE_SIZE });
  }

  #pauseMs(heldBack: boolean): number {
    if (heldBack) {
      const waitMs = this.#heldBackWaitMs;
      this.#heldBackWaitMs = Math.min(POLL_MS, waitMs * 2);
      return waitMs;
    }
    this.#heldBackWaitMs = HELD_BACK_FIRST_MS;
    return this.#deps.notifications?.listening ? BACKSTOP_MS : POLL_MS;
  }

  #sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const finish = () => {
        clearTimeout(timer);
        this.#wake = undefined;
        resolve();
      };
      const timer = setTimeout(finish, ms);
      this.#wake = finish;
    });
  }
}

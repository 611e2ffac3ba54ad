// PostgreSQL LISTEN/NOTIFY for the gateway: due work wakes the workers, and a
// revoked API key leaves every instance's key cache at once. Triggers of
// migration 0014 send the notifications in the transaction of the change, so
// they arrive only after it commits, and no domain code sends any itself.
//
// On a PostgreSQL server one dedicated connection listens (never a pool
// connection: LISTEN belongs to a session); it reconnects with backoff and a
// heartbeat notices a connection that died without a word. While it is down
// some notifications are lost for good, so subscribers are told (`listening`
// false, then true again on reconnect) and stop trusting what they learned.
// PGlite is one session in this process: it LISTENs on it and can lose nothing.
import type { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import type { Db } from './transaction.ts';

/** Due work: the payload names the worker (`WORK_TOPICS`). */
export const WORK_CHANNEL = 'paygate_work';
/** API keys and shops changed: payload `key:<key id>` or `shop:<shop id>`. */
export const API_KEYS_CHANNEL = 'paygate_api_keys';
/** Webhook events committed (migration 0044): payload the shop's id. Wakes its open event streams. */
export const WEBHOOK_EVENTS_CHANNEL = 'paygate_webhook_events';
export type NotificationChannel = typeof WORK_CHANNEL | typeof API_KEYS_CHANNEL | typeof WEBHOOK_EVENTS_CHANNEL;
const CHANNELS: readonly NotificationChannel[] = [WORK_CHANNEL, API_KEYS_CHANNEL, WEBHOOK_EVENTS_CHANNEL];

/** The payloads on WORK_CHANNEL, as the triggers of migration 0014 send them. */
export const WORK_TOPICS = {
  webhookDelivery: 'webhook_delivery',
  paymentExpiry: 'payment_expiry',
  reservationExpiry: 'ledger_reservation_expiry',
  /** No trigger sends it: every look-up is scheduled a minute or more ahead (reconciliation-worker.ts). */
  paymentReconciliation: 'payment_reconciliation',
  /** No trigger sends it either: refund look-ups are scheduled a minute or more ahead (refund-worker.ts). */
  paymentRefunds: 'payment_refunds',
} as const;

export interface Notifications {
  /** False while notifications can be missed (the listening connection is down). */
  readonly listening: boolean;
  /** Calls `handler` with the payload of every notification on `channel`; returns the unsubscribe. */
  subscribe(channel: NotificationChannel, handler: (payload: string) => void): () => void;
  /**
   * Calls `handler(false)` when the listening connection is lost and `handler(true)` once it
   * listens again: whatever was notified in between was missed. Returns the unsubscribe.
   */
  onListeningChange(handler: (listening: boolean) => void): () => void;
  /**
   * Hands a notification to this process's subscribers at once, for a change this process has
   * just committed (the database's own copy follows a moment later).
   */
  deliverLocally(channel: NotificationChannel, payload: string): void;
  close(): Promise<void>;
}

/** Subscribers and their dispatch, shared by both backends. */
class Subscribers {
  readonly #handlers = new Map<string, Set<(payload: string) => void>>();
  readonly #listeningHandlers = new Set<(listening: boolean) => void>();

  subscribe(channel: string, handler: (payload: string) => void): () => void {
    let set = this.#handlers.get(channel);
    if (!set) this.#handlers.set(channel, (set = new Set()));
    const entry = (payload: string) => handler(payload);
    set.add(entry);
    return () => void set.delete(entry);
  }

  onListeningChange(handler: (listening: boolean) => void): () => void {
    const entry = (listening: boolean) => handler(listening);
    this.#listeningHandlers.add(entry);
    return () => void this.#listeningHandlers.delete(entry);
  }

  dispatch(channel: string, payload: string): void {
    for (const handler of this.#handlers.get(channel) ?? []) handler(payload);
  }

  listeningChanged(listening: boolean): void {
    for (const handler of this.#listeningHandlers) handler(listening);
  }
}

export interface PostgresNotificationsOptions {
  readonly url: string;
  readonly onError?: (error: unknown, message: string) => void;
  /** First wait before reconnecting; doubled up to RECONNECT_MAX_MS. */
  readonly reconnectMinMs?: number;
  /** Interval of the liveness query on the listening connection. */
  readonly heartbeatMs?: number;
}

const RECONNECT_MIN_MS = 100;
const RECONNECT_MAX_MS = 5_000;
const HEARTBEAT_MS = 5_000;
/** A heartbeat unanswered this long means the connection is gone (a partition sends no reset). */
const HEARTBEAT_TIMEOUT_MS = 2_000;

/**
 * Listens on a dedicated connection to the server at `url`. Resolves once listening, or
 * at once if the server is not reachable yet: it keeps trying in the background, and
 * `listening` stays false until then.
 */
export async function listenOnPostgres(options: PostgresNotificationsOptions): Promise<Notifications> {
  const subscribers = new Subscribers();
  const reconnectMinMs = options.reconnectMinMs ?? RECONNECT_MIN_MS;
  const heartbeatMs = options.heartbeatMs ?? HEARTBEAT_MS;
  let client: pg.Client | undefined;
  let listening = false;
  let closed = false;
  let failures = 0;
  let reconnectTimer: NodeJS.Timeout | undefined;
  let heartbeatTimer: NodeJS.Timeout | undefined;

  function lost(from: pg.Client, error?: unknown): void {
    if (client !== from) return;
    client = undefined;
    clearInterval(heartbeatTimer);
    from.end().catch(() => undefined);
    if (listening) {
      listening = false;
      subscribers.listeningChanged(false);
    }
    if (closed) return;
    // Once per outage, not once per retry.
    if (error && failures === 0)
      options.onError?.(error, 'database notifications: the listening connection is lost; reconnecting');
    const delayMs =
      Math.min(RECONNECT_MAX_MS, reconnectMinMs * 2 ** Math.min(failures, 16)) * (0.8 + Math.random() * 0.4);
    failures += 1;
    reconnectTimer = setTimeout(() => void connect(), delayMs);
  }

  async function connect(): Promise<void> {
    if (closed) return;
    const next = new pg.Client({
      connectionString: options.url,
      keepAlive: true,
      application_name: 'paygate-listener',
    });
    client = next;
    next.on('error', (error) => lost(next, error));
    next.on('end', () => lost(next));
    next.on('notification', (message) => subscribers.dispatch(message.channel, message.payload ?? ''));
    try {
      await next.connect();
      await next.query(CHANNELS.map((channel) => `listen ${channel}`).join(';'));
    } catch (error) {
      lost(next, error);
      return;
    }
    if (client !== next || closed) return;
    failures = 0;
    listening = true;
    heartbeatTimer = setInterval(() => heartbeat(next), heartbeatMs);
    heartbeatTimer.unref();
    subscribers.listeningChanged(true);
  }

  function heartbeat(of: pg.Client): void {
    let answered = false;
    const timer = setTimeout(() => {
      if (!answered) lost(of, new Error(`no answer to the heartbeat within ${HEARTBEAT_TIMEOUT_MS} ms`));
    }, HEARTBEAT_TIMEOUT_MS);
    of.query('select 1').then(
      () => {
        answered = true;
        clearTimeout(timer);
      },
      (error: unknown) => {
        answered = true;
        clearTimeout(timer);
        lost(of, error);
      },
    );
  }

  await connect();
  return {
    get listening() {
      return listening;
    },
    subscribe: (channel, handler) => subscribers.subscribe(channel, handler),
    onListeningChange: (handler) => subscribers.onListeningChange(handler),
    deliverLocally: (channel, payload) => subscribers.dispatch(channel, payload),
    async close() {
      closed = true;
      clearTimeout(reconnectTimer);
      clearInterval(heartbeatTimer);
      const last = client;
      client = undefined;
      listening = false;
      await last?.end().catch(() => undefined);
    },
  };
}

/**
 * Listens on PGlite's single session. `db` is the Kysely handle over the same PGlite: LISTEN
 * runs while holding its session, so that it never lands inside someone's transaction.
 */
export async function listenOnPGlite(pglite: PGlite, db: Db): Promise<Notifications> {
  const subscribers = new Subscribers();
  const unlisten: (() => Promise<void>)[] = [];
  await db.connection().execute(async () => {
    for (const channel of CHANNELS)
      unlisten.push(await pglite.listen(channel, (payload) => subscribers.dispatch(channel, payload)));
  });
  let closed = false;
  return {
    get listening() {
      return !closed;
    },
    subscribe: (channel, handler) => subscribers.subscribe(channel, handler),
    onListeningChange: (handler) => subscribers.onListeningChange(handler),
    deliverLocally: (channel, payload) => subscribers.dispatch(channel, payload),
    async close() {
      if (closed) return;
      closed = true;
      if (pglite.closed) return;
      await db
        .connection()
        .execute(async () => {
          for (const stop of unlisten) await stop();
        })
        .catch(() => undefined);
    },
  };
}

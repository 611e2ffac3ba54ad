// What every module is built from: the database, the clock, the configuration,
// the metrics registry, the logger and the dependency health tracker. Modules take the parts they need.
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { Clock } from './clock.ts';
import type { Config } from './config.ts';
import type { DatabaseBackend } from './db/database.ts';
import type { Notifications } from './db/notifications.ts';
import type { Db } from './db/transaction.ts';
import type { DependencyHealth } from './health/dependency-health.ts';
import type { Keyring } from './kms/keyring.ts';

export interface AppContext {
  readonly db: Db;
  readonly backend: DatabaseBackend;
  readonly clock: Clock;
  readonly config: Config;
  readonly metrics: Registry;
  readonly logger: Logger;
  /** Whether the database, Redis and the TRON nodes are reachable, as this process last saw them: one per gateway. */
  readonly health: DependencyHealth;
  /** Envelope encryption of the secrets stored in the database (src/kms/). */
  readonly keyring: Keyring;
  /**
   * The database's notifications (db/notifications.ts): due work wakes the workers and key
   * changes reach the API-key cache. Absent (most tests, the CLI), workers poll and keys are
   * looked up on every request.
   */
  readonly notifications?: Notifications | undefined;
  /** The process's `serve --role`; absent (tests, the CLI) counts as `all`. An `api` process starts no sandbox chain of its own. */
  readonly role?: 'all' | 'api' | 'worker' | undefined;
}

/** A background loop (webhook delivery, payment expiry). `stop` waits for in-flight work. */
export interface Worker {
  readonly name: string;
  start(): void;
  stop(): Promise<void>;
}

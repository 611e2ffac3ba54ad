// Starts the gateway: opens and migrates the database, then serves HTTP and/or
// runs the module workers according to the role. Stops cleanly on SIGINT/SIGTERM.
import { chmod, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Registry, collectDefaultMetrics } from 'prom-client';
import { buildApp, type App } from './app.ts';
import { systemClock, type Clock } from './clock.ts';
import { ConfigError, type Config } from './config.ts';
import type { AppContext, Worker } from './context.ts';
import { openDatabase, type DatabaseHandle } from './db/database.ts';
import type { Notifications } from './db/notifications.ts';
import type { Redis } from 'ioredis';
import { lockDataFolder, type DataFolderLock } from './db/data-folder-lock.ts';
import { migrate } from './db/migrate.ts';
import { createLogger } from './logger.ts';
import { countMerchants } from './merchants/merchant-repository.ts';
import { createMerchant } from './merchants/merchant-service.ts';
import { loadKeyring } from './kms/load-keyring.ts';
import { closeCryptoDeps } from './crypto/receiving/crypto-deps.ts';
import { createWorkers } from './modules.ts';
import { sealPlaintextWebhookSecrets } from './webhooks/webhook-secrets.ts';

export type Role = 'all' | 'api' | 'worker';

const EVENT_LOOP_MONITORING_PRECISION_MS = 100;
export const ROLES: readonly Role[] = ['all', 'api', 'worker'];

export interface Gateway {
  readonly context: AppContext;
  /** The open database, for work on it beyond queries (a dump of the embedded folder). */
  readonly database: DatabaseHandle;
  readonly app: App | undefined;
  /** The bound HTTP address, when serving. */
  readonly url: string | undefined;
  stop(): Promise<void>;
}

/**
 * Opens the configured database and applies pending migrations (reported in `applied`). The
 * embedded database's folder is locked for this process until the handle is closed
 * (db/data-folder-lock.ts): a second process on it fails at once, naming the first.
 */
export async function openConfiguredDatabase(config: Config): Promise<DatabaseHandle & { applied: string[] }> {
  // The data folder holds the embedded database and the demo credentials: the owner's alone.
  let lock: DataFolderLock | undefined;
  if (!config.databaseUrl) {
    await mkdir(config.dataDir, { recursive: true, mode: 0o700 });
    await chmod(config.dataDir, 0o700);
    lock = await lockDataFolder(config.dataDir);
  }
  let handle: DatabaseHandle;
  try {
    handle = await openDatabase({
      url: config.databaseUrl,
      dataDir: config.databaseUrl ? undefined : join(config.dataDir, 'pglite'),
      poolSize: config.databasePoolSize,
      timeouts: config.databaseTimeouts,
    });
  } catch (error) {
    await lock?.release();
    throw error;
  }
  const close = handle.close.bind(handle);
  const locked = Object.assign(handle, {
    async close() {
      try {
        await close();
      } finally {
        await lock?.release();
      }
    },
  });
  try {
    return Object.assign(locked, { applied: await migrate(locked) });
  } catch (error) {
    await locked.close();
    throw error;
  }
}

/** The live signing key is read only sealed (docs/security.md): a key file in clear is refused, naming the command that seals it. */
export function refuseClearSigningKey(config: Pick<Config, 'tronSignerKeyFile'>): void {
  if (config.tronSignerKeyFile === undefined) return;
  throw new ConfigError(
    'PAYGATE_TRON_SIGNER_KEY_FILE',
    `names a signing key in clear (${config.tronSignerKeyFile}), which the gateway does not read: seal it with ` +
      `\`paygate crypto keys import --file ${config.tronSignerKeyFile}\`, then unset PAYGATE_TRON_SIGNER_KEY_FILE and delete the file (docs/security.md)`,
  );
}

/** On the first start of an empty embedded database: a demo merchant whose key is printed and saved. */
async function createDemoMerchantIfEmpty(context: AppContext, config: Config): Promise<void> {
  if (config.databaseUrl || (await countMerchants(context.db)) > 0) return;
  const demo = await createMerchant(context, { name: 'Demo shop', email: 'demo@paygate.local', mode: 'sandbox' });
  const file = join(config.dataDir, 'demo-credentials.json');
  await writeFile(file, `${JSON.stringify(demo, null, 2)}\n`, { mode: 0o600 });
  context.logger.info({ file, shop_id: demo.shop_id }, 'created a demo sandbox merchant');
  process.stdout.write(
    `\nDemo sandbox shop created. API key (shown once, also saved to ${file}):\n\n  ${demo.api_key}\n\n` +
      `Try: curl -s ${config.publicUrl}/v1/account -H "Authorization: Bearer ${demo.api_key}"\n\n`,
  );
}

export async function startGateway(config: Config, options: { role: Role; clock?: Clock }): Promise<Gateway> {
  refuseClearSigningKey(config);
  const logger = createLogger(config);
  const keyring = await loadKeyring(config);
  const handle = await openConfiguredDatabase(config);
  const metrics = new Registry();
  // The event-loop delay histogram samples on a timer of this many milliseconds; prom-client's
  // default (10) wakes an idle gateway 100 times a second, half a percent of a core.
  collectDefaultMetrics({ register: metrics, eventLoopMonitoringPrecision: EVENT_LOOP_MONITORING_PRECISION_MS });
  // Wakes the workers when work falls due and keeps the API-key cache honest (db/notifications.ts).
  let notifications: Notifications | undefined;
  let redis: Redis | undefined;
  let app: App | undefined;
  let context: AppContext | undefined;
  // A start that fails half-way (a port in use, a database gone) releases what it opened, so
  // the process exits instead of idling on a pool, a listener, or the data folder's lock.
  const release = async () => {
    await app?.close();
    if (context) await closeCryptoDeps(context);
    redis?.disconnect();
    await notifications?.close();
    await handle.close();
  };
  let url: string | undefined;
  try {
    notifications = await handle.listen({ onError: (error, message) => logger.warn({ err: error }, message) });
    context = {
      db: handle.db,
      backend: handle.backend,
      clock: options.clock ?? systemClock,
      config,
      metrics,
      logger,
      keyring,
      notifications,
      role: options.role,
    };
    const sealed = await sealPlaintextWebhookSecrets(handle.db, keyring);
    if (sealed > 0) logger.info({ shops: sealed }, 'sealed webhook secrets stored in clear by an earlier version');
    await createDemoMerchantIfEmpty(context, config);

    // Loaded only when configured, like PGlite (db/database.ts): an idle gateway's memory is its code.
    redis = config.redisUrl
      ? new (await import('ioredis')).Redis(config.redisUrl, { maxRetriesPerRequest: 1, enableOfflineQueue: false })
      : undefined;
    redis?.on('error', (error) => logger.warn({ err: error }, 'redis error'));

    if (options.role !== 'worker') {
      app = await buildApp(context, { redis });
      url = await app.listen({ port: config.port, host: config.host });
    }
  } catch (error) {
    await release().catch((cleanupError: unknown) => logger.warn({ err: cleanupError }, 'cleaning up after a failed start'));
    throw error;
  }
  const started = context;
  const workers: Worker[] = options.role === 'api' ? [] : createWorkers(started);
  for (const worker of workers) worker.start();
  logger.info({ role: options.role, url, database: handle.backend, workers: workers.map((w) => w.name) }, 'paygate started');

  let stopping: Promise<void> | undefined;
  return {
    context: started,
    database: handle,
    app,
    url,
    stop() {
      stopping ??= (async () => {
        // Stop accepting and finish in-flight requests while the workers finish their deliveries.
        await Promise.all([app?.close(), ...workers.map((worker) => worker.stop())]);
        app = undefined;
        // Then the crypto chain handle (node clients, the in-process sandbox chain), which serves both.
        await release();
      })();
      return stopping;
    },
  };
}

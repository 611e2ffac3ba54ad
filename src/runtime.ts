// Starts the gateway: opens and migrates the database, builds the modules
// (modules.ts), then serves HTTP and/or runs the modules' workers according to the
// role. Stops cleanly on SIGINT/SIGTERM: whatever was opened is closed in reverse.
import { chmod, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Registry, collectDefaultMetrics } from 'prom-client';
import type { App } from './app.ts';
import { systemClock, type Clock } from './clock.ts';
import { ConfigError, type Config } from './config.ts';
import type { AppContext } from './context.ts';
import { openDatabase, type DatabaseHandle } from './db/database.ts';
import { lockDataFolder, type DataFolderLock } from './db/data-folder-lock.ts';
import { migrate } from './db/migrate.ts';
import { DependencyHealth } from './health/dependency-health.ts';
import { openRedis } from './health/redis-client.ts';
import { createLogger } from './logger.ts';
import { loadKeyring } from './kms/load-keyring.ts';
import type { MerchantsService } from './merchants/merchants-module.ts';
import type { Closer } from './modules.ts';
import type { CrashPointHook } from './payments/crash-points.ts';

export type Role = 'all' | 'api' | 'worker';

const EVENT_LOOP_MONITORING_PRECISION_MS = 100;
export const ROLES: readonly Role[] = ['all', 'api', 'worker'];

export interface Gateway {
  readonly context: AppContext;
  /** The open database, for work on it beyond queries (a dump of the embedded folder). */
  readonly database: DatabaseHandle;
  readonly app: App | undefined;
  /** The bound HTTP address, when serving (a worker only with an operations port). */
  readonly url: string | undefined;
  /** The names of the workers this process runs (none for `--role api`). */
  readonly workers: readonly string[];
  stop(): Promise<void>;
}

/**
 * Opens the configured database and applies pending migrations (reported in `applied`). The
 * embedded database's folder is locked for this process until the handle is closed
 * (db/data-folder-lock.ts): a second process on it fails at once, naming the first.
 */
export async function openConfiguredDatabase(
  config: Config,
  options: { shortLived?: boolean } = {},
): Promise<DatabaseHandle & { applied: string[] }> {
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
      shortLived: options.shortLived,
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
function refuseClearSigningKey(config: Pick<Config, 'tronSignerKeyFile'>): void {
  if (config.tronSignerKeyFile === undefined) return;
  throw new ConfigError(
    'PAYGATE_TRON_SIGNER_KEY_FILE',
    `names a signing key in clear (${config.tronSignerKeyFile}), which the gateway does not read: seal it with ` +
      `\`paygate crypto keys import --file ${config.tronSignerKeyFile}\`, then unset PAYGATE_TRON_SIGNER_KEY_FILE and delete the file (docs/security.md)`,
  );
}

/**
 * A process that runs part of the gateway (`--role api` or `worker`, PAYGATE_WORKERS) leaves the
 * rest to other processes: the embedded database serves one process only, and an API-only process
 * has no workers to choose from.
 */
function refusePartsRunNowhere(config: Pick<Config, 'workers' | 'databaseUrl'>, role: Role): void {
  if (!config.databaseUrl && role !== 'all')
    throw new ConfigError(
      'DATABASE_URL',
      `is required for --role ${role}: the embedded database serves one process only`,
    );
  if (config.workers === undefined) return;
  if (role === 'api')
    throw new ConfigError(
      'PAYGATE_WORKERS',
      'names workers, but `--role api` runs none: unset it, or use --role worker or all',
    );
  if (!config.databaseUrl)
    throw new ConfigError(
      'PAYGATE_WORKERS',
      'needs DATABASE_URL: the embedded database serves one process only, so the workers left out would run nowhere',
    );
}

/**
 * The first start on an empty database. A development start (config.demo) gets a demo
 * sandbox merchant whose key is printed and saved; a production start creates nothing
 * and says how to create the first merchant.
 */
async function welcomeIfEmpty(
  merchants: MerchantsService,
  logger: AppContext['logger'],
  config: Config,
): Promise<void> {
  if ((await merchants.countMerchants()) > 0) return;
  if (!config.demo) {
    logger.info('no merchant yet: create the first one with `paygate merchant create`');
    process.stdout.write(
      '\nNo merchant yet. Create the first one (its API key is printed once):\n\n' +
        '  npx paygate merchant create --name "My shop" --email owner@example.com\n\n' +
        '(a sandbox merchant; add --live for real payments. `npm start` or PAYGATE_DEMO=1 creates a demo sandbox merchant instead.)\n\n',
    );
    return;
  }
  const demo = await merchants.createMerchant({ name: 'Demo shop', email: 'demo@paygate.local', mode: 'sandbox' });
  const file = join(config.dataDir, 'demo-credentials.json');
  await mkdir(config.dataDir, { recursive: true, mode: 0o700 });
  await writeFile(file, `${JSON.stringify(demo, null, 2)}\n`, { mode: 0o600 });
  logger.info({ file, shop_id: demo.shop_id }, 'created a demo sandbox merchant');
  process.stdout.write(
    `\nDemo sandbox shop created. API key (shown once, also saved to ${file}):\n\n  ${demo.api_key}\n\n` +
      `Try: curl -s ${config.publicUrl}/v1/account -H "Authorization: Bearer ${demo.api_key}"\n\n`,
  );
}

export async function startGateway(
  config: Config,
  options: {
    role: Role;
    /** `--role worker` only: serve /healthz, /readyz and /metrics on this port (none: listen on nothing). */
    operationsPort?: number;
    clock?: Clock;
    crashPoint?: CrashPointHook;
  },
): Promise<Gateway> {
  refuseClearSigningKey(config);
  refusePartsRunNowhere(config, options.role);
  // Imported here, not above: a CLI command opens the database through this module without the server's code.
  const [{ buildApp, buildOperationsApp }, { closeInReverse, closeModules, createModules, createWorkers }] =
    await Promise.all([import('./app.ts'), import('./modules.ts')]);
  const logger = createLogger(config);
  const keyring = await loadKeyring(config);
  const handle = await openConfiguredDatabase(config);
  // Whatever was opened is closed again in reverse, by stop() or after a failed start (so it ends the process).
  const opened: Closer[] = [() => handle.close()];
  try {
    const metrics = new Registry();
    // The event-loop delay histogram samples on a timer of this many milliseconds; prom-client's
    // default (10) wakes an idle gateway 100 times a second, half a percent of a core.
    collectDefaultMetrics({ register: metrics, eventLoopMonitoringPrecision: EVENT_LOOP_MONITORING_PRECISION_MS });
    const health = new DependencyHealth(logger);
    // Wakes the workers when work falls due and keeps the API-key cache honest (db/notifications.ts).
    const notifications = await handle.listen({ onError: (error) => health.down('database', error) });
    opened.push(() => notifications.close());
    // The listening connection is back: the server answers again.
    notifications.onListeningChange((listening) => listening && health.up('database'));
    const context: AppContext = {
      db: handle.db,
      backend: handle.backend,
      clock: options.clock ?? systemClock,
      config,
      metrics,
      logger,
      health,
      keyring,
      notifications,
      role: options.role,
    };
    const modules = createModules(context, { payments: { crashPoint: options.crashPoint } });
    opened.push(() => closeModules(modules.list));
    // Made (PAYGATE_WORKERS checked) before anything is written or served; started once the process serves.
    const workers = options.role === 'api' ? [] : createWorkers(modules.list, config.workers);
    const sealed = await modules.webhooks.sealPlaintextSecrets();
    if (sealed > 0) logger.info({ shops: sealed }, 'sealed webhook secrets stored in clear by an earlier version');
    await welcomeIfEmpty(modules.merchants, logger, config);

    const redis = await openRedis(config, health);
    opened.push(() => redis?.disconnect());

    let app: App | undefined;
    let url: string | undefined;
    // Stop accepting and finish in-flight requests while the workers finish their deliveries.
    opened.push(() => Promise.all([app?.close(), ...workers.map((worker) => worker.stop())]));
    if (options.role !== 'worker') {
      app = await buildApp(context, modules, { redis });
      url = await app.listen({ port: config.port, host: config.host });
    } else if (options.operationsPort !== undefined) {
      app = await buildOperationsApp(context, { redis });
      url = await app.listen({ port: options.operationsPort, host: config.host });
    }
    for (const worker of workers) worker.start();
    logger.info(
      { role: options.role, url, database: handle.backend, workers: workers.map((w) => w.name) },
      'paygate started',
    );

    let stopping: Promise<void> | undefined;
    return {
      context,
      database: handle,
      app,
      url,
      workers: workers.map((worker) => worker.name),
      stop() {
        stopping ??= closeInReverse(opened);
        return stopping;
      },
    };
  } catch (error) {
    await closeInReverse(opened).catch(() => undefined);
    throw error;
  }
}

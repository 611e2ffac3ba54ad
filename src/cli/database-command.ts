// Runs a CLI command's work against the configured database with a context like the server's.
// Inside a running gateway (cli/admin-socket.ts) the work runs over the gateway's own open
// database instead: the embedded database cannot be opened by a second process, and the
// gateway's caches hear the change at once (a revoked key is refused from the next request).
import { AsyncLocalStorage } from 'node:async_hooks';
import { Registry } from 'prom-client';
import { systemClock } from '../clock.ts';
import type { Config } from '../config.ts';
import type { AppContext } from '../context.ts';
import type { DatabaseHandle } from '../db/database.ts';
import { loadKeyring } from '../kms/load-keyring.ts';
import { createLogger } from '../logger.ts';
import { DependencyHealth } from '../health/dependency-health.ts';
import { openConfiguredDatabase } from '../runtime.ts';

/** The running gateway's context and database, which a command run inside it uses. */
export interface GatewayDatabase {
  readonly context: AppContext;
  readonly database: DatabaseHandle;
}

const insideGateway = new AsyncLocalStorage<GatewayDatabase>();

/** Runs `work` (a CLI command) so that its database work goes to the gateway's open database. */
export function runInsideGateway<T>(gateway: GatewayDatabase, work: () => Promise<T>): Promise<T> {
  return insideGateway.run(gateway, work);
}

/** Like withCliContext, with the database handle too (a dump of the embedded folder). */
export async function withCliDatabase<T>(
  config: Config,
  work: (context: AppContext, database: DatabaseHandle) => Promise<T>,
): Promise<T> {
  const gateway = insideGateway.getStore();
  // A registry of its own: a command's metrics are not the gateway's.
  if (gateway) return work({ ...gateway.context, metrics: new Registry() }, gateway.database);
  const keyring = await loadKeyring(config);
  const handle = await openConfiguredDatabase(config, { shortLived: true });
  const logger = createLogger({ logLevel: config.logLevel === 'info' ? 'warn' : config.logLevel });
  const context: AppContext = {
    db: handle.db,
    backend: handle.backend,
    clock: systemClock,
    config,
    metrics: new Registry(),
    logger,
    health: new DependencyHealth(logger),
    keyring,
  };
  try {
    return await work(context, handle);
  } finally {
    await handle.close();
  }
}

export function withCliContext<T>(config: Config, work: (context: AppContext) => Promise<T>): Promise<T> {
  return withCliDatabase(config, (context) => work(context));
}

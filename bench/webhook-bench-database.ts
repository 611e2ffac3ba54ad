// What both webhook benches start from: a fresh, migrated database on the benchmark
// server, a context for the delivery engine on it (plain-HTTP loopback receivers
// allowed), and a merchant whose shop the events belong to.
import { Registry } from 'prom-client';
import { createBenchDatabase } from './bench-database.ts';
import { systemClock } from '../src/clock.ts';
import { loadConfig } from '../src/config.ts';
import type { AppContext } from '../src/context.ts';
import { openDatabase } from '../src/db/database.ts';
import { migrate } from '../src/db/migrate.ts';
import type { Notifications } from '../src/db/notifications.ts';
import { DependencyHealth } from '../src/health/dependency-health.ts';
import { throwawayKeyring } from '../src/kms/keyring.ts';
import { createLogger } from '../src/logger.ts';
import { createMerchant } from '../src/merchants/merchant-service.ts';

export interface WebhookBenchDatabase {
  /** The engine's context, with a registry of its own. */
  readonly context: AppContext;
  readonly shopId: string;
  /** Closes the notifications and the database handle, and drops the database. */
  close(): Promise<void>;
}

export async function openWebhookBenchDatabase(
  prefix: string,
  env: Record<string, string | undefined> = {},
  notifications?: (url: string) => Promise<Notifications>,
): Promise<WebhookBenchDatabase> {
  const database = await createBenchDatabase(prefix);
  const config = loadConfig({
    ...process.env,
    DATABASE_URL: database.url,
    LOG_LEVEL: 'silent',
    PAYGATE_ALLOW_HTTP_WEBHOOKS: '1',
    PAYGATE_WEBHOOK_ALLOW_PRIVATE: '1',
    ...env,
  });
  let handle: Awaited<ReturnType<typeof openDatabase>> | undefined;
  let listening: Notifications | undefined;
  const closeAll = async () => {
    try {
      await listening?.close();
      await handle?.close();
    } finally {
      await database.drop();
    }
  };
  try {
    handle = await openDatabase({ url: database.url, poolSize: config.databasePoolSize });
    await migrate(handle);
    listening = await notifications?.(database.url);
    const logger = createLogger(config);
    const context: AppContext = {
      db: handle.db,
      backend: 'postgres',
      clock: systemClock,
      config,
      metrics: new Registry(),
      logger,
      health: new DependencyHealth(logger),
      keyring: throwawayKeyring(),
      notifications: listening,
    };
    const merchant = await createMerchant(context, { name: 'Bench shop', email: 'bench@paygate.local' });
    return { context, shopId: merchant.shop_id, close: closeAll };
  } catch (error) {
    await closeAll();
    throw error;
  }
}

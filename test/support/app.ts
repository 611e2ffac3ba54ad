// Builds the real application on a fresh test database, with a manual clock and
// a silent logger, plus helpers to create merchants and keys through the real service.
import type { FastifyInstance } from 'fastify';
import { Registry } from 'prom-client';
import { ManualClock } from '../../src/clock.ts';
import { buildApp, type BuildAppOptions } from '../../src/app.ts';
import { loadConfig, type Config } from '../../src/config.ts';
import type { AppContext } from '../../src/context.ts';
import type { CryptoChain } from '../../src/crypto/chain/crypto-chain.ts';
import type { DatabaseBackend } from '../../src/db/database.ts';
import { createLogger } from '../../src/logger.ts';
import { createApiKey, createMerchant, type CreatedMerchant } from '../../src/merchants/merchant-service.ts';
import { createCryptoModules, type CryptoModules } from '../../src/modules.ts';
import type { ApiKeyScope, ShopMode } from '../../src/merchants/merchant-tables.ts';
import { openTestDatabase, type TestDatabase } from './databases.ts';
import { testKeyring } from './keyring.ts';

export interface TestApp {
  readonly app: FastifyInstance;
  readonly context: AppContext;
  readonly clock: ManualClock;
  readonly database: TestDatabase;
  /** The app's crypto modules; `crypto.chain` is the chain handle its routes and workers use. */
  readonly crypto: CryptoModules;
  createMerchant(options?: { mode?: ShopMode; name?: string }): Promise<CreatedMerchant>;
  createKey(shopId: string, scopes: readonly ApiKeyScope[]): Promise<string>;
  close(): Promise<void>;
}

let merchantCounter = 0;

export function testConfig(overrides: Partial<Config> = {}): Config {
  return {
    ...loadConfig({ PAYGATE_DATA_DIR: 'memory://', LOG_LEVEL: 'silent', PAYGATE_ALLOW_HTTP_WEBHOOKS: '1', PAYGATE_WEBHOOK_ALLOW_PRIVATE: '1' }),
    publicUrl: 'http://paygate.test',
    ...overrides,
  };
}

export async function createTestContext(
  backend: DatabaseBackend,
  options: { config?: Partial<Config>; clock?: ManualClock; liveConnectors?: AppContext['liveConnectors'] } = {},
): Promise<{ context: AppContext; clock: ManualClock; database: TestDatabase }> {
  const config = testConfig(options.config);
  const database = await openTestDatabase(backend, { timeouts: config.databaseTimeouts });
  const clock = options.clock ?? new ManualClock(new Date('2026-11-01T10:00:00.000Z'));
  const context: AppContext = {
    db: database.db,
    backend,
    clock,
    config,
    metrics: new Registry(),
    logger: createLogger(config),
    keyring: testKeyring,
    liveConnectors: options.liveConnectors,
  };
  return { context, clock, database };
}

export async function createTestApp(
  backend: DatabaseBackend,
  options: {
    config?: Partial<Config>;
    clock?: ManualClock;
    app?: BuildAppOptions;
    liveConnectors?: AppContext['liveConnectors'];
    /** Makes the chain of the crypto modules instead of the configured one (closed with the app). */
    chain?: (context: AppContext) => CryptoChain;
  } = {},
): Promise<TestApp> {
  const { context, clock, database } = await createTestContext(backend, options);
  const crypto = createCryptoModules(context, { chain: options.chain?.(context) });
  const app = await buildApp(context, { ...options.app, crypto });
  await app.ready();
  return {
    app,
    context,
    clock,
    database,
    crypto,
    createMerchant: (merchantOptions = {}) => {
      merchantCounter += 1;
      const unique = `${process.pid}-${merchantCounter}-${Math.random().toString(36).slice(2, 8)}`;
      return createMerchant(context, {
        name: merchantOptions.name ?? `Test shop ${unique}`,
        email: `merchant-${unique}@example.test`,
        mode: merchantOptions.mode ?? 'sandbox',
      });
    },
    createKey: async (shopId, scopes) => (await createApiKey(context, shopId, scopes)).api_key,
    async close() {
      await app.close();
      await crypto.close();
      await database.close();
    },
  };
}

// Builds the real application on a fresh test database, with a manual clock and
// a silent logger, plus helpers to create merchants and keys through the real service.
// The app is built from the gateway's modules (modules.ts), closed with the app.
import type { FastifyInstance } from 'fastify';
import { Registry } from 'prom-client';
import { ManualClock } from '../../src/clock.ts';
import { buildApp, type App, type BuildAppOptions } from '../../src/app.ts';
import { loadConfig, type Config } from '../../src/config.ts';
import type { AppContext } from '../../src/context.ts';
import type { CryptoChain } from '../../src/crypto/chain/crypto-chain.ts';
import type { DatabaseBackend } from '../../src/db/database.ts';
import type { GatewayModule } from '../../src/gateway-module.ts';
import { DependencyHealth } from '../../src/health/dependency-health.ts';
import { createLogger } from '../../src/logger.ts';
import { closeModules, createModules } from '../../src/modules.ts';
import type { PaymentsOptions } from '../../src/payments/payments-module.ts';
import type { CabinetModuleService } from '../../src/cabinet/cabinet-module.ts';
import { createApiKey, createMerchant, type CreatedMerchant } from '../../src/merchants/merchant-service.ts';
import type { ApiKeyScope } from '../../src/http/api-scopes.ts';
import type { ShopMode } from '../../src/merchants/merchant-tables.ts';
import { openTestDatabase, type TestDatabase } from './databases.ts';
import { testKeyring } from './keyring.ts';
import { uniqueName } from './seeded-random.ts';

export interface TestApp {
  readonly app: FastifyInstance;
  readonly context: AppContext;
  readonly clock: ManualClock;
  readonly database: TestDatabase;
  /** The modules the app was built from (their workers: `createWorkers(modules)`). */
  readonly modules: readonly GatewayModule[];
  /** `crypto.chain` is the chain handle the app's crypto routes and workers use. */
  readonly crypto: { readonly chain: CryptoChain };
  /** The cabinet module's service: its route table with each route's access rule. */
  readonly cabinet: CabinetModuleService;
  createMerchant(options?: { mode?: ShopMode; name?: string }): Promise<CreatedMerchant>;
  createKey(shopId: string, scopes: readonly ApiKeyScope[]): Promise<string>;
  close(): Promise<void>;
}

export function testConfig(overrides: Partial<Config> = {}): Config {
  return {
    ...loadConfig({
      PAYGATE_DATA_DIR: 'memory://',
      LOG_LEVEL: 'silent',
      PAYGATE_ALLOW_HTTP_WEBHOOKS: '1',
      PAYGATE_WEBHOOK_ALLOW_PRIVATE: '1',
      // Counted on the tests' manual clock, which a long file may never move a minute on; the budget's own test sets it low.
      PAYGATE_SANDBOX_HELPER_CALLS_PER_MINUTE: '1000000',
    }),
    publicUrl: 'http://paygate.test',
    ...overrides,
  };
}

export async function createTestContext(
  backend: DatabaseBackend,
  options: { config?: Partial<Config>; clock?: ManualClock } = {},
): Promise<{ context: AppContext; clock: ManualClock; database: TestDatabase }> {
  const config = testConfig(options.config);
  const database = await openTestDatabase(backend, { timeouts: config.databaseTimeouts });
  const clock = options.clock ?? new ManualClock(new Date('2026-11-01T10:00:00.000Z'));
  const logger = createLogger(config);
  const context: AppContext = {
    db: database.db,
    backend,
    clock,
    config,
    metrics: new Registry(),
    logger,
    health: new DependencyHealth(logger),
    keyring: testKeyring,
  };
  return { context, clock, database };
}

/** The gateway's modules built on `context` and the app mounting them; closing the app closes the modules. */
export async function buildAppWithModules(
  context: AppContext,
  options: BuildAppOptions = {},
  chain?: CryptoChain,
  payments?: PaymentsOptions,
): Promise<{ app: App; modules: readonly GatewayModule[]; chain: CryptoChain; cabinet: CabinetModuleService }> {
  const built = createModules(context, { chain, payments });
  const app = await buildApp(context, built, options);
  app.addHook('onClose', () => closeModules(built.list));
  return { app, modules: built.list, chain: built.chain, cabinet: built.cabinet };
}

/** The app of the gateway's modules on `context`, as `paygate serve` builds it. */
export async function buildTestApp(context: AppContext, options: BuildAppOptions = {}): Promise<App> {
  return (await buildAppWithModules(context, options)).app;
}

export async function createTestApp(
  backend: DatabaseBackend,
  options: {
    config?: Partial<Config>;
    clock?: ManualClock;
    app?: BuildAppOptions;
    acquirerProviders?: PaymentsOptions['acquirerProviders'];
    /** Makes the chain of the crypto modules instead of the configured one (closed with the app). */
    chain?: (context: AppContext) => CryptoChain;
  } = {},
): Promise<TestApp> {
  const { context, clock, database } = await createTestContext(backend, options);
  const { app, modules, chain, cabinet } = await buildAppWithModules(context, options.app, options.chain?.(context), {
    acquirerProviders: options.acquirerProviders,
  });
  await app.ready();
  return {
    app,
    context,
    clock,
    database,
    modules,
    crypto: { chain },
    cabinet,
    createMerchant: (merchantOptions = {}) => {
      const unique = uniqueName('merchant');
      return createMerchant(context, {
        name: merchantOptions.name ?? `Test shop ${unique}`,
        email: `merchant-${unique}@example.test`,
        mode: merchantOptions.mode ?? 'sandbox',
      });
    },
    createKey: async (shopId, scopes) => (await createApiKey(context, shopId, scopes)).api_key,
    async close() {
      await app.close();
      await database.close();
    },
  };
}

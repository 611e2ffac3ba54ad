// A PostgreSQL restart (the connection cut under a running gateway, its workers and
// its requests) is logged as one outage: one warn line for the database when it
// starts, one info line when it ends, and no error-level line or stack in between,
// however many worker passes and requests failed meanwhile.
import { afterEach, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.ts';
import type { AppContext, Worker } from '../../src/context.ts';
import { openDatabase, type DatabaseHandle } from '../../src/db/database.ts';
import { DependencyHealth } from '../../src/health/dependency-health.ts';
import type { Notifications } from '../../src/db/notifications.ts';
import { createMerchant } from '../../src/merchants/merchant-service.ts';
import { createWorkers } from '../../src/modules.ts';
import { buildAppWithModules, createTestContext } from '../support/app.ts';
import { TEST_DATABASE_URL, type TestDatabase } from '../support/databases.ts';
import { capturingLogger, LEVEL } from '../support/log-capture.ts';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.ts';

const WAIT = { timeout: 60_000, interval: 100 };

// The restart is a cut of a PostgreSQL server's connections; without one the suite is skipped, saying so.
const backend = 'postgres';
describe.skipIf(!TEST_DATABASE_URL)(
  `a database restart under a running gateway on postgres${TEST_DATABASE_URL ? '' : ' (skipped: TEST_DATABASE_URL is not set)'}`,
  () => {
    let parts:
      | {
          app: App;
          workers: Worker[];
          notifications: Notifications;
          relayed: DatabaseHandle;
          proxy: TcpProxy;
          database: TestDatabase;
          cut: boolean;
        }
      | undefined;
    afterEach(async () => {
      if (!parts) return;
      if (parts.cut) await parts.proxy.restore();
      await Promise.all([parts.app.close(), ...parts.workers.map((worker) => worker.stop())]);
      await parts.notifications.close();
      await parts.relayed.close();
      await parts.proxy.close();
      await parts.database.close();
      parts = undefined;
    });

    it(
      'logs one warn when the outage starts and one info when it ends, no error-level stack',
      { timeout: 180_000 },
      async () => {
        const { context: direct, database } = await createTestContext(backend, { config: { logLevel: 'debug' } });
        const { logger, lines } = capturingLogger({ logLevel: 'debug' });
        const proxy = await startTcpProxy(database.url!);
        const relayed = await openDatabase({ url: proxy.url, poolSize: 4 });
        const notifications = await relayed.listen({ onError: () => undefined });
        const context: AppContext = {
          ...direct,
          db: relayed.db,
          logger,
          health: new DependencyHealth(logger),
          notifications,
        };
        notifications.onListeningChange((listening) => (listening ? context.health.up('database') : undefined));
        const { app, modules } = await buildAppWithModules(context);
        await app.ready();
        const workers = createWorkers(modules);
        parts = { app, workers, notifications, relayed, proxy, database, cut: false };
        const key = (await createMerchant(context, { name: 'Restart shop', email: 'restart@example.test' })).api_key;
        for (const worker of workers) worker.start();
        const account = () =>
          app.inject({ method: 'GET', url: '/v1/account', headers: { authorization: `Bearer ${key}` } });
        expect((await account()).statusCode).toBe(200);

        await proxy.cut();
        parts.cut = true;
        for (let i = 0; i < 5; i++) expect((await account()).statusCode).toBe(503);
        // Worker passes fail too (each says so at debug level only): wait for several of them.
        await expect
          .poll(() => lines.filter((line) => line.level === LEVEL.debug && line.dependency === 'database').length, WAIT)
          .toBeGreaterThanOrEqual(3);

        await proxy.restore();
        parts.cut = false;
        await expect.poll(async () => (await account()).statusCode, WAIT).toBe(200);
        await expect
          .poll(
            () =>
              lines.filter(
                (line) => line.dependency === 'database' && line.level === LEVEL.info && line.msg.includes('outage'),
              ).length,
            WAIT,
          )
          .toBe(1);

        const outageLines = lines.filter(
          (line) => line.dependency === 'database' && line.level >= LEVEL.info && line.msg.includes('outage'),
        );
        expect(outageLines.map((line) => line.level)).toEqual([LEVEL.warn, LEVEL.info]);
        const loud = lines.filter((line) => line.level >= LEVEL.error);
        expect(loud, JSON.stringify(loud.slice(0, 3))).toEqual([]);
        const stacksAtInfoOrAbove = lines.filter((line) => line.level >= LEVEL.info && line.err?.stack !== undefined);
        expect(stacksAtInfoOrAbove, JSON.stringify(stacksAtInfoOrAbove.slice(0, 3))).toEqual([]);
      },
    );
  },
);

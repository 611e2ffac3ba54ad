// Gateway instances that share one database, for what must hold across
// instances (a revoked key, a changed setting): each is an app with its own
// listener for the database's notifications, and on PostgreSQL the second one
// also has its own pool, as another process would.
import type { App } from '../../src/app.ts';
import type { AppContext } from '../../src/context.ts';
import { openDatabase, type DatabaseHandle } from '../../src/db/database.ts';
import type { Notifications } from '../../src/db/notifications.ts';
import { buildTestApp, type createTestContext } from './app.ts';

export interface Instance {
  readonly app: App;
  readonly context: AppContext;
  readonly notifications: Notifications;
  close(): Promise<void>;
}

/** An app on `context` with these notifications; closing it closes them and `handle`. */
export async function startInstance(
  context: AppContext,
  notifications: Notifications,
  handle?: DatabaseHandle,
): Promise<Instance> {
  const app = await buildTestApp({ ...context, notifications });
  await app.ready();
  return {
    app,
    context: { ...context, notifications },
    notifications,
    async close() {
      await app.close();
      await notifications.close();
      await handle?.close();
    },
  };
}

/** Two instances on the test context's database: on PostgreSQL the second has a pool and a listener of its own. */
export async function startTwoInstances(
  base: Awaited<ReturnType<typeof createTestContext>>,
): Promise<[Instance, Instance]> {
  const first = await startInstance(base.context, await base.database.listen());
  if (base.context.backend !== 'postgres')
    return [first, await startInstance(base.context, await base.database.listen())];
  const handle = await openDatabase({ url: base.database.url, poolSize: 5 });
  return [first, await startInstance({ ...base.context, db: handle.db }, await handle.listen(), handle)];
}

// Database notifications (src/db/notifications.ts, migration 0014): a change
// that makes work due or changes a key notifies listeners once it commits, not
// before and not when it rolls back; the PostgreSQL listener comes back after
// its connection is killed and says so.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API_KEYS_CHANNEL, WORK_CHANNEL, WORK_TOPICS, type Notifications } from '../../src/db/notifications.ts';
import { inTransaction } from '../../src/db/transaction.ts';
import { revokeApiKey } from '../../src/merchants/merchant-service.ts';
import { emit } from '../../src/webhooks/outbox.ts';
import { backends, itOnServer } from '../support/databases.ts';
import { createTestApp, type TestApp } from '../support/app.ts';

type Channel = typeof WORK_CHANNEL | typeof API_KEYS_CHANNEL;
const MARKER_PREFIX = 'test-marker-';

/** The payloads heard on `channel`; `waitFor` resolves when a payload arrives (the test timeout is the only bound). */
function collect(notifications: Notifications, channel: Channel) {
  const heard: string[] = [];
  const waiting = new Map<string, () => void>();
  const stop = notifications.subscribe(channel, (payload) => {
    heard.push(payload);
    waiting.get(payload)?.();
  });
  return {
    heard,
    stop,
    waitFor(payload: string): Promise<void> {
      if (heard.includes(payload)) return Promise.resolve();
      return new Promise((resolve) => waiting.set(payload, resolve));
    },
  };
}

/**
 * Proves that nothing else was heard before now: notifies a marker, which arrives after
 * whatever committed before it, and waits for it; what was heard until then is returned.
 */
async function heardBeforeMarker(
  testApp: TestApp,
  listener: ReturnType<typeof collect>,
  channel: Channel,
  marker: string,
): Promise<string[]> {
  await sql`select pg_notify(${channel}, ${marker})`.execute(testApp.context.db);
  await listener.waitFor(marker);
  return listener.heard.filter((payload) => !payload.startsWith(MARKER_PREFIX));
}

describe.each(backends)('database notifications on %s', (backend) => {
  let testApp: TestApp;
  let notifications: Notifications;
  beforeAll(async () => {
    testApp = await createTestApp(backend);
    notifications = await testApp.database.listen();
  });
  afterAll(async () => {
    await notifications.close();
    await testApp.close();
  });

  it('a new webhook delivery wakes the delivery worker once its transaction commits, and a rolled-back one does not', async () => {
    const merchant = await testApp.createMerchant();
    const work = collect(notifications, WORK_CHANNEL);
    try {
      await expect(
        inTransaction(testApp.context.db, async (tx) => {
          await emit(tx, testApp.clock, {
            shopId: merchant.shop_id,
            type: 'payment.paid',
            data: {},
            destination: 'http://127.0.0.1:9/hook',
          });
          throw new Error('rolled back');
        }),
      ).rejects.toThrow('rolled back');
      expect(await heardBeforeMarker(testApp, work, WORK_CHANNEL, `${MARKER_PREFIX}after-rollback`)).toEqual([]);

      // Three events in one transaction: PostgreSQL folds the identical notifications into one.
      await inTransaction(testApp.context.db, async (tx) => {
        for (let index = 0; index < 3; index++) {
          await emit(tx, testApp.clock, {
            shopId: merchant.shop_id,
            type: 'payment.paid',
            data: { index },
            destination: 'http://127.0.0.1:9/hook',
          });
        }
      });
      await work.waitFor(WORK_TOPICS.webhookDelivery);
      expect(await heardBeforeMarker(testApp, work, WORK_CHANNEL, `${MARKER_PREFIX}after-commit`)).toEqual([
        WORK_TOPICS.webhookDelivery,
      ]);
    } finally {
      work.stop();
    }
  });

  it('revoking a key, by whatever process, notifies every listener with the key id', async () => {
    const merchant = await testApp.createMerchant();
    const key = await testApp.createKey(merchant.shop_id, ['read']);
    const keyId = (
      await testApp.context.db
        .selectFrom('api_keys')
        .select('id')
        .where('key_prefix', '=', key.slice(0, 12))
        .executeTakeFirstOrThrow()
    ).id;
    const keys = collect(notifications, API_KEYS_CHANNEL);
    try {
      // No notifications in these deps, as in the `paygate key revoke` process: only the database tells.
      await revokeApiKey({ db: testApp.context.db, clock: testApp.clock, keyring: testApp.context.keyring }, keyId);
      await keys.waitFor(`key:${keyId}`);
      await sql`update shops set mode = 'live' where id = ${merchant.shop_id}`.execute(testApp.context.db);
      await keys.waitFor(`shop:${merchant.shop_id}`);
    } finally {
      keys.stop();
    }
  });

  itOnServer(backend)(
    'the listener comes back after its connection is killed, says so, and hears what follows',
    async () => {
      const changes: boolean[] = [];
      let backAgain!: () => void;
      const lostAndBack = new Promise<void>((resolve) => (backAgain = resolve));
      const stopWatching = notifications.onListeningChange((listening) => {
        changes.push(listening);
        if (changes.length === 2) backAgain();
      });
      const work = collect(notifications, WORK_CHANNEL);
      try {
        expect(notifications.listening).toBe(true);
        const killed = await sql<{ killed: boolean }>`
        select pg_terminate_backend(pid) as killed from pg_stat_activity
         where application_name = 'paygate-listener' and datname = current_database()`.execute(testApp.context.db);
        expect(killed.rows.map((row) => row.killed)).toEqual([true]);
        await lostAndBack;
        expect(changes).toEqual([false, true]);
        expect(notifications.listening).toBe(true);

        const merchant = await testApp.createMerchant();
        await inTransaction(testApp.context.db, (tx) =>
          emit(tx, testApp.clock, {
            shopId: merchant.shop_id,
            type: 'payment.paid',
            data: {},
            destination: 'http://127.0.0.1:9/hook',
          }),
        );
        await work.waitFor(WORK_TOPICS.webhookDelivery);
      } finally {
        work.stop();
        stopWatching();
      }
    },
  );
});

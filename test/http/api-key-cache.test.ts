// API keys are cached in each instance, yet a key revoked anywhere fails on
// every instance as soon as the database's notification of the change arrives.
// Two app instances share one database (on PostgreSQL: two pools and two
// listeners; on PGlite: one process, two apps each with its own cache and
// listener). Revocations are made as the `paygate key revoke` process makes
// them, with nothing but the database to tell the instances. The gateway's
// clock (the cache's clock) stands still unless a test moves it, so no entry
// ages out by itself: what drops an entry is the notification.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.ts';
import { openDatabase } from '../../src/db/database.ts';
import { API_KEYS_CHANNEL, listenOnPostgres, type Notifications } from '../../src/db/notifications.ts';
import {
  createApiKeyCache,
  TRUSTED_WHILE_LISTENING_MS,
  TRUSTED_WHILE_NOT_LISTENING_MS,
} from '../../src/merchants/api-key-cache.ts';
import {
  authenticateApiKey,
  createApiKey,
  createMerchant,
  revokeApiKey,
} from '../../src/merchants/merchant-service.ts';
import type { ApiPrincipal } from '../../src/http/authentication.ts';
import { backends, describeOnServer } from '../support/databases.ts';
import { createTestContext } from '../support/app.ts';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.ts';
import { startInstance, startTwoInstances, type Instance } from '../support/instances.ts';
import { notified } from '../support/notified.ts';
import { uniqueName } from '../support/seeded-random.ts';

/** Resolves once `notifications` report that the listening connection is down. */
function stoppedListening(notifications: Notifications): Promise<void> {
  if (!notifications.listening) return Promise.resolve();
  return new Promise((resolve) => {
    const unsubscribe = notifications.onListeningChange((listening) => {
      if (listening) return;
      unsubscribe();
      resolve();
    });
  });
}

describe.each(backends)('the API-key cache on %s', (backend) => {
  let base: Awaited<ReturnType<typeof createTestContext>>;
  let first: Instance;
  let second: Instance;

  beforeAll(async () => {
    base = await createTestContext(backend);
    // On PostgreSQL the second is another process as far as the database can tell: its own pool and listener.
    [first, second] = await startTwoInstances(base);
  });
  afterAll(async () => {
    await second.close();
    await first.close();
    await base.database.close();
  });

  /** What the CLI's process holds: the database, and no notifications of its own. */
  const cliDeps = () => ({ db: base.context.db, clock: base.clock, keyring: base.context.keyring });

  async function newKey(): Promise<{ apiKey: string; keyId: string; shopId: string }> {
    const unique = uniqueName('cache');
    const merchant = await createMerchant(cliDeps(), {
      name: `Cache shop ${unique}`,
      email: `cache-${unique}@example.test`,
    });
    const key = await createApiKey(cliDeps(), merchant.shop_id, ['read']);
    return { apiKey: key.api_key, keyId: key.key_id, shopId: merchant.shop_id };
  }

  const account = (instance: Instance, apiKey: string) =>
    instance.app.inject({ method: 'GET', url: '/v1/account', headers: { authorization: `Bearer ${apiKey}` } });

  /** Resolves when the database's notification that `payload` changed has reached both instances. */
  const notifiedToBoth = (payload: string) =>
    Promise.all([first, second].map((instance) => notified(instance.notifications, payload)));

  it('a key revoked by another process fails on both instances once the notification arrives, though both had it cached', async () => {
    const key = await newKey();
    for (const instance of [first, second]) expect((await account(instance, key.apiKey)).statusCode).toBe(200);
    const arrived = notifiedToBoth(`key:${key.keyId}`);
    await revokeApiKey(cliDeps(), key.keyId);
    await arrived;
    for (const instance of [first, second]) {
      const response = await account(instance, key.apiKey);
      expect(response.statusCode).toBe(401);
      expect(response.json()).toMatchObject({ error: 'unauthorized', message: 'The API key has been revoked.' });
    }
  });

  it('a key revoked through an instance fails on that instance at once, and on the other once notified', async () => {
    const key = await newKey();
    for (const instance of [first, second]) expect((await account(instance, key.apiKey)).statusCode).toBe(200);
    const arrived = notified(second.notifications, `key:${key.keyId}`);
    await revokeApiKey(first.context, key.keyId);
    expect((await account(first, key.apiKey)).statusCode).toBe(401);
    await arrived;
    expect((await account(second, key.apiKey)).statusCode).toBe(401);
  });

  it("a change of the key's shop (its mode) reaches both instances through the notification", async () => {
    const key = await newKey();
    for (const instance of [first, second])
      expect((await account(instance, key.apiKey)).json()).toMatchObject({ mode: 'sandbox' });
    const arrived = notifiedToBoth(`shop:${key.shopId}`);
    await sql`update shops set mode = 'live' where id = ${key.shopId}`.execute(base.context.db);
    await arrived;
    for (const instance of [first, second])
      expect((await account(instance, key.apiKey)).json()).toMatchObject({ mode: 'live' });
  });

  it('keys are served from the cache: a revocation nobody is told of takes effect only when the entry ages out', async () => {
    const key = await newKey();
    expect((await account(second, key.apiKey)).statusCode).toBe(200);
    await sql`alter table api_keys disable trigger api_keys_changed_notify`.execute(base.context.db);
    try {
      await revokeApiKey(cliDeps(), key.keyId);
      // Still cached: no lookup was made, up to the backstop's last moment.
      expect((await account(second, key.apiKey)).statusCode).toBe(200);
      base.clock.advance(TRUSTED_WHILE_LISTENING_MS);
      expect((await account(second, key.apiKey)).statusCode).toBe(200);
      // The backstop: trusted no longer than TRUSTED_WHILE_LISTENING_MS.
      base.clock.advance(1);
      expect((await account(second, key.apiKey)).statusCode).toBe(401);
    } finally {
      await sql`alter table api_keys enable trigger api_keys_changed_notify`.execute(base.context.db);
    }
  });

  describeOnServer(backend)('with the listening connection cut', () => {
    let proxy: TcpProxy;
    let cutOff: Instance;
    beforeAll(async () => {
      proxy = await startTcpProxy(base.database.url!);
      // Queries go straight to the server; only the listener goes through the relay.
      const handle = await openDatabase({ url: base.database.url, poolSize: 5 });
      cutOff = await startInstance(
        { ...base.context, db: handle.db },
        await listenOnPostgres({ url: proxy.url }),
        handle,
      );
    });
    afterAll(async () => {
      await cutOff.close();
      await proxy.close();
    });

    it('an instance that cannot hear notifications trusts its cache for a second at most', async () => {
      const key = await newKey();
      expect(cutOff.notifications.listening).toBe(true);
      expect((await account(cutOff, key.apiKey)).statusCode).toBe(200);
      const stopped = stoppedListening(cutOff.notifications);
      await proxy.cut();
      await stopped;
      // Cached while it could not listen; the revocation's notification never reaches it.
      expect((await account(cutOff, key.apiKey)).statusCode).toBe(200);
      await revokeApiKey(cliDeps(), key.keyId);
      base.clock.advance(TRUSTED_WHILE_NOT_LISTENING_MS);
      expect((await account(cutOff, key.apiKey)).statusCode).toBe(200);
      base.clock.advance(1);
      expect((await account(cutOff, key.apiKey)).statusCode).toBe(401);
      await proxy.restore();
    });
  });
});

describe.each(backends)('the API-key cache itself on %s', (backend) => {
  let base: Awaited<ReturnType<typeof createTestContext>>;
  let notifications: Notifications;
  beforeAll(async () => {
    base = await createTestContext(backend);
    notifications = await base.database.listen();
  });
  afterAll(async () => {
    await notifications.close();
    await base.database.close();
  });

  const deps = () => ({ db: base.context.db, clock: base.clock, keyring: base.context.keyring });

  async function newKey(): Promise<{ apiKey: string; keyId: string }> {
    const unique = uniqueName('cache');
    const merchant = await createMerchant(deps(), {
      name: `Cache shop ${unique}`,
      email: `cache-${unique}@example.test`,
    });
    return { apiKey: merchant.api_key, keyId: (await createApiKey(deps(), merchant.shop_id, ['read'])).key_id };
  }

  it('unknown and revoked keys never take a place in the cache; valid ones take one each', async () => {
    const cache = createApiKeyCache<ApiPrincipal>(notifications, base.clock);
    try {
      for (let index = 0; index < 200; index++) {
        const unknown = `sk_test_${Buffer.from(`unknown-${index}`.padEnd(32, '.')).toString('base64url')}`;
        await expect(authenticateApiKey(base.context.db, unknown, cache)).rejects.toMatchObject({
          code: 'unauthorized',
        });
      }
      const revoked = await newKey();
      await revokeApiKey(deps(), (await authenticateApiKey(base.context.db, revoked.apiKey)).keyId);
      await expect(authenticateApiKey(base.context.db, revoked.apiKey, cache)).rejects.toMatchObject({
        code: 'unauthorized',
      });
      expect(cache.size).toBe(0);
      const valid = await newKey();
      await authenticateApiKey(base.context.db, valid.apiKey, cache);
      await authenticateApiKey(base.context.db, valid.apiKey, cache);
      expect(cache.size).toBe(1);
    } finally {
      cache.close();
    }
  });

  it('holds at most its bound of keys, the least recently used leaving first', async () => {
    const cache = createApiKeyCache<ApiPrincipal>(notifications, base.clock, { maxEntries: 2 });
    try {
      const keys = [await newKey(), await newKey(), await newKey()];
      for (const key of keys) await authenticateApiKey(base.context.db, key.apiKey, cache);
      expect(cache.size).toBe(2);
    } finally {
      cache.close();
    }
  });

  it('a lookup that overlapped an invalidation is not stored (it may have read the row before the change)', async () => {
    const cache = createApiKeyCache<ApiPrincipal>(notifications, base.clock);
    try {
      const key = await newKey();
      const principal = await authenticateApiKey(base.context.db, key.apiKey);
      const hash = new Uint8Array(32).fill(7);
      const ticket = cache.beginLookup();
      notifications.deliverLocally(API_KEYS_CHANNEL, `key:${principal.keyId}`);
      cache.store(hash, principal, ticket);
      expect(cache.get(hash)).toBeUndefined();
      cache.store(hash, principal, cache.beginLookup());
      expect(cache.get(hash)).toBe(principal);
    } finally {
      cache.close();
    }
  });

  it('an entry is trusted for TRUSTED_WHILE_LISTENING_MS from the start of its lookup, then looked up again', async () => {
    const clock = new ManualClock();
    const cache = createApiKeyCache<ApiPrincipal>(notifications, clock);
    try {
      const principal = await authenticateApiKey(base.context.db, (await newKey()).apiKey);
      const hash = new Uint8Array(32).fill(9);
      const ticket = cache.beginLookup();
      clock.advance(40);
      cache.store(hash, principal, ticket);
      clock.advance(TRUSTED_WHILE_LISTENING_MS - 40);
      expect(cache.get(hash)).toBe(principal);
      clock.advance(1);
      expect(cache.get(hash)).toBeUndefined();
      expect(cache.size).toBe(0);
    } finally {
      cache.close();
    }
  });

  it('an entry stored before the clock was set back is not trusted, and is looked up again', async () => {
    const clock = new ManualClock();
    const cache = createApiKeyCache<ApiPrincipal>(notifications, clock);
    try {
      const principal = await authenticateApiKey(base.context.db, (await newKey()).apiKey);
      const hash = new Uint8Array(32).fill(11);
      cache.store(hash, principal, cache.beginLookup());
      expect(cache.get(hash)).toBe(principal);
      clock.advance(-1);
      expect(cache.get(hash)).toBeUndefined();
    } finally {
      cache.close();
    }
  });
});

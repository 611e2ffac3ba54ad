// Payment creation reads the shop's method settings from a per-instance cache
// (one round trip per payment: the insert), yet a settings change made anywhere
// reaches every instance as soon as the database's notification arrives. Two app
// instances share one database (on PostgreSQL each with its own pool and
// listener); changes are made as the `paygate shop method` command makes them,
// with only the database to tell. The gateway's clock (the cache's clock) stands
// still unless a test moves it, so no entry ages out by itself.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiKey, createMerchant } from '../../src/merchants/merchant-service.ts';
import { OPERATOR } from '../../src/audit/audit-service.ts';
import { updateShopMethod } from '../../src/payments/payment-methods.ts';
import { backends } from '../support/databases.ts';
import { createTestContext } from '../support/app.ts';
import { startTwoInstances, type Instance } from '../support/instances.ts';
import { notified } from '../support/notified.ts';
import { uniqueName } from '../support/seeded-random.ts';

/** How long an entry is trusted while the instance listens (method-settings-cache.ts). */
const TRUSTED_WHILE_LISTENING_MS = 5_000;

describe.each(backends)('method settings cache on %s', (backend) => {
  let base: Awaited<ReturnType<typeof createTestContext>>;
  let first: Instance;
  let second: Instance;

  beforeAll(async () => {
    base = await createTestContext(backend);
    [first, second] = await startTwoInstances(base);
  });
  afterAll(async () => {
    await second?.close();
    await first?.close();
    await base?.database.close();
  });

  const cliDeps = () => ({ db: base.context.db, clock: base.clock, keyring: base.context.keyring });

  async function shopWithKey(): Promise<{ shopId: string; apiKey: string }> {
    const unique = uniqueName('settings');
    const merchant = await createMerchant(cliDeps(), {
      name: `Settings ${unique}`,
      email: `settings-${unique}@example.test`,
    });
    const key = await createApiKey(cliDeps(), merchant.shop_id, ['payments']);
    return { shopId: merchant.shop_id, apiKey: key.api_key };
  }

  async function cardTotal(instance: Instance, apiKey: string): Promise<number> {
    const response = await instance.app.inject({
      method: 'POST',
      url: '/v1/payments',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      payload: JSON.stringify({ amount: 1000, currency: 'RUB', method: 'card' }),
    });
    expect(response.statusCode, response.body).toBe(201);
    return response.json().amount_total as number;
  }

  /** Resolves when the database's notification of a change of the shop has reached both instances. */
  const shopNotifiedToBoth = (shopId: string) =>
    Promise.all([first, second].map((instance) => notified(instance.notifications, `shop:${shopId}`)));

  it('a fee change made by another process reaches both instances through the notification', async () => {
    const { shopId, apiKey } = await shopWithKey();
    expect(await cardTotal(first, apiKey)).toBe(1000);
    expect(await cardTotal(second, apiKey)).toBe(1000);
    const arrived = shopNotifiedToBoth(shopId);
    await updateShopMethod(cliDeps(), shopId, 'card', { feeBasisPoints: 250 }, OPERATOR);
    await arrived;
    for (const instance of [first, second]) expect(await cardTotal(instance, apiKey)).toBe(1025);
  });

  it('switching a method off refuses it on both instances once notified', async () => {
    const { shopId, apiKey } = await shopWithKey();
    for (const instance of [first, second]) await cardTotal(instance, apiKey);
    const arrived = shopNotifiedToBoth(shopId);
    await updateShopMethod(cliDeps(), shopId, 'card', { enabled: false }, OPERATOR);
    await arrived;
    for (const instance of [first, second]) {
      const response = await instance.app.inject({
        method: 'POST',
        url: '/v1/payments',
        headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
        payload: JSON.stringify({ amount: 1000, currency: 'RUB', method: 'card' }),
      });
      expect(response.json().error).toBe('method_unavailable');
    }
  });

  it('settings are served from the cache: a change that sends no notification is seen only when the entry ages out', async () => {
    const { shopId, apiKey } = await shopWithKey();
    expect(await cardTotal(second, apiKey)).toBe(1000);
    // Without the trigger nothing tells the instances: what they answer now comes from their cache.
    await sql`alter table payment_method_settings disable trigger payment_method_settings_changed_notify`.execute(
      base.context.db,
    );
    try {
      await updateShopMethod(cliDeps(), shopId, 'card', { feeBasisPoints: 500 }, OPERATOR);
      expect(await cardTotal(second, apiKey)).toBe(1000);
      base.clock.advance(TRUSTED_WHILE_LISTENING_MS);
      expect(await cardTotal(second, apiKey)).toBe(1000);
      base.clock.advance(1);
      expect(await cardTotal(second, apiKey)).toBe(1050);
    } finally {
      await sql`alter table payment_method_settings enable trigger payment_method_settings_changed_notify`.execute(
        base.context.db,
      );
    }
    const arrived = notified(second.notifications, `shop:${shopId}`);
    await updateShopMethod(cliDeps(), shopId, 'card', { feeBasisPoints: 100 }, OPERATOR);
    await arrived;
    expect(await cardTotal(second, apiKey)).toBe(1010);
  });
});

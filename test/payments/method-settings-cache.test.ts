// Issue 12: payment creation reads the shop's method settings from a per-instance
// cache (one round trip per payment: the insert), yet a settings change made
// anywhere reaches every instance within a second. Two app instances share one
// database (on PostgreSQL each with its own pool and listener); changes are made
// as the `paygate shop method` command makes them, with only the database to tell.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiKey, createMerchant } from '../../src/merchants/merchant-service.ts';
import { updateShopMethod } from '../../src/payments/payment-methods.ts';
import { backends } from '../support/databases.ts';
import { createTestContext } from '../support/app.ts';
import { startTwoInstances, type Instance } from '../support/instances.ts';
import { uniqueName } from '../support/seeded-random.ts';

const CHANGE_VISIBLE_MS_MAX = 1_000;

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

  it('a fee change made by another process reaches both instances within a second', async () => {
    const { shopId, apiKey } = await shopWithKey();
    expect(await cardTotal(first, apiKey)).toBe(1000);
    expect(await cardTotal(second, apiKey)).toBe(1000);
    await updateShopMethod(cliDeps(), shopId, 'card', { feeBasisPoints: 250 });
    const changedAt = performance.now();
    for (const instance of [first, second]) {
      await expect.poll(() => cardTotal(instance, apiKey), { timeout: CHANGE_VISIBLE_MS_MAX, interval: 20 }).toBe(1025);
    }
    expect(performance.now() - changedAt).toBeLessThan(CHANGE_VISIBLE_MS_MAX);
  });

  it('switching a method off refuses it at once on both instances', async () => {
    const { shopId, apiKey } = await shopWithKey();
    await cardTotal(second, apiKey);
    await updateShopMethod(cliDeps(), shopId, 'card', { enabled: false });
    for (const instance of [first, second]) {
      await expect
        .poll(
          async () =>
            (
              await instance.app.inject({
                method: 'POST',
                url: '/v1/payments',
                headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
                payload: JSON.stringify({ amount: 1000, currency: 'RUB', method: 'card' }),
              })
            ).json().error,
          { timeout: CHANGE_VISIBLE_MS_MAX, interval: 20 },
        )
        .toBe('method_unavailable');
    }
  });

  it('settings are served from the cache: a change that sends no notification is not seen at once', async () => {
    const { shopId, apiKey } = await shopWithKey();
    expect(await cardTotal(second, apiKey)).toBe(1000);
    // Without the trigger nothing tells the instances: what they answer now comes from their cache.
    await sql`alter table payment_method_settings disable trigger payment_method_settings_changed_notify`.execute(
      base.context.db,
    );
    try {
      await updateShopMethod(cliDeps(), shopId, 'card', { feeBasisPoints: 500 });
      expect(await cardTotal(second, apiKey)).toBe(1000);
    } finally {
      await sql`alter table payment_method_settings enable trigger payment_method_settings_changed_notify`.execute(
        base.context.db,
      );
    }
    await updateShopMethod(cliDeps(), shopId, 'card', { feeBasisPoints: 100 });
    await expect.poll(() => cardTotal(second, apiKey), { timeout: CHANGE_VISIBLE_MS_MAX, interval: 20 }).toBe(1010);
  });
});

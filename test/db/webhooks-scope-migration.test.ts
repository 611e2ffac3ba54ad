// Migration 0006 moves webhook settings behind the new `webhooks` scope without
// breaking existing integrations: unrevoked keys with a write scope get it, keys
// with only `read` (and revoked keys) do not.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readMigrationFiles } from '../../src/db/migrate.ts';
import { createApiKey, revokeApiKey } from '../../src/merchants/merchant-service.ts';
import type { ApiKeyScope } from '../../src/http/api-scopes.ts';
import { createTestApp, type TestApp } from '../support/app.ts';
import { backends } from '../support/databases.ts';

describe.each(backends)('migration 0006_webhooks_scope on %s', (backend) => {
  let testApp: TestApp;
  beforeAll(async () => {
    testApp = await createTestApp(backend);
  });
  afterAll(() => testApp.close());

  it('gives webhooks to unrevoked keys holding payments, crypto or payouts, and to no other key', async () => {
    const merchant = await testApp.createMerchant();
    const issue = async (scopes: ApiKeyScope[]) =>
      (await createApiKey(testApp.context, merchant.shop_id, scopes)).key_id;
    const keys = {
      read: await issue(['read']),
      payments: await issue(['payments']),
      cryptoAndRead: await issue(['crypto', 'read']),
      payouts: await issue(['payouts']),
      revokedPayments: await issue(['payments']),
      alreadyWebhooks: await issue(['webhooks', 'payments']),
    };
    await revokeApiKey(testApp.context, keys.revokedPayments);

    const migration = (await readMigrationFiles()).find((file) => file.version === '0006_webhooks_scope')!;
    await testApp.database.withScriptSession((session) => session.run(migration.sql));

    const rows = await testApp.context.db
      .selectFrom('api_keys')
      .select(['id', 'scopes'])
      .where('shop_id', '=', merchant.shop_id)
      .execute();
    const scopesOf = (id: string) => rows.find((row) => row.id === id)!.scopes;
    expect(scopesOf(keys.read)).toEqual(['read']);
    expect(scopesOf(keys.payments)).toEqual(['payments', 'webhooks']);
    expect(scopesOf(keys.cryptoAndRead)).toEqual(['crypto', 'read', 'webhooks']);
    expect(scopesOf(keys.payouts)).toEqual(['payouts', 'webhooks']);
    expect(scopesOf(keys.revokedPayments)).toEqual(['payments']);
    expect(scopesOf(keys.alreadyWebhooks)).toEqual(['webhooks', 'payments']);
  });
});

// Migration 0039 gives each ledger entry written before it its originating
// transfer's type (the reservation's, for a post or void), so the overview's day
// sums — which read the type on the entry — count the older entries too.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readMigrationFiles } from '../../src/db/migrate.ts';
import { createTestApp, type TestApp } from '../support/app.ts';
import { backends } from '../support/databases.ts';
import { postHelper, postPayment } from '../payments/payment-test-support.ts';

describe.each(backends)('migration 0039_ledger_operations_by_day on %s', (backend) => {
  let testApp: TestApp;
  beforeAll(async () => {
    testApp = await createTestApp(backend);
  });
  afterAll(() => testApp?.close());

  async function entriesWhoseTypeDiffers(): Promise<string> {
    const result = await sql<{ entries: string }>`
      select count(*)::text as entries from ledger_operations o join ledger_transfers t on t.id = o.origin_id
       where o.type is distinct from t.type`.execute(testApp.context.db);
    return result.rows[0]!.entries;
  }

  it('fills in the type of every entry written before it from the transfer that originated it', async () => {
    const merchant = await testApp.createMerchant();
    const payment = await postPayment(testApp, merchant.api_key, { amount: 500, currency: 'RUB' });
    expect(payment.statusCode).toBe(201);
    expect((await postHelper(testApp, merchant.api_key, payment.json().payment_id, 'pay')).statusCode).toBe(200);
    const migration = (await readMigrationFiles()).find((file) => file.version === '0039_ledger_operations_by_day')!;
    const backFill = migration.sql.slice(
      migration.sql.indexOf('update ledger_operations'),
      migration.sql.indexOf('create index'),
    );
    await testApp.database.withScriptSession(async (session) => {
      // The entries as they were before the migration: no type of their own.
      await session.run('update ledger_operations set type = null');
      await session.run(backFill);
    });
    expect(await entriesWhoseTypeDiffers()).toBe('0');
    const types = await sql<{ type: string }>`
      select distinct o.type from ledger_operations o join ledger_accounts a on a.id = o.account_id
       where a.merchant_id = ${merchant.merchant_id}`.execute(testApp.context.db);
    expect(types.rows.map((row) => row.type)).toEqual(['payment']);
  });
});

// Migration 0042_payment_refunds on a sandbox acquirer's book with a refunded
// charge: the one full refund a charge could have moves into the book of refunds
// under its key and amount, so the suspense refund's repeat still answers as before.
import { afterEach, describe, expect, it } from 'vitest';
import { migrate, readMigrationFiles } from '../../src/db/migrate.ts';
import { backends, openTestDatabase, type TestDatabase } from '../support/databases.ts';

describe.each(backends)('migration 0042_payment_refunds on %s', (backend) => {
  let database: TestDatabase | undefined;
  afterEach(async () => {
    await database?.close();
    database = undefined;
  });

  it("moves a charge's refund into the sandbox's book of refunds and drops the old columns", async () => {
    database = await openTestDatabase(backend, { migrated: false });
    const files = (await readMigrationFiles()).filter((file) => file.version < '0042');
    await database.withScriptSession(async (session) => {
      for (const file of files) await session.run(file.sql);
      await session.run(`
        insert into sandbox_acquirer_charges (charge_key, payment_id, method, amount_kopecks, status, created_at, updated_at, refund_key, refunded_at)
          values ('c-refunded', '00000000-0000-4000-8000-000000000001', 'sbp', 150000, 'succeeded', now(), now(), 'c-refunded:refund', '2026-11-01T10:00:00Z'),
                 ('c-kept', '00000000-0000-4000-8000-000000000002', 'card', 2000, 'succeeded', now(), now(), null, null);
        create table if not exists schema_migrations (version text primary key, applied_at timestamptz not null default now());
        insert into schema_migrations (version) values ${files.map((file) => `('${file.version}')`).join(', ')};
      `);
    });
    expect(await migrate(database)).toContain('0042_payment_refunds');
    const refunds = await database.db
      .selectFrom('sandbox_acquirer_refunds')
      .select(['refund_key', 'charge_key', 'amount_kopecks', 'created_at'])
      .execute();
    expect(refunds).toEqual([
      {
        refund_key: 'c-refunded:refund',
        charge_key: 'c-refunded',
        amount_kopecks: 150_000n,
        created_at: new Date('2026-11-01T10:00:00Z'),
      },
    ]);
    const columns = await database.withScriptSession((session) =>
      session.rows<{ column_name: string }>(
        "select column_name from information_schema.columns where table_name = 'sandbox_acquirer_charges' and column_name in ('refund_key', 'refunded_at')",
      ),
    );
    expect(columns).toEqual([]);
  });
});

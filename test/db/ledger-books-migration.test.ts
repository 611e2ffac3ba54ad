// Migration 0010 on a ledger with data: sandbox money goes to the sandbox book;
// money of a merchant with a live shop cannot be split automatically, so the
// migration stops with an error and changes nothing.
import { afterEach, describe, expect, it } from 'vitest';
import { migrate, readMigrationFiles } from '../../src/db/migrate.ts';
import { backends, openTestDatabase, type TestDatabase } from '../support/databases.ts';

describe.each(backends)('migration 0010_ledger_books on %s', (backend) => {
  let database: TestDatabase | undefined;
  afterEach(async () => {
    await database?.close();
    database = undefined;
  });

  /** A database migrated up to 0009, as the previous version left it, with one merchant's money in the ledger. */
  async function ledgerBeforeBooks(shopMode: 'sandbox' | 'live'): Promise<TestDatabase> {
    database = await openTestDatabase(backend, { migrated: false });
    const files = (await readMigrationFiles()).filter((file) => file.version < '0010');
    await database.withScriptSession(async (session) => {
      for (const file of files) await session.run(file.sql);
      await session.run(`
        insert into merchants (id, name, email, created_at) values ('m_1', 'Shop', 'm1@example.test', now());
        insert into shops (id, merchant_id, name, mode, webhook_secret, created_at) values ('s_1', 'm_1', 'Shop', '${shopMode}', 'whsec_x', now());
        insert into ledger_accounts (id, merchant_id, currency, kind, debits_must_not_exceed_credits, credits_posted, created_at)
          values ('acc_main', 'm_1', 'RUB', 'main', true, 1000, now());
        insert into ledger_accounts (id, merchant_id, currency, kind, debits_must_not_exceed_credits, debits_posted, created_at)
          values ('acc_settlement', null, 'RUB', 'settlement', false, 1000, now());
        insert into ledger_transfers (id, idempotency_key, debit_account_id, credit_account_id, amount, currency, type,
          reference_type, reference_id, status, chain_id, created_at)
          values ('trf_1', 'payment:p1', 'acc_settlement', 'acc_main', 1000, 'RUB', 'payment', 'payment', 'p1', 'posted', 'trf_1', now());
        create table if not exists schema_migrations (version text primary key, applied_at timestamptz not null default now());
        insert into schema_migrations (version) values ${files.map((file) => `('${file.version}')`).join(', ')};
      `);
    });
    return database;
  }

  it('puts the money of sandbox shops in the sandbox book', async () => {
    const db = await ledgerBeforeBooks('sandbox');
    expect(await migrate(db)).toContain('0010_ledger_books');
    const accounts = await db.db.selectFrom('ledger_accounts').select(['id', 'book']).orderBy('id').execute();
    expect(accounts).toEqual([
      { id: 'acc_main', book: 'sandbox' },
      { id: 'acc_settlement', book: 'sandbox' },
    ]);
  });

  it('stops, changing nothing, when a merchant with a live shop has money in the ledger', async () => {
    const db = await ledgerBeforeBooks('live');
    await expect(migrate(db)).rejects.toThrow(/sandbox and live money cannot be told apart automatically/);
    const applied = await db.withScriptSession((session) =>
      session.rows<{ version: string }>('select version from schema_migrations'),
    );
    expect(applied.map((row) => row.version)).not.toContain('0010_ledger_books');
    const columns = await db.withScriptSession((session) =>
      session.rows<{ column_name: string }>(
        "select column_name from information_schema.columns where table_name = 'ledger_accounts' and column_name = 'book'",
      ),
    );
    expect(columns).toEqual([]);
  });
});

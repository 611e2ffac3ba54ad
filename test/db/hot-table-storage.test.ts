// The hot tables' autovacuum and fill-factor settings (migration 0046, docs/operations.md
// "Growth") are taken by both backends: PGlite is PostgreSQL and keeps the same storage
// parameters in pg_class, so an embedded gateway is tuned like a server one.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backends, openTestDatabase, type TestDatabase } from '../support/databases.ts';

const APPEND_ONLY = ['webhook_events', 'webhook_attempts', 'ledger_transfers', 'ledger_operations'];
const CHURNING = [
  'payments',
  'payment_attempts',
  'webhook_deliveries',
  'idempotency_records',
  'crypto_outgoing_transfers',
  'crypto_scanned_blocks',
];

describe.each(backends)('storage parameters of the hot tables on %s', (backend) => {
  let database: TestDatabase;
  let options: Map<string, Map<string, string>>;

  beforeAll(async () => {
    database = await openTestDatabase(backend);
    const { rows } = await sql<{ relname: string; reloptions: string[] | null }>`
      select relname, reloptions from pg_class
       where relkind = 'r' and relnamespace = 'public'::regnamespace`.execute(database.db);
    options = new Map(
      rows.map((row) => [
        row.relname,
        new Map((row.reloptions ?? []).map((option) => option.split('=') as [string, string])),
      ]),
    );
  });

  afterAll(async () => {
    await database?.close();
  });

  it('vacuums the append-only tables after 2 % new rows and analyzes them after at most 2 %', () => {
    for (const table of APPEND_ONLY) {
      expect(options.get(table)?.get('autovacuum_vacuum_insert_scale_factor'), table).toBe('0.02');
      expect(Number(options.get(table)?.get('autovacuum_analyze_scale_factor')), table).toBeLessThanOrEqual(0.02);
    }
  });

  it('vacuums the updated and purged tables after at most 2 % dead rows', () => {
    for (const table of CHURNING) {
      expect(Number(options.get(table)?.get('autovacuum_vacuum_scale_factor')), table).toBeLessThanOrEqual(0.02);
      expect(Number(options.get(table)?.get('autovacuum_analyze_scale_factor')), table).toBeLessThanOrEqual(0.02);
    }
  });

  it('leaves room on the pages of the tables whose updates can be HOT', () => {
    expect(options.get('webhook_deliveries')?.get('fillfactor')).toBe('70');
    expect(options.get('crypto_outgoing_transfers')?.get('fillfactor')).toBe('90');
    expect(options.get('payments')?.has('fillfactor')).toBe(false);
  });
});

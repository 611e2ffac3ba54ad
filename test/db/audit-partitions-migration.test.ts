// Migration 0047 on an audit log with rows in several months: every row moves
// into the partition of its month, nothing is lost, and the log stays append-only.
import { afterEach, describe, expect, it } from 'vitest';
import { migrate, readMigrationFiles } from '../../src/db/migrate.ts';
import { backends, openTestDatabase, type TestDatabase } from '../support/databases.ts';

describe.each(backends)('migration 0047_retention on %s', (backend) => {
  let database: TestDatabase | undefined;
  afterEach(async () => {
    await database?.close();
    database = undefined;
  });

  it('moves audit events of several months into monthly partitions without losing a row', async () => {
    database = await openTestDatabase(backend, { migrated: false });
    const files = (await readMigrationFiles()).filter((file) => file.version < '0047');
    const createdAts = [
      '2025-11-30T23:59:59.999Z',
      '2025-12-01T00:00:00Z',
      '2026-01-15T12:00:00Z',
      '2026-03-31T23:00:00Z',
    ];
    await database.withScriptSession(async (session) => {
      for (const file of files) await session.run(file.sql);
      await session.run(`
        insert into merchants (id, name, email, created_at) values ('m_1', 'Shop', 'm1@example.test', now());
        ${createdAts
          .map(
            (at, index) => `insert into audit_events (id, merchant_id, actor_kind, action, details, created_at)
              values ('aud_${index}', 'm_1', 'operator', 'shop.created', '{"n": ${index}}', '${at}');`,
          )
          .join('\n')}
        create table if not exists schema_migrations (version text primary key, applied_at timestamptz not null default now());
        insert into schema_migrations (version) values ${files.map((file) => `('${file.version}')`).join(', ')};
      `);
    });

    expect(await migrate(database)).toContain('0047_retention');

    const rows = await database.withScriptSession((session) =>
      session.rows<{ id: string; partition: string; details: { n: number } }>(
        'select id, tableoid::regclass::text as partition, details from audit_events order by id',
      ),
    );
    expect(rows).toEqual([
      { id: 'aud_0', partition: 'audit_events_p202511', details: { n: 0 } },
      { id: 'aud_1', partition: 'audit_events_p202512', details: { n: 1 } },
      { id: 'aud_2', partition: 'audit_events_p202601', details: { n: 2 } },
      { id: 'aud_3', partition: 'audit_events_p202603', details: { n: 3 } },
    ]);
    // Every month from the oldest row to three months ahead of now has its partition (February too, though empty).
    const partitions = await database.withScriptSession((session) =>
      session.rows<{ name: string }>(
        "select inhrelid::regclass::text as name from pg_inherits where inhparent = 'audit_events'::regclass order by 1",
      ),
    );
    const names = partitions.map((row) => row.name);
    expect(names).toContain('audit_events_p202602');
    expect(names).toContain('audit_events_default');
    const ahead = new Date();
    ahead.setUTCMonth(ahead.getUTCMonth() + 3, 1);
    expect(names).toContain(
      `audit_events_p${ahead.getUTCFullYear()}${String(ahead.getUTCMonth() + 1).padStart(2, '0')}`,
    );

    await expect(
      database.withScriptSession((session) => session.run("delete from audit_events where id = 'aud_0'")),
    ).rejects.toThrow('audit_events is append-only');
  });
});

// The audit log ages out by month: partitions are made ahead, a month past
// retention is archived (the file holds exactly its rows) and then its
// partition dropped, and a run stopped between the archive and the drop
// neither loses nor duplicates a row when it runs again.
import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { recordAudit, OPERATOR } from '../../src/audit/audit-service.ts';
import { takeRetentionLease } from '../../src/retention/retention-repository.ts';
import { backends } from '../support/databases.ts';
import { createRetentionTestApp, type RetentionTestApp } from './retention-support.ts';

describe.each(backends)('audit retention on %s', (backend) => {
  let testApp: RetentionTestApp | undefined;
  afterEach(async () => {
    await testApp?.close();
    testApp = undefined;
  });

  async function auditAt(app: RetentionTestApp, at: string, action: string) {
    app.clock.set(new Date(at));
    await recordAudit(app.context.db, app.clock, { actor: OPERATOR, action, details: { at } });
  }

  /** Audit events in June and July 2025; June's month was made by a run, July's rows wait in the default partition. */
  async function auditOfJuneAndJuly(app: RetentionTestApp) {
    await auditAt(app, '2025-06-03T10:00:00.000Z', 'retention.test.june');
    app.clock.set(new Date('2025-06-10T00:00:00.000Z'));
    expect((await app.run()).ran).toBe(true);
    await auditAt(app, '2025-06-30T23:59:59.999Z', 'retention.test.june');
    await auditAt(app, '2025-07-01T00:00:00.000Z', 'retention.test.july');
  }

  const juneRows = (app: RetentionTestApp) =>
    app.rowsAsJson(sql`select * from audit_events where action = 'retention.test.june' order by created_at, id`);

  it('makes the partitions of this month and the next three, moving rows the default partition caught', async () => {
    testApp = await createRetentionTestApp(backend, { auditMonths: 12, webhookDays: 30 });
    await auditOfJuneAndJuly(testApp);
    const partitions = await testApp.partitions('audit_events');
    expect(partitions).toEqual(expect.arrayContaining(['audit_events_p202506', 'audit_events_p202509']));
    expect(partitions).not.toContain('audit_events_p202510');
    const where = await sql<{ partition: string }>`
      select tableoid::regclass::text as partition from audit_events where action like 'retention.test.%' order by created_at`.execute(
      testApp.context.db,
    );
    expect(where.rows.map((row) => row.partition)).toEqual([
      'audit_events_p202506',
      'audit_events_p202506',
      'audit_events_p202507',
    ]);
  });

  it('archives a month once its retention is over, then drops its partition; the next month stays', async () => {
    testApp = await createRetentionTestApp(backend, { auditMonths: 12, webhookDays: 30 });
    await auditOfJuneAndJuly(testApp);
    const june = await juneRows(testApp);
    expect(june).toHaveLength(2);

    // June 2026 not over yet: June 2025 is kept.
    testApp.clock.set(new Date('2026-06-30T23:59:59.000Z'));
    const early = await testApp.run();
    expect(early.ran && early.archived).toEqual([]);

    testApp.clock.set(new Date('2026-07-01T00:00:00.000Z'));
    const report = await testApp.run();
    expect(report.ran && report.archived).toEqual([
      {
        fileName: 'audit_events-2025-06.jsonl.gz',
        table: 'audit_events',
        period: '2025-06',
        rowCount: 2,
        sha256: expect.any(String),
      },
    ]);
    expect(await testApp.archivedRows('audit_events-2025-06.jsonl.gz')).toEqual(june);
    const record = await testApp.context.db.selectFrom('retention_archives').selectAll().executeTakeFirstOrThrow();
    expect(record).toMatchObject({
      state: 'archived',
      row_count: 2n,
      sha256: await testApp.sha256Of('audit_events-2025-06.jsonl.gz'),
    });
    expect(await testApp.partitions('audit_events')).not.toContain('audit_events_p202506');
    expect(await juneRows(testApp)).toEqual([]);
    const july = await sql`select id from audit_events where action = 'retention.test.july'`.execute(
      testApp.context.db,
    );
    expect(july.rows).toHaveLength(1);
  });

  it('a run stopped between the archive and the drop, run again, archives each row once and drops the month', async () => {
    testApp = await createRetentionTestApp(backend, { auditMonths: 12, webhookDays: 30 });
    await auditOfJuneAndJuly(testApp);
    const june = await juneRows(testApp);
    testApp.clock.set(new Date('2026-07-01T00:00:00.000Z'));

    await expect(
      testApp.run({
        afterArchive: () => {
          throw new Error('stopped between the archive and the drop');
        },
      }),
    ).rejects.toThrow('stopped between the archive and the drop');
    // The file is whole, its record says 'writing', and the rows are all still there.
    expect(await testApp.archiveFiles()).toEqual(['audit_events-2025-06.jsonl.gz']);
    expect(await testApp.context.db.selectFrom('retention_archives').select('state').execute()).toEqual([
      { state: 'writing' },
    ]);
    expect(await juneRows(testApp)).toEqual(june);

    const rerun = await testApp.run();
    expect(rerun.ran && rerun.discarded).toEqual(['audit_events-2025-06.jsonl.gz']);
    expect(rerun.ran && rerun.archived.map((file) => [file.fileName, file.rowCount])).toEqual([
      ['audit_events-2025-06.jsonl.gz', 2],
    ]);
    expect(await testApp.archiveFiles()).toEqual(['audit_events-2025-06.jsonl.gz']);
    expect(await testApp.archivedRows('audit_events-2025-06.jsonl.gz')).toEqual(june);
    expect(await testApp.context.db.selectFrom('retention_archives').select(['file_name', 'state']).execute()).toEqual([
      { file_name: 'audit_events-2025-06.jsonl.gz', state: 'archived' },
    ]);
    expect(await juneRows(testApp)).toEqual([]);
  });

  it('keeps every month when the retention is off', async () => {
    testApp = await createRetentionTestApp(backend, { auditMonths: undefined, webhookDays: undefined });
    await auditOfJuneAndJuly(testApp);
    testApp.clock.set(new Date('2030-01-01T00:00:00.000Z'));
    const report = await testApp.run();
    expect(report.ran && report.archived).toEqual([]);
    expect(await juneRows(testApp)).toHaveLength(2);
  });

  it('one run at a time: a run finds the lease held and does nothing until it runs out', async () => {
    testApp = await createRetentionTestApp(backend, { auditMonths: 12, webhookDays: 30 });
    await auditOfJuneAndJuly(testApp);
    testApp.clock.set(new Date('2026-07-01T00:00:00.000Z'));
    const heldUntil = new Date('2026-07-01T00:10:00.000Z');
    expect(await takeRetentionLease(testApp.context.db, 'another process', testApp.clock.now(), heldUntil)).toBe(true);
    expect(await testApp.run()).toEqual({ ran: false, leaseHeldUntil: heldUntil });
    expect(await juneRows(testApp)).toHaveLength(2);

    testApp.clock.set(heldUntil);
    const report = await testApp.run();
    expect(report.ran && report.archived.map((file) => file.fileName)).toEqual(['audit_events-2025-06.jsonl.gz']);
  });
});

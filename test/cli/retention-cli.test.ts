// `paygate retention status|run` against a real database: the configured
// retention of each table, the archive folder under the data folder, a run that
// finds nothing past retention yet, and a bad --limit refused.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backends, createServerDatabase, dropServerDatabase } from '../support/databases.ts';
import { lastJsonLine, runPaygateInProcess } from '../support/cli.ts';

describe.each(backends)('paygate retention on %s', (backend) => {
  let env: Record<string, string | undefined>;
  let dataDir: string;
  let databaseUrl: string | undefined;
  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'paygate-retention-cli-'));
    databaseUrl = backend === 'postgres' ? await createServerDatabase() : undefined;
    env = { PAYGATE_DATA_DIR: dataDir, DATABASE_URL: databaseUrl, PAYGATE_RETENTION_WEBHOOK_DAYS: 'off' };
    const migrated = await runPaygateInProcess(['migrate'], env);
    expect(migrated.code, migrated.stderr).toBe(0);
  });
  afterAll(async () => {
    await rm(dataDir, { recursive: true, force: true });
    if (databaseUrl) await dropServerDatabase(databaseUrl);
  });

  it('status names each table with its retention and the archive folder under the data folder', async () => {
    const status = await runPaygateInProcess(['retention', 'status', '--json'], env);
    expect(status.code, status.stderr).toBe(0);
    expect(lastJsonLine(status.stdout)).toEqual({
      archiveDir: join(dataDir, 'archive'),
      leaseHeldUntil: null,
      tables: [
        {
          name: 'audit_events',
          kept: '12 months',
          holds: expect.stringMatching(/^\d+ monthly partitions, /),
          due: false,
        },
        { name: 'webhook_events', kept: 'forever', holds: 'no events', due: false },
      ],
      recent_archives: [],
    });
    const table = await runPaygateInProcess(['retention', 'status'], env);
    expect(table.stdout).toMatch(/^audit_events\s+12 months\s+no\s+\d+ monthly partitions/m);
  });

  it('run archives nothing while no row is past retention, and refuses a bad --limit', async () => {
    const run = await runPaygateInProcess(['retention', 'run'], env);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain('0 archive files written');
    const bad = await runPaygateInProcess(['retention', 'run', '--limit', '0'], env);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--limit must be 1..1000');
  });
});

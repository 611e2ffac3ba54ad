import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/database.ts';
import { backends, createServerDatabase, dropServerDatabase } from '../support/databases.ts';
import { runPaygateInProcess } from '../support/cli.ts';

describe.each(backends)('paygate ledger check on %s', (backend) => {
  let env: Record<string, string | undefined>;
  let dataDir: string;
  let databaseUrl: string | undefined;
  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'paygate-ledger-cli-'));
    databaseUrl = backend === 'postgres' ? await createServerDatabase() : undefined;
    env = { PAYGATE_DATA_DIR: dataDir, DATABASE_URL: databaseUrl };
    expect((await runPaygateInProcess(['migrate'], env)).code).toBe(0);
  });
  afterAll(async () => {
    await rm(dataDir, { recursive: true, force: true });
    if (databaseUrl) await dropServerDatabase(databaseUrl);
  });

  it('exits 0 on a consistent ledger and 1, naming the account, when stored totals do not match the transfers', async () => {
    const healthy = await runPaygateInProcess(['ledger', 'check'], env);
    expect(healthy.code).toBe(0);
    expect(healthy.stdout).toContain('ledger ok');

    // Tamper behind the ledger's back: an account that claims money no transfer gave it.
    const handle = await openDatabase({ url: databaseUrl, dataDir: databaseUrl ? undefined : join(dataDir, 'pglite') });
    await sql`insert into ledger_accounts (id, book, merchant_id, currency, kind, debits_must_not_exceed_credits, credits_posted, created_at)
              values ('acc_tampered', 'sandbox', null, 'USDT', 'fees', false, 100, now())`.execute(handle.db);
    await handle.close();

    const broken = await runPaygateInProcess(['ledger', 'check', '--json'], env);
    expect(broken.code).toBe(1);
    const report = JSON.parse(broken.stdout) as { ok: boolean; violations: string[] };
    expect(report.ok).toBe(false);
    expect(report.violations.join('\n')).toMatch(/USDT: posted debits 0 differ from posted credits 100/);
    expect(report.violations.join('\n')).toMatch(/account acc_tampered: stored totals/);
  });
});

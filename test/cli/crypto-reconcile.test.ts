// `paygate crypto reconcile` through the real command line: a ledger that says
// the sandbox hot wallet holds 12.345678 USDT which the chain does not have is a
// shortfall (exit 1, the book paused); `--acknowledge` needs a name, records it
// and resumes; the next run accepts that shortfall (exit 0). It reads the chain
// with the sandbox seed sealed in the database, as every role does.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withCliContext } from '../../src/cli/database-command.ts';
import { readOnlyCryptoChain } from '../../src/cli/read-only-chain.ts';
import { systemClock } from '../../src/clock.ts';
import { loadConfig } from '../../src/config.ts';
import type { ReconciliationView } from '../../src/crypto/custody/reconciliation-service.ts';
import { inTransaction } from '../../src/db/transaction.ts';
import { ensureAccounts, systemAccountKey } from '../../src/ledger/ledger-accounts.ts';
import { transfer } from '../../src/ledger/ledger-service.ts';
import { createMerchant } from '../../src/merchants/merchant-service.ts';
import { openConfiguredDatabase } from '../../src/runtime.ts';
import { lastJsonLine, runPaygateInProcess } from '../support/cli.ts';
import { backends, createServerDatabase, dropServerDatabase } from '../support/databases.ts';
import { TEST_ROOT_KEY } from '../support/keyring.ts';

describe.each(backends)('paygate crypto reconcile on %s', (backend) => {
  let env: Record<string, string | undefined>;
  let dataDir: string;
  let databaseUrl: string | undefined;
  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'paygate-reconcile-'));
    databaseUrl = backend === 'postgres' ? await createServerDatabase() : undefined;
    env = { PAYGATE_DATA_DIR: dataDir, DATABASE_URL: databaseUrl };
    // The ledger credits a deposit the chain never saw: the hot wallet account owes 12.345678 USDT.
    const handle = await openConfiguredDatabase(
      loadConfig({ PAYGATE_DATA_DIR: dataDir, ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}) }),
    );
    try {
      await inTransaction(handle.db, async (tx) => {
        const [hotWallet, fees] = await ensureAccounts(tx, systemClock, [
          systemAccountKey('sandbox', 'hot_wallet', 'USDT'),
          systemAccountKey('sandbox', 'fees', 'USDT'),
        ]);
        await transfer(tx, systemClock, {
          id: 'cli-test-phantom-deposit',
          debitAccountId: hotWallet!.id,
          creditAccountId: fees!.id,
          amount: 12_345_678n,
          type: 'deposit',
          reference: { type: 'deposit', id: 'phantom' },
        });
      });
    } finally {
      await handle.close();
    }
  });
  afterAll(async () => {
    await rm(dataDir, { recursive: true, force: true });
    if (databaseUrl) await dropServerDatabase(databaseUrl);
  });

  it('exits 1 on a shortfall and pauses the book; --acknowledge records who and resumes; the accepted shortfall then exits 0', async () => {
    const found = await runPaygateInProcess(['crypto', 'reconcile', '--book', 'sandbox'], env);
    expect(found.code, found.stderr).toBe(1);
    expect(found.stderr).toContain('sandbox USDT: SHORTFALL  difference -12.345678  shortfall 12.345678');
    expect(found.stderr).toContain('signing PAUSED until acknowledged');

    expect(found.stderr).toContain('on chain 0 = hot wallet 0 + 0 deposit address(es) 0');
    expect(found.stderr).toContain('expected 12.345678 = deposits credited 12.345678');

    expect((await runPaygateInProcess(['crypto', 'reconcile', '--acknowledge', '--book', 'sandbox'], env)).code).toBe(
      2,
    );
    const acknowledged = await runPaygateInProcess(
      [
        'crypto',
        'reconcile',
        '--acknowledge',
        '--book',
        'sandbox',
        '--by',
        'ops on call',
        '--note',
        'phantom deposit, ticket 7',
      ],
      env,
    );
    expect(acknowledged.code, acknowledged.stderr).toBe(0);
    expect(acknowledged.stdout).toContain('sandbox: signing resumes; shortfall 12.345678 USDT accepted by ops on call');

    const accepted = await runPaygateInProcess(['crypto', 'reconcile', '--json'], env);
    expect(accepted.code, accepted.stderr).toBe(0);
    expect(lastJsonLine<ReconciliationView[]>(accepted.stdout)).toMatchObject([
      {
        book: 'sandbox',
        outcome: 'balanced',
        expected: '12.345678',
        shortfall: '12.345678',
        accepted_shortfall: '12.345678',
        on_chain: { total: '0' },
        signing_paused: false,
      },
    ]);
    // Four process starts on a shared machine: a bound on waiting, not on speed.
  }, 600_000);

  it('reads with the sandbox seed sealed in the database: its addresses are read, not refused as another key', async () => {
    const config = loadConfig({
      PAYGATE_DATA_DIR: dataDir,
      PAYGATE_ROOT_KEY: TEST_ROOT_KEY,
      ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
    });
    // The first sandbox address a running gateway derived from the sealed seed.
    await withCliContext(config, async (context) => {
      const merchant = await createMerchant(context, { name: 'Sealed', email: 'sealed@example.test', mode: 'sandbox' });
      const chain = readOnlyCryptoChain(config, context.logger, context);
      try {
        const access = await chain.forMode('sandbox');
        await context.db
          .insertInto('crypto_addresses')
          .values({
            address: access.addressKey.address(0),
            key_id: 'sandbox',
            derivation_index: 0n,
            shop_id: merchant.shop_id,
            purpose: 'invoice',
            created_at: systemClock.now(),
          })
          .execute();
      } finally {
        await chain.close();
      }
    });
    const read = await runPaygateInProcess(['crypto', 'reconcile', '--json'], env);
    expect(read.code, read.stderr).toBe(0);
    expect(lastJsonLine<ReconciliationView[]>(read.stdout)).toMatchObject([{ book: 'sandbox', error: null }]);
  }, 600_000);
});

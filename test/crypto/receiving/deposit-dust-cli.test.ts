// `paygate crypto settings` through the real command line: a shop's minimum
// deposit shown and set (a child process on the same PostgreSQL database; a
// child cannot share an embedded PGlite, so that part runs on PostgreSQL only),
// and bad arguments refused with the usage before any database is opened.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { minimumDepositOfShop } from '../../../src/crypto/receiving/deposit-dust.ts';
import { runPaygateInProcess } from '../../support/cli.ts';
import { backends, itOnServer } from '../../support/databases.ts';
import { openReceivingSetup, type ReceivingSetup } from './receiving-service-support.ts';

/** A generous bound for tests that start several child processes on a loaded machine: a hang fails, slowness does not. */
const CHILD_PROCESSES_TIMEOUT_MS = 300_000;

describe.each(backends)('paygate crypto settings on %s', (backend) => {
  let setup: ReceivingSetup;
  beforeAll(async () => {
    setup = await openReceivingSetup(backend);
  });
  afterAll(async () => {
    await setup.close();
  });

  it(
    'bad arguments exit 2 with the usage, before any database is opened',
    async () => {
      const noDatabase = { PAYGATE_DATA_DIR: 'memory://' };
      // Each child process is a whole Node start; the bounds of the value itself are checked in deposit-dust.test.ts.
      for (const args of [
        ['crypto', 'settings'],
        ['crypto', 'settings', '--shop', 'shop_x', '--min-deposit', '100.000001'],
      ]) {
        const result = await runPaygateInProcess(args, noDatabase);
        expect(result.code, args.join(' ')).toBe(2);
        expect(result.stderr).toContain('Usage: paygate crypto settings');
      }
    },
    CHILD_PROCESSES_TIMEOUT_MS,
  );

  itOnServer(backend)(
    'shows the default 0.01, sets another minimum, and refuses a shop that does not exist',
    async () => {
      const env = { DATABASE_URL: setup.database.url ?? '', PAYGATE_DATA_DIR: 'memory://' };
      const shown = await runPaygateInProcess(['crypto', 'settings', '--shop', setup.shop.shopId, '--json'], env);
      expect(shown.code, shown.stderr).toBe(0);
      expect(JSON.parse(shown.stdout)).toEqual({ shop_id: setup.shop.shopId, min_deposit: '0.01' });
      const set = await runPaygateInProcess(
        ['crypto', 'settings', '--shop', setup.shop.shopId, '--min-deposit', '0.5'],
        env,
      );
      expect(set.code, set.stderr).toBe(0);
      expect(set.stdout).toContain('minimum deposit 0.5 USDT');
      expect(await minimumDepositOfShop(setup.context.db, setup.shop.shopId)).toBe(500_000n);
      const missing = await runPaygateInProcess(
        ['crypto', 'settings', '--shop', 'shop_missing', '--min-deposit', '1'],
        env,
      );
      expect(missing.code).toBe(1);
      expect(missing.stderr).toContain('No such shop');
    },
    CHILD_PROCESSES_TIMEOUT_MS,
  );
});

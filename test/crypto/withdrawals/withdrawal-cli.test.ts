// `paygate withdrawal settings|create|list|approve|reject` through the real
// command line (a child process on the same PostgreSQL database, driving the
// test's sandbox chain by PAYGATE_SANDBOX_CHAIN_URL), then the approved
// withdrawal carried to completed by the real executor. A child process cannot
// share an embedded PGlite, so that test runs on PostgreSQL only; argument
// errors, refused before any database is opened, are checked on both.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWithdrawal } from '../../../src/crypto/withdrawals/withdrawal-service.ts';
import type { WithdrawalView } from '../../../src/crypto/withdrawals/withdrawals-views.ts';
import { runPaygateInProcess } from '../../support/cli.ts';
import { backends, itOnServer } from '../../support/databases.ts';
import { micro, recipient, type PayoutShop } from '../payouts/payout-support.ts';
import { createChainTestApp, type ChainTestApp } from '../refunds/refund-support.ts';

describe.each(backends)('paygate withdrawal on %s', (backend) => {
  let testApp: ChainTestApp;
  let shop: PayoutShop;
  let env: Record<string, string>;

  beforeAll(async () => {
    testApp = await createChainTestApp(backend);
    shop = await testApp.payoutShop();
    await testApp.fund(shop, 100_000_000n);
    await testApp.post(shop, '/v1/test_helpers/crypto/faucet', { usdt: '100000', trx: '100000' });
    const sandbox = await testApp.crypto.chain.sandboxChain();
    env = {
      DATABASE_URL: testApp.database.url ?? '',
      PAYGATE_DATA_DIR: 'memory://',
      PAYGATE_SANDBOX_CHAIN_URL: sandbox.url,
    };
  });
  afterAll(async () => {
    await testApp.expectLedgerGreen();
    await testApp.close();
  });

  async function paygate(args: string[]): Promise<string> {
    const result = await runPaygateInProcess(args, env);
    expect(result.code, `${args.join(' ')}: ${result.stderr}`).toBe(0);
    return result.stdout;
  }

  it('bad arguments exit 2 with the usage, before any database is opened', async () => {
    const noDatabase = { PAYGATE_DATA_DIR: 'memory://' };
    for (const args of [
      ['withdrawal', 'create', '--merchant', 'mer_x', '--amount', '1', '--address', recipient()],
      ['withdrawal', 'create', '--merchant', 'mer_x', '--shop', 'shop_x', '--amount', '1', '--address', recipient()],
      ['withdrawal', 'list', '--limit', '0'],
      ['withdrawal', 'list', '--limit', '501'],
      ['withdrawal', 'settings', '--shop', 'shop_x', '--approval', 'maybe'],
      ['withdrawal', 'approve'],
      ['withdrawal', 'reject', 'wd_a', 'wd_b'],
    ]) {
      const result = await runPaygateInProcess(args, noDatabase);
      expect(result.code, args.join(' ')).toBe(2);
      expect(result.stderr).toContain('Usage: paygate withdrawal');
    }
  });

  itOnServer(backend)(
    'settings, create (awaiting approval), list, approve, reject: money reserved, then sent or released',
    async () => {
      expect(await paygate(['withdrawal', 'settings', '--shop', shop.shopId, '--approval', 'required'])).toContain(
        'wait for approval',
      );
      const address = recipient();
      const create = (key: string, amount: string, to: string) =>
        paygate([
          'withdrawal',
          'create',
          '--merchant',
          shop.merchantId,
          '--shop',
          shop.shopId,
          '--external-id',
          key,
          '--amount',
          amount,
          '--address',
          to,
          '--by',
          'ops@example.com',
          '--json',
        ]);
      const first = JSON.parse(await create('cli-wd-1', '12.5', address)) as WithdrawalView;
      expect(first).toMatchObject({
        status: 'awaiting_approval',
        amount: '12.5',
        requested_by: 'ops@example.com',
        merchant_id: shop.merchantId,
        external_id: 'cli-wd-1',
      });
      // The command run again with the same key (a retry): the same withdrawal, nothing more reserved.
      expect((JSON.parse(await create('cli-wd-1', '12.5', address)) as WithdrawalView).withdrawal_id).toBe(
        first.withdrawal_id,
      );
      const second = JSON.parse(await create('cli-wd-2', '3', recipient())) as WithdrawalView;
      expect((await testApp.balance(shop)).available).toBe(
        100_000_000n - micro(first.total_debit) - micro(second.total_debit),
      );

      const listed = JSON.parse(
        await paygate(['withdrawal', 'list', '--merchant', shop.merchantId, '--json']),
      ) as WithdrawalView[];
      expect(listed.map((view) => view.withdrawal_id).sort()).toEqual(
        [first.withdrawal_id, second.withdrawal_id].sort(),
      );
      expect(
        await paygate(['withdrawal', 'list', '--merchant', shop.merchantId, '--status', 'awaiting_approval']),
      ).toContain(first.withdrawal_id);

      const approved = JSON.parse(
        await paygate(['withdrawal', 'approve', first.withdrawal_id, '--by', 'cfo@example.com', '--json']),
      ) as WithdrawalView;
      expect(approved).toMatchObject({ status: 'pending', decision: { by: 'cfo@example.com', approved: true } });
      const rejected = await paygate([
        'withdrawal',
        'reject',
        second.withdrawal_id,
        '--by',
        'cfo@example.com',
        '--reason',
        'typo',
      ]);
      expect(rejected).toContain('rejected');
      expect(rejected).toContain('rejected by cfo@example.com');
      expect((await testApp.balance(shop)).available).toBe(100_000_000n - micro(first.total_debit));

      // Refusals: a decided withdrawal (exit 1 with the reason), bad arguments (exit 2).
      const again = await runPaygateInProcess(['withdrawal', 'approve', second.withdrawal_id], env);
      expect(again.code).toBe(1);
      expect(again.stderr).toContain('rejected');
      const unknown = await runPaygateInProcess(['withdrawal', 'approve', 'wd_unknown'], env);
      expect([unknown.code, unknown.stderr.trim()]).toEqual([1, 'paygate: No such withdrawal.']);

      await testApp.carryToFinal(shop);
      const [completed] = JSON.parse(
        await paygate(['withdrawal', 'list', '--merchant', shop.merchantId, '--status', 'completed', '--json']),
      ) as WithdrawalView[];
      expect(completed).toMatchObject({ withdrawal_id: first.withdrawal_id, status: 'completed' });
      expect(await testApp.usdtOnChain(address)).toBe(12_500_000n);
    },
  );

  itOnServer(backend)(
    'the merchant rule from the command line, and an operator approving a cabinet member’s request as an operator',
    async () => {
      expect(
        await paygate([
          'withdrawal',
          'settings',
          '--merchant',
          shop.merchantId,
          '--book',
          'sandbox',
          '--single-person-max',
          'none',
        ]),
      ).toContain('every withdrawal waits for a second person');
      const requested = await createWithdrawal(
        { ...testApp.context, chain: testApp.crypto.chain },
        {
          merchantId: shop.merchantId,
          shopId: shop.shopId,
          externalId: 'cabinet-member-1',
          amount: '1',
          address: recipient(),
          requestedBy: 'finance@example.com',
          requestedByUserId: 'user_member',
        },
      );
      expect(requested.status).toBe('awaiting_approval');
      // The operator is never the cabinet member who asked, whatever name it gives.
      const approved = JSON.parse(
        await paygate(['withdrawal', 'approve', requested.withdrawal_id, '--by', 'finance@example.com', '--json']),
      ) as WithdrawalView;
      expect(approved).toMatchObject({ status: 'pending', decision: { by: 'finance@example.com', user_id: null } });
      const audit = await testApp.context.db
        .selectFrom('audit_events')
        .select('actor_kind')
        .where('target', '=', requested.withdrawal_id)
        .where('action', '=', 'withdrawal.approved')
        .executeTakeFirstOrThrow();
      expect(audit.actor_kind).toBe('operator');
      expect(
        await paygate([
          'withdrawal',
          'settings',
          '--merchant',
          shop.merchantId,
          '--book',
          'sandbox',
          '--single-person-max',
          '2.5',
        ]),
      ).toContain('up to 2.5 USDT');
      await testApp.carryToFinal(shop);
    },
  );
});

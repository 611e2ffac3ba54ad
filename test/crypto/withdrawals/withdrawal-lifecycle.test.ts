// Cabinet withdrawals through the withdrawal service (no API key reaches them),
// carried to the end by the real sign-once executor on the simulated chain:
// without approval straight to completed, with approval only after it (who and
// when recorded), rejection and an on-chain failure both releasing the
// reservation, and cabinet.withdrawal.completed once per final outcome. The
// merchant's address receives exactly the amount on chain; the ledger stays sound.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  approveWithdrawal,
  createWithdrawal,
  getWithdrawal,
  listWithdrawals,
  rejectWithdrawal,
  setWithdrawalApproval,
  type WithdrawalDeps,
} from '../../../src/crypto/withdrawals/withdrawal-service.ts';
import { AppError } from '../../../src/errors.ts';
import { createShop } from '../../../src/merchants/merchant-service.ts';
import { backends } from '../../support/databases.ts';
import { micro, recipient, type PayoutShop } from '../payouts/payout-support.ts';
import { createChainTestApp, type ChainTestApp } from '../refunds/refund-support.ts';
import { uniqueName } from '../../support/seeded-random.ts';

describe.each(backends)('cabinet withdrawals on %s', (backend) => {
  let testApp: ChainTestApp;
  let shop: PayoutShop;
  let deps: WithdrawalDeps;

  beforeAll(async () => {
    testApp = await createChainTestApp(backend);
    shop = await testApp.payoutShop();
    await testApp.fund(shop, 1_000_000_000n);
    await testApp.post(shop, '/v1/test_helpers/crypto/faucet', { usdt: '100000', trx: '100000' });
    deps = { ...testApp.context, chain: testApp.crypto.chain };
    // Every withdrawal waits for a second person by default; this shop's rule lets one person send any amount.
    await setWithdrawalApproval(deps, shop.shopId, false);
  });
  afterEach(() => testApp.expectLedgerGreen());
  afterAll(() => testApp.close());

  let keys = 0;
  const input = (overrides: Partial<Parameters<typeof createWithdrawal>[1]> = {}) => ({
    merchantId: shop.merchantId,
    shopId: shop.shopId,
    externalId: `wd-${backend}-${(keys += 1)}`,
    amount: '25.50',
    address: recipient(),
    requestedBy: 'owner@example.com',
    ...overrides,
  });
  const completedEvents = (id: string) => testApp.eventsOf(shop, 'cabinet.withdrawal.completed', 'withdrawal_id', id);

  async function refusal(work: Promise<unknown>): Promise<{ code: string; message: string }> {
    const error = await work.then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(AppError);
    return { code: (error as AppError).code, message: (error as AppError).message };
  }

  it('without approval: pending at once with total_debit reserved, then processing, then completed on chain', async () => {
    const before = await testApp.balance(shop);
    const request = input();
    const created = await createWithdrawal(deps, request);
    expect(created).toMatchObject({
      status: 'pending',
      amount: '25.5',
      decision: null,
      requested_by: 'owner@example.com',
      tx_hash: null,
    });
    expect(micro(created.total_debit)).toBe(25_500_000n + micro(created.network_fee));
    expect((await testApp.balance(shop)).available).toBe(before.available - micro(created.total_debit));

    await testApp.executor.runPass();
    const processing = await getWithdrawal(testApp.context.db, created.withdrawal_id);
    expect(processing.status).toBe('processing');
    expect(await completedEvents(created.withdrawal_id)).toEqual([]);
    await testApp.carryToFinal(shop);

    const completed = await getWithdrawal(testApp.context.db, created.withdrawal_id);
    expect(completed).toMatchObject({ status: 'completed', tx_hash: processing.tx_hash, error: null });
    expect(await testApp.usdtOnChain(request.address)).toBe(25_500_000n);
    const after = await testApp.balance(shop);
    expect(before.available - after.available).toBe(micro(created.total_debit));
    expect(after.pending).toBe(before.pending);
    expect(await completedEvents(created.withdrawal_id)).toEqual([completed]);
    const history = (await testApp.get(shop, '/v1/crypto/balance/operations?type=withdrawal&limit=100')).data.filter(
      (line: { reference: { id: string } }) => line.reference.id === created.withdrawal_id,
    );
    expect(history.map((line: { status: string }) => line.status)).toEqual(['posted', 'posted']);
  });

  it('with approval required: awaiting_approval (reserved, nothing queued), approved by someone, then completed', async () => {
    const approvalShop = await testApp.payoutShop();
    await testApp.fund(approvalShop, 100_000_000n);
    await setWithdrawalApproval(deps, approvalShop.shopId, true);
    const request = input({ merchantId: approvalShop.merchantId, shopId: approvalShop.shopId, amount: '10' });
    const created = await createWithdrawal(deps, request);
    expect(created.status).toBe('awaiting_approval');
    expect((await testApp.balance(approvalShop)).available).toBe(100_000_000n - micro(created.total_debit));
    const queued = await testApp.context.db
      .selectFrom('crypto_outgoing_transfers')
      .select('id')
      .where('owner_id', '=', created.withdrawal_id)
      .execute();
    expect(queued).toEqual([]);
    await testApp.carryToFinal(approvalShop);
    expect((await getWithdrawal(testApp.context.db, created.withdrawal_id)).status).toBe('awaiting_approval');

    const approved = await approveWithdrawal(testApp.context, created.withdrawal_id, 'finance@example.com');
    expect(approved).toMatchObject({
      status: 'pending',
      decision: { by: 'finance@example.com', approved: true, reason: null },
    });
    expect(approved.decision!.at).toBe(testApp.clock.now().toISOString());
    // Approved once: a second decision is 409 invalid_state.
    expect((await refusal(approveWithdrawal(testApp.context, created.withdrawal_id, 'x'))).code).toBe('invalid_state');
    expect((await refusal(rejectWithdrawal(testApp.context, created.withdrawal_id, 'x', null))).code).toBe(
      'invalid_state',
    );

    await testApp.carryToFinal(approvalShop);
    const completed = await getWithdrawal(testApp.context.db, created.withdrawal_id);
    expect(completed).toMatchObject({ status: 'completed', decision: { by: 'finance@example.com', approved: true } });
    expect(await testApp.usdtOnChain(request.address)).toBe(10_000_000n);
    expect((await testApp.balance(approvalShop)).available).toBe(100_000_000n - micro(created.total_debit));
    const listed = await listWithdrawals(testApp.context.db, { limit: 10, merchantId: approvalShop.merchantId });
    expect(listed).toEqual([completed]);
  });

  it('idempotent by external_id: a repeat is the same withdrawal, other parameters 409, 20 racing requests reserve once', async () => {
    const keyShop = await testApp.payoutShop();
    await testApp.fund(keyShop, 100_000_000n);
    const request = input({ merchantId: keyShop.merchantId, shopId: keyShop.shopId, amount: '10' });
    const created = await createWithdrawal(deps, request);
    expect(created.external_id).toBe(request.externalId);
    expect(await createWithdrawal(deps, request)).toEqual(created);
    const conflict = await refusal(createWithdrawal(deps, { ...request, amount: '11' }));
    expect(conflict).toMatchObject({ code: 'duplicate_external_id' });
    expect((await refusal(createWithdrawal(deps, { ...request, address: recipient() }))).code).toBe(
      'duplicate_external_id',
    );
    expect((await refusal(createWithdrawal(deps, { ...request, externalId: '' }))).code).toBe('invalid_request');
    expect((await refusal(createWithdrawal(deps, { ...request, externalId: 'x'.repeat(101) }))).code).toBe(
      'invalid_request',
    );
    // The key is the merchant's: named through another shop of the same merchant (the same balance), it is
    // the same withdrawal; another merchant's same key is its own.
    const sibling = await createShop(testApp.context, { merchantId: keyShop.merchantId, mode: 'sandbox' });
    expect(await createWithdrawal(deps, { ...request, shopId: sibling.shop_id })).toEqual(created);
    const otherShop = await testApp.payoutShop();
    await testApp.fund(otherShop, 100_000_000n);
    const elsewhere = await createWithdrawal(deps, {
      ...request,
      merchantId: otherShop.merchantId,
      shopId: otherShop.shopId,
    });
    expect(elsewhere.withdrawal_id).not.toBe(created.withdrawal_id);

    const raced = input({ merchantId: keyShop.merchantId, shopId: keyShop.shopId, amount: '5' });
    const answers = await Promise.all(Array.from({ length: 20 }, () => createWithdrawal(deps, raced)));
    expect(new Set(answers.map((answer) => answer.withdrawal_id)).size).toBe(1);
    const rows = await testApp.context.db
      .selectFrom('crypto_withdrawals')
      .select('id')
      .where('shop_id', '=', keyShop.shopId)
      .execute();
    expect(rows).toHaveLength(2);
    expect((await testApp.balance(keyShop)).available).toBe(
      100_000_000n - micro(created.total_debit) - micro(answers[0]!.total_debit),
    );
    await testApp.carryToFinal(keyShop);
    await testApp.carryToFinal(otherShop);
  });

  it('the one who asked cannot approve: 403 forbidden, nothing changes; someone else can', async () => {
    const fourEyesShop = await testApp.payoutShop();
    await testApp.fund(fourEyesShop, 50_000_000n);
    await setWithdrawalApproval(deps, fourEyesShop.shopId, true);
    const created = await createWithdrawal(
      deps,
      input({
        merchantId: fourEyesShop.merchantId,
        shopId: fourEyesShop.shopId,
        amount: '3',
        requestedBy: 'clerk@example.com',
      }),
    );
    const self = await refusal(approveWithdrawal(testApp.context, created.withdrawal_id, ' Clerk@Example.com '));
    expect(self.code).toBe('forbidden');
    expect(self.message).toContain('someone else');
    expect((await getWithdrawal(testApp.context.db, created.withdrawal_id)).status).toBe('awaiting_approval');
    // Rejecting one's own request stays possible (it only releases the money).
    const approved = await approveWithdrawal(testApp.context, created.withdrawal_id, 'cfo@example.com');
    expect(approved.status).toBe('pending');
    await testApp.carryToFinal(fourEyesShop);
  });

  it('rejection voids the reservation (funds available again) and is reported once as cabinet.withdrawal.completed', async () => {
    const rejectShop = await testApp.payoutShop();
    await testApp.fund(rejectShop, 50_000_000n);
    await setWithdrawalApproval(deps, rejectShop.shopId, true);
    const created = await createWithdrawal(
      deps,
      input({ merchantId: rejectShop.merchantId, shopId: rejectShop.shopId, amount: '40' }),
    );
    expect((await testApp.balance(rejectShop)).available).toBe(50_000_000n - micro(created.total_debit));
    const rejected = await rejectWithdrawal(
      testApp.context,
      created.withdrawal_id,
      'finance@example.com',
      'unknown address',
    );
    expect(rejected).toMatchObject({
      status: 'rejected',
      decision: { by: 'finance@example.com', approved: false, reason: 'unknown address' },
    });
    expect(await testApp.balance(rejectShop)).toEqual({ available: 50_000_000n, pending: 0n, total: 50_000_000n });
    const events = await testApp.eventsOf(
      rejectShop,
      'cabinet.withdrawal.completed',
      'withdrawal_id',
      created.withdrawal_id,
    );
    expect(events).toEqual([rejected]);
    expect((await refusal(approveWithdrawal(testApp.context, created.withdrawal_id, 'x'))).code).toBe('invalid_state');
  });

  it('a reverted transfer: failed with {code, message}, the reservation voided, reported once', async () => {
    const before = await testApp.balance(shop);
    const request = input({ amount: '7' });
    await testApp.post(shop, '/v1/test_helpers/crypto/next_transfer_outcome', {
      address: request.address,
      outcome: 'revert',
    });
    const created = await createWithdrawal(deps, request);
    await testApp.carryToFinal(shop);
    const failed = await getWithdrawal(testApp.context.db, created.withdrawal_id);
    expect(failed).toMatchObject({ status: 'failed', completed_at: null, error: { code: 'reverted' } });
    expect(failed.error!.message).toContain('returned to your balance');
    expect(await testApp.balance(shop)).toEqual(before);
    expect(await completedEvents(created.withdrawal_id)).toEqual([failed]);
  });

  it('refusals change nothing: insufficient funds, bad amounts on both sides of each bound, bad address, a shop of another merchant', async () => {
    const poorShop = await testApp.payoutShop();
    await testApp.fund(poorShop, 5_000_000n);
    await setWithdrawalApproval(deps, poorShop.shopId, false);
    const poor = input({ merchantId: poorShop.merchantId, shopId: poorShop.shopId });
    const count = async () => (await testApp.context.db.selectFrom('crypto_withdrawals').select('id').execute()).length;
    const before = await count();
    expect((await refusal(createWithdrawal(deps, { ...poor, amount: '5' }))).code).toBe('insufficient_funds');
    for (const amount of ['0', '0.001', '10.010', '10.000000', '1e1', '-1', '1000000000.01', 'ten']) {
      expect(await refusal(createWithdrawal(deps, { ...poor, amount })), amount).toMatchObject({
        code: 'invalid_request',
      });
    }
    expect((await refusal(createWithdrawal(deps, { ...poor, address: 'TXYZ' }))).message).toContain('address');
    // The gateway's own addresses: a deposit address of any shop, the hot wallet, the USDT contract.
    const invoice = await testApp.call(shop.key, 'POST', '/v1/crypto/invoices', {
      external_id: uniqueName('own'),
      amount: '2',
      network: 'TRC20',
    });
    expect(invoice.statusCode, invoice.body).toBe(201);
    const access = await testApp.crypto.chain.forMode('sandbox');
    for (const address of [invoice.json().address as string, access.addressKey.hotWalletAddress, access.usdtContract]) {
      expect(await refusal(createWithdrawal(deps, { ...poor, amount: '1', address })), address).toMatchObject({
        code: 'invalid_request',
      });
    }
    expect((await refusal(createWithdrawal(deps, { ...poor, shopId: shop.shopId }))).code).toBe('not_found');
    expect((await refusal(createWithdrawal(deps, { ...poor, requestedBy: ' ' }))).code).toBe('invalid_request');
    expect(await count()).toBe(before);
    expect(await testApp.balance(poorShop)).toEqual({ available: 5_000_000n, pending: 0n, total: 5_000_000n });
    // The inner side: the smallest amount (one cent) is accepted.
    const smallest = await createWithdrawal(deps, { ...poor, amount: '0.01' });
    expect(smallest.amount).toBe('0.01');
    await testApp.carryToFinal(poorShop);
    expect((await getWithdrawal(testApp.context.db, smallest.withdrawal_id)).status).toBe('completed');
  });
});

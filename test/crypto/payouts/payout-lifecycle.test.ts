// Payouts carried to the end by the real sign-once executor (its handlers taken
// from the module list, as the worker takes them) on the simulated chain over
// HTTP, driven through the API and its sandbox test helpers: pending →
// processing → completed with the reservation posted, and failed (a reverted
// transfer) with the funds returned; a batch with one failing item ends
// partially_completed with crypto.batch.completed; 1,000 payouts racing for a
// balance with room for 250. The ledger stays sound.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OutgoingExecutor } from '../../../src/crypto/sending/executor.ts';
import { sunToMicroUsdt } from '../../../src/crypto/sending/transfer-cost.ts';
import { backends } from '../../support/databases.ts';
import {
  createPayoutTestApp,
  externalId,
  micro,
  payoutBody,
  recipient,
  sandboxExecutor,
  type PayoutShop,
  type PayoutTestApp,
} from './payout-support.ts';

/** Solidified at head − 18: a transaction is final once 19 blocks include it and follow. */
const BLOCKS_TO_FINALITY = 19;

describe.each(backends)('payouts through the executor on %s', (backend) => {
  let testApp: PayoutTestApp;
  let shop: PayoutShop;
  let executor: OutgoingExecutor;

  beforeAll(async () => {
    testApp = await createPayoutTestApp(backend);
    shop = await testApp.payoutShop();
    await testApp.fund(shop, 1_000_000_000n);
    executor = await sandboxExecutor(testApp);
    await post('/v1/test_helpers/crypto/faucet', { usdt: '100000', trx: '100000' });
  });
  afterAll(async () => {
    await testApp.expectLedgerGreen();
    await executor.release();
    await testApp.close();
  });

  async function post(path: string, body?: unknown) {
    const response = await testApp.call(shop.key, 'POST', path, body);
    expect(response.statusCode, `${path}: ${response.body}`).toBeLessThan(300);
    return response.json();
  }
  const get = async (path: string) => (await testApp.call(shop.key, 'GET', path)).json();
  const mine = (count: number) => post('/v1/test_helpers/crypto/blocks', { count });

  /** Signs and broadcasts, includes, solidifies, and lets the executor record the outcomes. */
  async function carryToFinal(): Promise<void> {
    await executor.runPass();
    await mine(1);
    await mine(BLOCKS_TO_FINALITY);
    await executor.runPass();
  }

  async function eventsOf(type: string, id: string, key: 'payout_id' | 'batch_id'): Promise<Record<string, unknown>[]> {
    const rows = await testApp.context.db
      .selectFrom('webhook_events')
      .select('payload')
      .where('shop_id', '=', shop.shopId)
      .where('type', '=', type)
      .orderBy('created_at')
      .execute();
    return rows.map((row) => JSON.parse(row.payload).data).filter((data) => data[key] === id);
  }

  it('pending → processing with tx_hash → completed: the reservation is posted and the actual fee shown', async () => {
    const before = await testApp.balance(shop);
    const body = payoutBody({ amount: '42.50' });
    const created = await post('/v1/crypto/payouts', body);
    expect(created.status).toBe('pending');

    await executor.runPass();
    const processing = await get(`/v1/crypto/payouts/${created.payout_id}`);
    expect(processing).toMatchObject({ status: 'processing', completed_at: null, error: null });
    expect(processing.tx_hash).toMatch(/^[0-9a-f]{64}$/);

    await mine(1);
    await mine(BLOCKS_TO_FINALITY);
    await executor.runPass();
    const completed = await get(`/v1/crypto/payouts/${created.payout_id}`);
    expect(completed).toMatchObject({
      status: 'completed',
      tx_hash: processing.tx_hash,
      error: null,
      total_debit: created.total_debit,
    });
    expect(completed.completed_at).toBe(testApp.clock.now().toISOString());
    const feeSun = (
      await testApp.context.db
        .selectFrom('crypto_outgoing_transfers')
        .select('fee_sun')
        .where('owner_id', '=', created.payout_id)
        .executeTakeFirstOrThrow()
    ).fee_sun!;
    expect(micro(completed.network_fee_actual)).toBe(
      sunToMicroUsdt(BigInt(feeSun), testApp.context.config.trxUsdtRateMicro),
    );
    expect(micro(completed.network_fee_actual)).toBeLessThanOrEqual(micro(completed.network_fee));

    const after = await testApp.balance(shop);
    expect(before.available - after.available).toBe(micro(created.total_debit));
    expect(after.pending).toBe(before.pending);
    expect(
      (await eventsOf('crypto.payout.updated', created.payout_id, 'payout_id')).map((data) => data.status),
    ).toEqual(['pending', 'processing', 'completed']);
    // The recipient got exactly the amount on chain.
    const sandbox = await testApp.crypto.chain.sandboxChain();
    expect(sandbox.chain.state.usdtBalance(body.address as never)).toBe(42_500_000n);
  });

  it('a reverted transfer: failed with {code, message}, the funds available again', async () => {
    const before = await testApp.balance(shop);
    const body = payoutBody({ amount: '15' });
    await post('/v1/test_helpers/crypto/next_transfer_outcome', { address: body.address, outcome: 'revert' });
    const created = await post('/v1/crypto/payouts', body);
    expect((await testApp.balance(shop)).available).toBe(before.available - micro(created.total_debit));
    await carryToFinal();
    const failed = await get(`/v1/crypto/payouts/${created.payout_id}`);
    expect(failed).toMatchObject({ status: 'failed', completed_at: null, error: { code: 'reverted' } });
    expect(failed.error.message).toContain('returned');
    expect(micro(failed.network_fee_actual)).toBeGreaterThan(0n);
    expect(await testApp.balance(shop)).toEqual(before);
    expect(
      (await eventsOf('crypto.payout.updated', created.payout_id, 'payout_id')).map((data) => data.status),
    ).toEqual(['pending', 'processing', 'failed']);
    expect(
      (await get(`/v1/crypto/payouts?status=failed`)).data.map((payout: { payout_id: string }) => payout.payout_id),
    ).toContain(created.payout_id);
  });

  it('a hot wallet without TRX past the wait: pending → failed insufficient_hot_wallet_funds without a tx_hash, funds back', async () => {
    const impatient = await sandboxExecutor(testApp, { fundsWaitSeconds: 0 });
    await executor.release();
    try {
      const before = await testApp.balance(shop);
      await post('/v1/test_helpers/crypto/hot_wallet/drain_trx', {});
      const created = await post('/v1/crypto/payouts', payoutBody({ amount: '5' }));
      for (
        let pass = 0;
        pass < 3 && (await get(`/v1/crypto/payouts/${created.payout_id}`)).status === 'pending';
        pass++
      ) {
        await impatient.runPass();
        testApp.clock.advance(1_000);
      }
      const failed = await get(`/v1/crypto/payouts/${created.payout_id}`);
      expect(failed).toMatchObject({
        status: 'failed',
        tx_hash: null,
        error: { code: 'insufficient_hot_wallet_funds' },
      });
      expect(await testApp.balance(shop)).toEqual(before);
      expect(
        (await eventsOf('crypto.payout.updated', created.payout_id, 'payout_id')).map((data) => data.status),
      ).toEqual(['pending', 'failed']);
    } finally {
      await impatient.release();
      await post('/v1/test_helpers/crypto/faucet', { trx: '100000' });
    }
  });

  it('a batch whose one item reverts: partially_completed, counts per state, crypto.batch.completed once', async () => {
    const before = await testApp.balance(shop);
    const items = [0, 1, 2].map(() => ({ external_id: externalId('item'), amount: '3', address: recipient() }));
    await post('/v1/test_helpers/crypto/next_transfer_outcome', { address: items[1]!.address, outcome: 'revert' });
    const batch = await post('/v1/crypto/payouts/batch', {
      external_id: externalId('batch'),
      network: 'TRC20',
      payouts: items,
    });
    expect(batch).toMatchObject({
      status: 'pending',
      item_count: 3,
      counts: { pending: 3, processing: 0, completed: 0, failed: 0 },
    });

    await executor.runPass();
    expect((await get(`/v1/crypto/payouts/batch/${batch.batch_id}`)).status).toBe('processing');
    await mine(1);
    await mine(BLOCKS_TO_FINALITY);
    await executor.runPass();

    const done = await get(`/v1/crypto/payouts/batch/${batch.batch_id}`);
    expect(done).toMatchObject({
      status: 'partially_completed',
      counts: { pending: 0, processing: 0, completed: 2, failed: 1 },
    });
    expect(done.completed_at).not.toBeNull();
    expect(done.payouts.map((payout: { status: string }) => payout.status)).toEqual([
      'completed',
      'failed',
      'completed',
    ]);
    const completedEvents = await eventsOf('crypto.batch.completed', batch.batch_id, 'batch_id');
    expect(completedEvents).toEqual([done]);
    const spent = done.payouts
      .filter((payout: { status: string }) => payout.status === 'completed')
      .reduce((sum: bigint, payout: { total_debit: string }) => sum + micro(payout.total_debit), 0n);
    expect(before.available - (await testApp.balance(shop)).available).toBe(spent);
  });

  it('1,000 payouts at once against a balance with room for 250: exactly 250 accepted, all 250 completed, one transfer each on chain, never overspent', async () => {
    const racer = await testApp.payoutShop();
    const to = recipient();
    const quote = (
      await testApp.call(racer.key, 'POST', '/v1/crypto/payouts/quote', { network: 'TRC20', amount: '1', address: to })
    ).json();
    // Every payout is quoted before any completes: the recipient holds no USDT for all of them, so one price.
    await testApp.fund(racer, 250n * micro(quote.total_debit));
    const responses = await Promise.all(
      Array.from({ length: 1_000 }, () =>
        testApp.call(racer.key, 'POST', '/v1/crypto/payouts', {
          external_id: externalId('race'),
          network: 'TRC20',
          amount: '1',
          address: to,
        }),
      ),
    );
    const accepted = responses.filter((response) => response.statusCode === 201);
    const refused = responses.filter((response) => response.statusCode !== 201);
    expect(accepted).toHaveLength(250);
    expect(new Set(refused.map((response) => `${response.statusCode} ${response.json().error}`))).toEqual(
      new Set(['400 insufficient_funds']),
    );
    for (const response of accepted) expect(response.json().total_debit).toBe(quote.total_debit);
    expect(await testApp.balance(racer)).toMatchObject({ available: 0n });

    await carryToFinal();
    const payouts = await testApp.context.db
      .selectFrom('crypto_payouts')
      .select(['status', 'network_fee_actual_micro'])
      .where('shop_id', '=', racer.shopId)
      .execute();
    expect(payouts.map((row) => row.status)).toEqual(accepted.map(() => 'completed'));
    const sandbox = await testApp.crypto.chain.sandboxChain();
    expect(sandbox.chain.state.usdtBalance(to as never)).toBe(250n * 1_000_000n);
    // Every reservation posted whole (the quote is the price; the actual fee is booked beside it): nothing left, nothing pending.
    expect(await testApp.balance(racer)).toEqual({ available: 0n, pending: 0n, total: 0n });
    for (const row of payouts) expect(row.network_fee_actual_micro).not.toBeNull();
  });
});

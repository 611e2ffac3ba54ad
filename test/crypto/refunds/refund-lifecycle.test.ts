// Refunds carried to the end through the real sign-once executor on the
// simulated chain over HTTP, the deposits made and credited (or held) by the
// real chain watcher: a credited deposit sent back minus the network fee (the
// recipient's on-chain balance checked, the merchant's balance down by the
// deposit), a held deposit sent back without touching the balance, an invoice's
// deposits in one refund, a reverted refund that releases its deposit, and a
// deposit refunded at most once (also under 20 concurrent requests). The ledger
// stays sound after every test.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { backends } from '../../support/databases.ts';
import { externalId, micro, recipient, type PayoutShop } from '../payouts/payout-support.ts';
import { createChainTestApp, type ChainTestApp } from './refund-support.ts';

describe.each(backends)('refunds through the executor on %s', (backend) => {
  let testApp: ChainTestApp;
  let shop: PayoutShop;

  beforeAll(async () => {
    testApp = await createChainTestApp(backend);
    shop = await testApp.payoutShop();
    await testApp.post(shop, '/v1/test_helpers/crypto/faucet', { usdt: '100000', trx: '100000' });
    await testApp.mine(shop, 1);
    await testApp.watch();
  });
  afterEach(() => testApp.expectLedgerGreen());
  afterAll(() => testApp.close());

  const refundBody = (overrides: Record<string, unknown>) => ({
    external_id: externalId('refund'),
    address: recipient(),
    ...overrides,
  });

  it('a credited deposit: pending → processing → completed, the recipient gets the deposit minus the fee, the balance loses the deposit', async () => {
    const { depositId } = await testApp.creditedInvoiceDeposit(shop, '40');
    const before = await testApp.balance(shop);
    const body = refundBody({ deposit_id: depositId });
    const response = await testApp.call(shop.key, 'POST', '/v1/crypto/refunds', body);
    expect(response.statusCode, response.body).toBe(201);
    const created = response.json();
    expect(created).toMatchObject({
      status: 'pending',
      deposit_id: depositId,
      invoice_id: null,
      deposit_ids: [depositId],
      held: false,
      received_amount: '40',
      tx_hash: null,
    });
    expect(micro(created.network_fee)).toBeGreaterThan(0n);
    expect(micro(created.recipient_amount) + micro(created.network_fee)).toBe(40_000_000n);
    // Reserved at once: the deposit is no longer available.
    expect((await testApp.balance(shop)).available).toBe(before.available - 40_000_000n);

    await testApp.executor.runPass();
    const processing = await testApp.get(shop, `/v1/crypto/refunds/${created.refund_id}`);
    expect(processing.status).toBe('processing');
    expect(processing.tx_hash).toMatch(/^[0-9a-f]{64}$/);
    await testApp.carryToFinal(shop);

    const completed = await testApp.get(shop, `/v1/crypto/refunds/${created.refund_id}`);
    expect(completed).toMatchObject({ status: 'completed', tx_hash: processing.tx_hash, error: null });
    expect(completed.completed_at).not.toBeNull();
    expect(micro(completed.network_fee_actual)).toBeGreaterThan(0n);
    expect(await testApp.usdtOnChain(body.address)).toBe(micro(created.recipient_amount));
    const after = await testApp.balance(shop);
    expect(before.available - after.available).toBe(40_000_000n);
    expect(after.pending).toBe(before.pending);
    expect(
      (await testApp.eventsOf(shop, 'crypto.refund.updated', 'refund_id', created.refund_id)).map(
        (data) => data.status,
      ),
    ).toEqual(['pending', 'processing', 'completed']);
    const operations = (await testApp.get(shop, '/v1/crypto/balance/operations?type=refund&limit=100')).data.filter(
      (line: { reference: { id: string } }) => line.reference.id === created.refund_id,
    );
    expect(operations.map((line: { status: string }) => line.status)).toEqual(['posted', 'posted']);
  });

  it('a held deposit of a blocked wallet is sent back without touching the merchant balance', async () => {
    const wallet = await testApp.post(shop, '/v1/crypto/wallets', {
      client_id: externalId('client'),
      network: 'TRC20',
    });
    await testApp.post(shop, `/v1/crypto/wallets/${wallet.wallet_id}/block`);
    await testApp.post(shop, '/v1/test_helpers/crypto/deposits', { address: wallet.address, amount: '30' });
    await testApp.mine(shop, 1);
    await testApp.mine(shop, 19);
    await testApp.watch();
    const [deposit] = (await testApp.get(shop, `/v1/crypto/wallets/${wallet.wallet_id}`)).deposits;
    expect(deposit.status).toBe('held');
    const before = await testApp.balance(shop);

    const body = refundBody({ deposit_id: deposit.deposit_id });
    const created = await testApp.post(shop, '/v1/crypto/refunds', body);
    expect(created).toMatchObject({ status: 'pending', held: true, received_amount: '30' });
    expect(await testApp.balance(shop)).toEqual(before);
    await testApp.carryToFinal(shop);

    expect((await testApp.get(shop, `/v1/crypto/refunds/${created.refund_id}`)).status).toBe('completed');
    expect(await testApp.usdtOnChain(body.address)).toBe(micro(created.recipient_amount));
    expect(await testApp.balance(shop)).toEqual(before);
    // The held amount was never booked: only the fee kept out of it is, hot_wallet → network_fees, posted.
    const legs = await testApp.context.db
      .selectFrom('ledger_transfers')
      .select(['idempotency_key', 'amount'])
      .where('idempotency_key', 'like', `refund:${created.refund_id}:%`)
      .orderBy('idempotency_key')
      .execute();
    expect(legs.map((leg) => [leg.idempotency_key, BigInt(leg.amount)])).toEqual([
      [`refund:${created.refund_id}:network_fee`, micro(created.network_fee)],
      [`refund:${created.refund_id}:network_fee:post`, micro(created.network_fee)],
    ]);
  });

  it('an invoice refund sends every credited deposit of the invoice back in one transfer', async () => {
    const invoice = await testApp.post(shop, '/v1/crypto/invoices', {
      external_id: externalId('inv'),
      amount: '50',
      network: 'TRC20',
    });
    await testApp.post(shop, '/v1/test_helpers/crypto/deposits', { address: invoice.address, amount: '20' });
    await testApp.post(shop, '/v1/test_helpers/crypto/deposits', { address: invoice.address, amount: '30' });
    await testApp.mine(shop, 1);
    await testApp.mine(shop, 19);
    await testApp.watch();
    const depositIds = await testApp.depositIdsOfInvoice(invoice.invoice_id);
    expect(depositIds).toHaveLength(2);
    const before = await testApp.balance(shop);

    const body = refundBody({ invoice_id: invoice.invoice_id });
    const created = await testApp.post(shop, '/v1/crypto/refunds', body);
    expect(created).toMatchObject({
      invoice_id: invoice.invoice_id,
      deposit_id: null,
      deposit_ids: [...depositIds].sort(),
      received_amount: '50',
      held: false,
    });
    await testApp.carryToFinal(shop);
    expect((await testApp.get(shop, `/v1/crypto/refunds/${created.refund_id}`)).status).toBe('completed');
    expect(await testApp.usdtOnChain(body.address)).toBe(50_000_000n - micro(created.network_fee));
    expect(before.available - (await testApp.balance(shop)).available).toBe(50_000_000n);

    // Each of its deposits is now refunded: by deposit id, or the invoice again.
    for (const again of [{ deposit_id: depositIds[0] }, { invoice_id: invoice.invoice_id }]) {
      const response = await testApp.call(shop.key, 'POST', '/v1/crypto/refunds', refundBody(again));
      expect(response.statusCode, response.body).toBe(409);
      expect(response.json().error).toBe('already_refunded');
    }
  });

  it('a reverted refund fails, its reservation voided and its deposit released: a new refund of it completes', async () => {
    const { depositId } = await testApp.creditedInvoiceDeposit(shop, '25');
    const before = await testApp.balance(shop);
    const body = refundBody({ deposit_id: depositId });
    await testApp.post(shop, '/v1/test_helpers/crypto/next_transfer_outcome', {
      address: body.address,
      outcome: 'revert',
    });
    const created = await testApp.post(shop, '/v1/crypto/refunds', body);
    await testApp.carryToFinal(shop);
    const failed = await testApp.get(shop, `/v1/crypto/refunds/${created.refund_id}`);
    expect(failed).toMatchObject({ status: 'failed', completed_at: null, error: { code: 'reverted' } });
    expect(failed.error.message).toContain('refunded again');
    expect(await testApp.balance(shop)).toEqual(before);
    expect(
      (await testApp.eventsOf(shop, 'crypto.refund.updated', 'refund_id', created.refund_id)).map(
        (data) => data.status,
      ),
    ).toEqual(['pending', 'processing', 'failed']);

    const retry = await testApp.post(shop, '/v1/crypto/refunds', refundBody({ deposit_id: depositId }));
    await testApp.carryToFinal(shop);
    expect((await testApp.get(shop, `/v1/crypto/refunds/${retry.refund_id}`)).status).toBe('completed');
    expect(before.available - (await testApp.balance(shop)).available).toBe(25_000_000n);
  });

  it('a deposit is refunded at most once: a second request is 409 already_refunded, and of 20 concurrent ones exactly one wins', async () => {
    const { depositId } = await testApp.creditedInvoiceDeposit(shop, '12');
    const first = await testApp.post(shop, '/v1/crypto/refunds', refundBody({ deposit_id: depositId }));
    const second = await testApp.call(shop.key, 'POST', '/v1/crypto/refunds', refundBody({ deposit_id: depositId }));
    expect(second.statusCode).toBe(409);
    expect(second.json()).toMatchObject({ error: 'already_refunded' });
    expect(typeof second.json().message).toBe('string');

    const { depositId: raced } = await testApp.creditedInvoiceDeposit(shop, '13');
    const before = await testApp.balance(shop);
    const responses = await Promise.all(
      Array.from({ length: 20 }, () =>
        testApp.call(shop.key, 'POST', '/v1/crypto/refunds', refundBody({ deposit_id: raced })),
      ),
    );
    const codes = responses.map((response) => response.statusCode).sort();
    expect(codes).toEqual([201, ...Array<number>(19).fill(409)]);
    for (const response of responses.filter((candidate) => candidate.statusCode === 409))
      expect(response.json().error).toBe('already_refunded');
    expect(before.available - (await testApp.balance(shop)).available).toBe(13_000_000n);
    const rows = await testApp.context.db
      .selectFrom('crypto_refund_deposits')
      .select('refund_id')
      .where('deposit_id', '=', raced)
      .execute();
    expect(rows).toHaveLength(1);
    await testApp.carryToFinal(shop);
    expect((await testApp.get(shop, `/v1/crypto/refunds/${first.refund_id}`)).status).toBe('completed');
  });

  it('idempotent by external_id: the same parameters answer the refund (200), other parameters 409 duplicate_external_id', async () => {
    const { depositId } = await testApp.creditedInvoiceDeposit(shop, '11');
    const body = refundBody({ deposit_id: depositId });
    const created = await testApp.call(shop.key, 'POST', '/v1/crypto/refunds', body);
    expect(created.statusCode).toBe(201);
    const repeat = await testApp.call(shop.key, 'POST', '/v1/crypto/refunds', body);
    expect(repeat.statusCode).toBe(200);
    expect(repeat.json()).toEqual(created.json());
    const other = await testApp.call(shop.key, 'POST', '/v1/crypto/refunds', { ...body, address: recipient() });
    expect(other.statusCode).toBe(409);
    expect(other.json().error).toBe('duplicate_external_id');
    await testApp.carryToFinal(shop);
  });
});

// Dust: transfers below the shop's minimum deposit (default 0.01 USDT) through
// the real watcher and the simulated chain. A 0.000001 USDT poisoning transfer
// moves no invoice, sends no webhook and credits nothing, before or after it is
// final; it shows in the custody view; the shop's minimum is its own setting;
// an invoice smaller than the minimum is still paid; a reorganisation forgets
// the dust of the blocks it took away.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { listCustodyAddresses } from '../../../src/crypto/receiving/custody-service.ts';
import { sweepSummaries } from '../../../src/crypto/sweeping/sweep-custody.ts';
import {
  DEFAULT_MIN_DEPOSIT_MICRO,
  minimumDepositOfShop,
  parseMinimumDeposit,
  setMinimumDepositOfShop,
} from '../../../src/crypto/receiving/deposit-dust.ts';
import { expireDueInvoices } from '../../../src/crypto/receiving/invoice-expiry.ts';
import { createInvoice, getInvoice } from '../../../src/crypto/receiving/invoice-service.ts';
import { mineBlocks, simulateDeposit } from '../../../src/crypto/receiving/sandbox-chain-service.ts';
import { blockWallet, createWallet, getWallet } from '../../../src/crypto/receiving/wallet-service.ts';
import { tronAddress } from '../../../src/crypto/tron/address.ts';
import { InvalidRequestError, NotFoundError } from '../../../src/errors.ts';
import { backends } from '../../support/databases.ts';
import {
  eventTypes,
  expectLedgerSound,
  openReceivingSetup,
  usdtMainBalance,
  type ReceivingSetup,
} from './receiving-service-support.ts';
import { uniqueName } from '../../support/seeded-random.ts';

describe.each(backends)('dust deposits on %s', (backend) => {
  let setup: ReceivingSetup;
  beforeEach(async () => {
    setup = await openReceivingSetup(backend);
  });
  afterEach(async () => {
    await expectLedgerSound(setup);
    await setup.close();
  });

  const solidityDepth = () => setup.sandbox.chain.parameters.solidityDepth;
  const newInvoice = async (amount: string) =>
    (await createInvoice(setup.deps, setup.shop, { external_id: uniqueName('order'), amount, network: 'TRC20' }))
      .invoice;
  const depositRows = () => setup.context.db.selectFrom('crypto_deposits').selectAll().execute();
  const dustRows = () =>
    setup.context.db.selectFrom('crypto_ignored_deposits').selectAll().orderBy('seen_at').execute();
  const ledgerTransferCount = async () =>
    (await setup.context.db.selectFrom('ledger_transfers').select('id').execute()).length;
  const custodyOf = async (address: string) =>
    (await listCustodyAddresses(setup.deps, { limit: 100 }, sweepSummaries)).find((line) => line.address === address)!;

  /** Sends each amount to `address` in one block and lets the watcher see it, then carries it to finality. */
  async function sendAndFinalize(
    address: string,
    amounts: readonly string[],
  ): Promise<{ seen: number; settled: number }> {
    for (const amount of amounts) await simulateDeposit(setup.deps, setup.shop, { address, amount });
    await mineBlocks(setup.deps, setup.shop, 1);
    const seen = (await setup.defaultWatcher.runPass()).depositsSeen;
    await mineBlocks(setup.deps, setup.shop, solidityDepth());
    const settled = (await setup.defaultWatcher.runPass()).depositsSettled;
    return { seen, settled };
  }

  it('a 0.000001 USDT poisoning transfer to an invoice: no confirming, no underpaid, no webhook, no credit; shown in the custody view as dust', async () => {
    const invoice = await newInvoice('10');
    const ledgerBefore = await ledgerTransferCount();
    expect(await sendAndFinalize(invoice.address, ['0.000001'])).toEqual({ seen: 0, settled: 0 });
    expect((await getInvoice(setup.deps, setup.shop.shopId, invoice.invoice_id)).status).toBe('pending');
    expect(await eventTypes(setup)).toEqual([]);
    expect(await depositRows()).toEqual([]);
    expect(await ledgerTransferCount()).toBe(ledgerBefore);
    expect(await usdtMainBalance(setup)).toBe(0n);
    const [dust] = await dustRows();
    expect(dust).toMatchObject({
      address: invoice.address,
      shop_id: setup.shop.shopId,
      amount_micro: 1n,
      minimum_micro: DEFAULT_MIN_DEPOSIT_MICRO,
      chain: 'tron-sandbox',
    });
    expect(await custodyOf(invoice.address)).toMatchObject({
      usdt_on_chain: '0.000001',
      usdt_credited: '0',
      usdt_ignored_dust: '0.000001',
      usdt_unaccounted: '0',
    });

    // The real payment then pays it as if the dust had never come.
    expect(await sendAndFinalize(invoice.address, ['10'])).toEqual({ seen: 1, settled: 1 });
    expect(await getInvoice(setup.deps, setup.shop.shopId, invoice.invoice_id)).toMatchObject({
      status: 'paid',
      paid_amount: '10',
    });
    expect(await eventTypes(setup)).toEqual([
      'crypto.invoice.updated',
      'crypto.balance.funded',
      'crypto.invoice.updated',
    ]);
    expect(await usdtMainBalance(setup)).toBe(10_000_000n);
    expect(await custodyOf(invoice.address)).toMatchObject({
      usdt_on_chain: '10.000001',
      usdt_credited: '10',
      usdt_ignored_dust: '0.000001',
      usdt_unaccounted: '0',
    });
  });

  it('dust to an expired invoice does not make it underpaid (a late deposit would), and fires nothing', async () => {
    const invoice = (
      await createInvoice(setup.deps, setup.shop, {
        external_id: 'short-lived',
        amount: '10',
        network: 'TRC20',
        lifetime_s: 300,
      })
    ).invoice;
    setup.clock.advance(300_000);
    expect(await expireDueInvoices(setup.context.db, setup.clock)).toBe(1);
    const eventsBefore = await eventTypes(setup);
    expect(await sendAndFinalize(invoice.address, ['0.000001'])).toEqual({ seen: 0, settled: 0 });
    expect(await expireDueInvoices(setup.context.db, setup.clock)).toBe(0);
    expect(await getInvoice(setup.deps, setup.shop.shopId, invoice.invoice_id)).toMatchObject({
      status: 'expired',
      paid_amount: '0',
    });
    expect(await eventTypes(setup)).toEqual(eventsBefore);
    expect(await depositRows()).toEqual([]);
  });

  it('the minimum itself is a deposit; one micro-USDT less is dust', async () => {
    const invoice = await newInvoice('10');
    expect(await sendAndFinalize(invoice.address, ['0.009999', '0.01'])).toEqual({ seen: 1, settled: 1 });
    expect((await depositRows()).map((row) => row.amount_micro)).toEqual([10_000n]);
    expect((await dustRows()).map((row) => row.amount_micro)).toEqual([9_999n]);
    expect(await getInvoice(setup.deps, setup.shop.shopId, invoice.invoice_id)).toMatchObject({
      status: 'confirming',
      paid_amount: '0.01',
    });
    expect(await usdtMainBalance(setup)).toBe(10_000n);
  });

  it('dust to a static wallet (active or blocked): no crypto.wallet.deposit, no crypto.balance.funded, nothing held', async () => {
    const active = (await createWallet(setup.deps, setup.shop, { client_id: 'client-active', network: 'TRC20' }))
      .wallet;
    const blocked = (await createWallet(setup.deps, setup.shop, { client_id: 'client-blocked', network: 'TRC20' }))
      .wallet;
    await blockWallet(setup.deps, setup.shop.shopId, blocked.wallet_id);
    const eventsBefore = await eventTypes(setup);
    await simulateDeposit(setup.deps, setup.shop, { address: active.address, amount: '0.005' });
    expect(await sendAndFinalize(blocked.address, ['0.000001'])).toEqual({ seen: 0, settled: 0 });
    expect(await eventTypes(setup)).toEqual(eventsBefore);
    expect(await depositRows()).toEqual([]);
    expect(await getWallet(setup.deps, setup.shop.shopId, active.wallet_id)).toMatchObject({
      received_amount: '0',
      held_amount: '0',
    });
    expect(await getWallet(setup.deps, setup.shop.shopId, blocked.wallet_id)).toMatchObject({
      received_amount: '0',
      held_amount: '0',
    });
    expect(await custodyOf(active.address)).toMatchObject({
      usdt_on_chain: '0.005',
      usdt_ignored_dust: '0.005',
      usdt_held: '0',
      usdt_unaccounted: '0',
    });
    expect(await custodyOf(blocked.address)).toMatchObject({
      usdt_on_chain: '0.000001',
      usdt_ignored_dust: '0.000001',
      usdt_held: '0',
      usdt_unaccounted: '0',
    });
  });

  it('the minimum is per shop: raised to 1 USDT a 0.5 transfer is dust; lowered to 0.000001 every transfer is a deposit', async () => {
    expect(await minimumDepositOfShop(setup.context.db, setup.shop.shopId)).toBe(DEFAULT_MIN_DEPOSIT_MICRO);
    await setMinimumDepositOfShop(setup.context, setup.shop.shopId, 1_000_000n);
    expect(await minimumDepositOfShop(setup.context.db, setup.shop.shopId)).toBe(1_000_000n);
    const invoice = await newInvoice('10');
    expect(await sendAndFinalize(invoice.address, ['0.5'])).toEqual({ seen: 0, settled: 0 });
    expect((await dustRows()).map((row) => [row.amount_micro, row.minimum_micro])).toEqual([[500_000n, 1_000_000n]]);
    expect((await getInvoice(setup.deps, setup.shop.shopId, invoice.invoice_id)).status).toBe('pending');

    await setMinimumDepositOfShop(setup.context, setup.shop.shopId, 1n);
    expect(await sendAndFinalize(invoice.address, ['0.000001'])).toEqual({ seen: 1, settled: 1 });
    expect(await getInvoice(setup.deps, setup.shop.shopId, invoice.invoice_id)).toMatchObject({
      status: 'confirming',
      paid_amount: '0.000001',
    });
    // Recorded dust stays dust: a later setting does not reach back.
    expect(await dustRows()).toHaveLength(1);
  });

  it('an invoice smaller than the minimum is paid by a transfer of its amount', async () => {
    const invoice = await newInvoice('0.005');
    expect(await sendAndFinalize(invoice.address, ['0.004', '0.005'])).toEqual({ seen: 1, settled: 1 });
    expect(await getInvoice(setup.deps, setup.shop.shopId, invoice.invoice_id)).toMatchObject({
      status: 'paid',
      paid_amount: '0.005',
    });
    expect((await dustRows()).map((row) => [row.amount_micro, row.minimum_micro])).toEqual([[4_000n, 5_000n]]);
  });

  it('a reorganisation that takes dust away forgets it; dust moved to another block keeps one row', async () => {
    const invoice = await newInvoice('10');
    const chain = setup.sandbox.chain;
    expect(chain.sendUsdt({ to: tronAddress(invoice.address), amount: 7n }).result).toBe(true);
    chain.mine(1);
    await setup.defaultWatcher.runPass();
    expect(await dustRows()).toHaveLength(1);
    chain.reorg(1, { reinclude: false });
    chain.mine(2);
    expect((await setup.defaultWatcher.runPass()).reorganisations).toBe(1);
    expect(await dustRows()).toEqual([]);
    expect(await custodyOf(invoice.address)).toMatchObject({
      usdt_on_chain: '0',
      usdt_ignored_dust: '0',
      usdt_unaccounted: '0',
    });

    expect(chain.sendUsdt({ to: tronAddress(invoice.address), amount: 9n }).result).toBe(true);
    chain.mine(1);
    await setup.defaultWatcher.runPass();
    const [before] = await dustRows();
    chain.reorg(1, { newBlocks: 0 });
    chain.mine(solidityDepth() + 1);
    expect((await setup.defaultWatcher.runPass()).reorganisations).toBe(1);
    const after = await dustRows();
    expect(after).toHaveLength(1);
    expect(after[0]).toMatchObject({ tx_id: before!.tx_id, amount_micro: 9n });
    expect(after[0]!.block_id).not.toBe(before!.block_id);
    expect(await custodyOf(invoice.address)).toMatchObject({
      usdt_on_chain: '0.000009',
      usdt_ignored_dust: '0.000009',
      usdt_unaccounted: '0',
    });
    expect(await eventTypes(setup)).toEqual([]);
  });

  it('the setting is checked: 0.000001 to 100 USDT, at most 6 places, a shop that exists', async () => {
    expect(parseMinimumDeposit('0.000001')).toBe(1n);
    expect(parseMinimumDeposit('100')).toBe(100_000_000n);
    for (const text of ['0', '100.000001', '0.0000001', '-1', '1e1', '', 'abc'])
      expect(() => parseMinimumDeposit(text), text).toThrow(InvalidRequestError);
    await expect(setMinimumDepositOfShop(setup.context, setup.shop.shopId, 0n)).rejects.toThrow(InvalidRequestError);
    await expect(setMinimumDepositOfShop(setup.context, setup.shop.shopId, 100_000_001n)).rejects.toThrow(
      InvalidRequestError,
    );
    await expect(setMinimumDepositOfShop(setup.context, 'shop_missing', 1n)).rejects.toThrow(NotFoundError);
    await expect(minimumDepositOfShop(setup.context.db, 'shop_missing')).rejects.toThrow(NotFoundError);
    expect(await minimumDepositOfShop(setup.context.db, setup.shop.shopId)).toBe(DEFAULT_MIN_DEPOSIT_MICRO);
  });
});

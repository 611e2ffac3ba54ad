// Crypto invoices through the simulated chain: every state (exact, over, under
// within and beyond the shop's tolerance, expiry, late payment, several
// deposits), their webhooks and ledger credits, idempotency by external_id and
// the validation rules of the service.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { inTransaction } from '../../../src/db/transaction.ts';
import {
  DuplicateExternalIdError,
  InvalidRequestError,
  NotFoundError,
  ServiceUnavailableError,
} from '../../../src/errors.ts';
import { expireDueInvoices } from '../../../src/crypto/receiving/invoice-expiry.ts';
import {
  createInvoice,
  getInvoice,
  invoiceQrSvg,
  listInvoices,
} from '../../../src/crypto/receiving/invoice-service.ts';
import { depositsOfInvoice, setUnderpaidToleranceBps } from '../../../src/crypto/receiving/receiving-repository.ts';
import { mineBlocks, simulateDeposit } from '../../../src/crypto/receiving/sandbox-chain-service.ts';
import { parseTronAddress } from '../../../src/crypto/tron/address.ts';
import { backends } from '../../support/databases.ts';
import {
  creditsOfDeposit,
  eventTypes,
  expectLedgerSound,
  openReceivingSetup,
  usdtMainBalance,
  type ReceivingSetup,
} from './receiving-service-support.ts';
import { uniqueName } from '../../support/seeded-random.ts';

describe.each(backends)('crypto invoices on %s', (backend) => {
  let setup: ReceivingSetup;
  beforeEach(async () => {
    setup = await openReceivingSetup(backend);
  });
  afterEach(async () => {
    await expectLedgerSound(setup);
    await setup.close();
  });

  const newInvoice = (amount: string, extra: { lifetime_s?: number; external_id?: string } = {}) =>
    createInvoice(setup.deps, setup.shop, {
      external_id: extra.external_id ?? uniqueName('order'),
      amount,
      network: 'TRC20',
      lifetime_s: extra.lifetime_s,
    });

  /** Sends, mines the block, lets the watcher see it; then mines to finality and lets it settle. */
  async function payAndFinalize(address: string, amounts: readonly string[]): Promise<void> {
    const watcher = setup.defaultWatcher;
    for (const amount of amounts) await simulateDeposit(setup.deps, setup.shop, { address, amount });
    await mineBlocks(setup.deps, setup.shop, 1);
    const seen = await watcher.runPass();
    expect(seen.depositsSeen).toBe(amounts.length);
    await mineBlocks(setup.deps, setup.shop, setup.sandbox.chain.parameters.solidityDepth);
    const settled = await watcher.runPass();
    expect(settled.depositsSettled).toBe(amounts.length);
  }

  it('an invoice has a fresh valid address, the payment URI and a QR code of it', async () => {
    const first = await newInvoice('10.5');
    const second = await newInvoice('0.000001');
    expect(first.created).toBe(true);
    expect(first.invoice).toMatchObject({
      status: 'pending',
      amount: '10.5',
      paid_amount: '0',
      network: 'TRC20',
      asset: 'USDT',
      lifetime_s: 3600,
    });
    expect(parseTronAddress(first.invoice.address).ok).toBe(true);
    expect(second.invoice.address).not.toBe(first.invoice.address);
    expect(first.invoice.payment_uri).toBe(`tron:${first.invoice.address}?amount=10.5`);
    expect(second.invoice.payment_uri).toBe(`tron:${second.invoice.address}?amount=0.000001`);
    expect(new Date(first.invoice.expires_at).getTime() - new Date(first.invoice.created_at).getTime()).toBe(3_600_000);
    const svg = await invoiceQrSvg(setup.deps, setup.shop.shopId, first.invoice.invoice_id);
    expect(svg).toMatch(/^<svg[^>]*xmlns="http:\/\/www.w3.org\/2000\/svg"/);
    expect(svg).toContain('<path');
    const indexes = await setup.context.db
      .selectFrom('crypto_addresses')
      .select('derivation_index')
      .orderBy('derivation_index')
      .execute();
    expect(indexes.map((row) => row.derivation_index)).toEqual([0n, 1n]);
    expect(first.invoice.address).toBe(setup.access.addressKey.address(0));
  });

  it('paid exactly: pending → confirming when seen → paid when final; credited once with webhooks', async () => {
    const { invoice } = await newInvoice('25');
    await payAndFinalize(invoice.address, ['25']);
    const paid = await getInvoice(setup.deps, setup.shop.shopId, invoice.invoice_id);
    expect(paid).toMatchObject({ status: 'paid', paid_amount: '25' });
    expect(paid.paid_at).not.toBeNull();
    expect(await usdtMainBalance(setup)).toBe(25_000_000n);
    const [deposit] = await depositsOfInvoice(setup.context.db, invoice.invoice_id);
    expect(deposit).toMatchObject({ status: 'credited', late: false, amount_micro: 25_000_000n });
    expect(await creditsOfDeposit(setup, deposit!.id)).toBe(1);
    // confirming, then paid; the funding event between them.
    expect(await eventTypes(setup)).toEqual([
      'crypto.invoice.updated',
      'crypto.balance.funded',
      'crypto.invoice.updated',
    ]);
    // A further pass changes nothing.
    const again = await setup.defaultWatcher.runPass();
    expect(again.depositsSettled).toBe(0);
    expect(await usdtMainBalance(setup)).toBe(25_000_000n);
  });

  it('every invoice update also goes to its callback_url, with the full invoice', async () => {
    const { invoice } = await createInvoice(setup.deps, setup.shop, {
      external_id: 'with-callback',
      amount: '2',
      network: 'TRC20',
      callback_url: 'https://merchant.example/paygate',
    });
    await payAndFinalize(invoice.address, ['2']);
    const events = await setup.context.db
      .selectFrom('webhook_events')
      .select(['type', 'destination_url', 'payload'])
      .where('shop_id', '=', setup.shop.shopId)
      .where('type', '=', 'crypto.invoice.updated')
      .execute();
    const toCallback = events.filter((event) => event.destination_url === 'https://merchant.example/paygate');
    expect(
      toCallback.map((event) => (JSON.parse(event.payload) as { data: { status: string } }).data.status).sort(),
    ).toEqual(['confirming', 'paid']);
    // The shop's own endpoint gets the same events (this shop has none configured: stored, not sent).
    expect(events.filter((event) => event.destination_url === null)).toHaveLength(2);
    expect(JSON.parse(toCallback[0]!.payload).data).toMatchObject({
      invoice_id: invoice.invoice_id,
      address: invoice.address,
      amount: '2',
    });
  });

  it('status confirming while the deposit is not final', async () => {
    const { invoice } = await newInvoice('3');
    await simulateDeposit(setup.deps, setup.shop, { address: invoice.address, amount: '3' });
    await mineBlocks(setup.deps, setup.shop, 5);
    await setup.defaultWatcher.runPass();
    expect((await getInvoice(setup.deps, setup.shop.shopId, invoice.invoice_id)).status).toBe('confirming');
    expect(await usdtMainBalance(setup)).toBe(0n);
  });

  it('overpaid: more than the amount', async () => {
    const { invoice } = await newInvoice('10');
    await payAndFinalize(invoice.address, ['12.5']);
    expect(await getInvoice(setup.deps, setup.shop.shopId, invoice.invoice_id)).toMatchObject({
      status: 'overpaid',
      paid_amount: '12.5',
    });
    expect(await usdtMainBalance(setup)).toBe(12_500_000n);
  });

  it('underpaid within the shop tolerance is paid', async () => {
    await inTransaction(setup.context.db, (tx) =>
      setUnderpaidToleranceBps(tx, setup.shop.shopId, 100, setup.clock.now()),
    );
    const { invoice } = await newInvoice('100');
    await payAndFinalize(invoice.address, ['99']); // exactly 1 % short
    expect(await getInvoice(setup.deps, setup.shop.shopId, invoice.invoice_id)).toMatchObject({
      status: 'paid',
      paid_amount: '99',
    });
  });

  it('underpaid beyond the tolerance waits until expiry, then is underpaid (still credited)', async () => {
    await inTransaction(setup.context.db, (tx) =>
      setUnderpaidToleranceBps(tx, setup.shop.shopId, 100, setup.clock.now()),
    );
    const { invoice } = await newInvoice('100', { lifetime_s: 600 });
    await payAndFinalize(invoice.address, ['98.999999']);
    expect(await getInvoice(setup.deps, setup.shop.shopId, invoice.invoice_id)).toMatchObject({
      status: 'confirming',
      paid_amount: '98.999999',
    });
    expect(await expireDueInvoices(setup.context.db, setup.clock)).toBe(0);
    setup.clock.advance(600_000);
    expect(await expireDueInvoices(setup.context.db, setup.clock)).toBe(1);
    expect(await getInvoice(setup.deps, setup.shop.shopId, invoice.invoice_id)).toMatchObject({
      status: 'underpaid',
      paid_amount: '98.999999',
    });
    expect(await usdtMainBalance(setup)).toBe(98_999_999n);
  });

  it('several deposits add up to paid', async () => {
    const { invoice } = await newInvoice('50');
    await payAndFinalize(invoice.address, ['20', '30']);
    expect(await getInvoice(setup.deps, setup.shop.shopId, invoice.invoice_id)).toMatchObject({
      status: 'paid',
      paid_amount: '50',
    });
    expect(await depositsOfInvoice(setup.context.db, invoice.invoice_id)).toHaveLength(2);
    expect(await usdtMainBalance(setup)).toBe(50_000_000n);
  });

  it('expires unpaid at expires_at, with a webhook; a late payment is still credited and recorded as late', async () => {
    const { invoice } = await newInvoice('7', { lifetime_s: 300 });
    setup.clock.advance(299_000);
    expect(await expireDueInvoices(setup.context.db, setup.clock)).toBe(0);
    setup.clock.advance(1_000);
    expect(await expireDueInvoices(setup.context.db, setup.clock)).toBe(1);
    expect((await getInvoice(setup.deps, setup.shop.shopId, invoice.invoice_id)).status).toBe('expired');
    expect(await eventTypes(setup)).toEqual(['crypto.invoice.updated']);

    await payAndFinalize(invoice.address, ['7']);
    const late = await getInvoice(setup.deps, setup.shop.shopId, invoice.invoice_id);
    expect(late).toMatchObject({ status: 'paid', paid_amount: '7' });
    const [deposit] = await depositsOfInvoice(setup.context.db, invoice.invoice_id);
    expect(deposit).toMatchObject({ status: 'credited', late: true });
    expect(await usdtMainBalance(setup)).toBe(7_000_000n);
  });

  it('the same external_id and parameters is the same invoice; other parameters are 409', async () => {
    const first = await newInvoice('5', { external_id: 'order-1' });
    const again = await newInvoice('5.000000', { external_id: 'order-1' });
    expect(again).toEqual({ created: false, invoice: first.invoice });
    await expect(newInvoice('6', { external_id: 'order-1' })).rejects.toBeInstanceOf(DuplicateExternalIdError);
    const concurrent = await Promise.all(Array.from({ length: 10 }, () => newInvoice('9', { external_id: 'order-2' })));
    expect(new Set(concurrent.map((result) => result.invoice.invoice_id)).size).toBe(1);
    expect(concurrent.filter((result) => result.created)).toHaveLength(1);
    const list = await listInvoices(setup.deps, setup.shop.shopId, { limit: 10 });
    expect(list.data).toHaveLength(2);
  });

  it('refuses invalid requests naming the field', async () => {
    const base = { external_id: 'x', amount: '1', network: 'TRC20' };
    const refusals: [Record<string, unknown>, RegExp][] = [
      [{ amount: '1e3' }, /^amount /],
      [{ amount: '10.0000001' }, /^amount .*6 decimal places/],
      [{ amount: '-1' }, /^amount /],
      [{ amount: '' }, /^amount /],
      [{ amount: '0' }, /^amount must be greater than 0/],
      [{ amount: 10 }, /^amount must be a decimal string/],
      [{ amount: '1000000000.000001' }, /^amount must be at most/],
      [{ network: 'ERC20' }, /^network .*supported networks: TRC20/],
      [{ lifetime_s: 299 }, /^lifetime_s /],
      [{ lifetime_s: 43_201 }, /^lifetime_s /],
      [{ lifetime_s: 300.5 }, /^lifetime_s /],
      [{ external_id: '' }, /^external_id /],
      [{ external_id: 'x'.repeat(101) }, /^external_id /],
      [{ callback_url: 'ftp://example.com/x' }, /^callback_url /],
    ];
    for (const [change, message] of refusals) {
      const attempt = createInvoice(setup.deps, setup.shop, { ...base, ...change } as never);
      await expect(attempt).rejects.toBeInstanceOf(InvalidRequestError);
      await expect(attempt).rejects.toThrow(message);
    }
    for (const accepted of [
      { amount: '1000000000' },
      { lifetime_s: 300 },
      { lifetime_s: 43_200 },
      { external_id: 'y'.repeat(100) },
    ]) {
      await expect(
        createInvoice(setup.deps, setup.shop, { ...base, external_id: uniqueName('ok'), ...accepted }),
      ).resolves.toMatchObject({ created: true });
    }
  });

  it("another shop's invoice is not found; a live shop without keys is 503 naming the setting", async () => {
    const { invoice } = await newInvoice('1');
    await expect(getInvoice(setup.deps, 'shop_other', invoice.invoice_id)).rejects.toBeInstanceOf(NotFoundError);
    await expect(getInvoice(setup.deps, setup.shop.shopId, 'inv_unknown')).rejects.toBeInstanceOf(NotFoundError);
    const live = createInvoice(
      setup.deps,
      { shopId: setup.shop.shopId, mode: 'live' },
      { external_id: 'live-1', amount: '1', network: 'TRC20' },
    );
    await expect(live).rejects.toBeInstanceOf(ServiceUnavailableError);
    await expect(live).rejects.toThrow(/PAYGATE_TRON_XPUB_FILE/);
  });
});

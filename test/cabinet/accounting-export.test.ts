// The accounting export through the real app, its chain watcher and its sign-once
// executor on the simulated chain: after a paid payment (with a payer fee), a
// credited deposit, a completed payout with its service and network fees and a
// refund, every ledger entry of the merchant's accounts is in the file exactly
// once, the amounts per account add up to the balances GET /v1/crypto/balance
// reports, and each row names its object with the merchant's key of it and the
// transaction. The XLSX holds the same cells as the CSV; a formula stays text;
// the days narrow the file; only exports.create may download, and each download
// is audited.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_PAYOUT_SETTINGS, savePayoutSettings } from '../../src/crypto/payouts/payout-settings.ts';
import type { Asset } from '../../src/money/asset.ts';
import { parseMinor } from '../../src/money/decimal.ts';
import { createChainTestApp, type ChainTestApp } from '../crypto/refunds/refund-support.ts';
import { externalId, payoutBody, recipient, type PayoutShop } from '../crypto/payouts/payout-support.ts';
import { backends } from '../support/databases.ts';
import { addMember, CabinetClient, createOwner, type CabinetPerson } from './cabinet-client.ts';
import { cabinetRoutes } from './cabinet-route-table.ts';
import { parseCsv, readXlsx, sameCell } from './download-support.ts';

const FORMULA_ORDER_ID = '=HYPERLINK("http://evil.example/","click")';

function minorOf(text: string, currency: string): bigint {
  const negative = text.startsWith('-');
  const parsed = parseMinor(negative ? text.slice(1) : text, currency as Asset, 'decimal-string');
  if (!parsed.ok) throw new Error(`${text}: ${parsed.problem}`);
  return negative ? -parsed.minor : parsed.minor;
}

/** The CSV's rows as records by header. */
function records(csv: string): Record<string, string>[] {
  const [header, ...rows] = parseCsv(csv);
  return rows.map((row) => Object.fromEntries(header!.map((name, index) => [name, row[index] ?? ''])));
}

describe.each(backends)('the accounting export on %s', (backend) => {
  let testApp: ChainTestApp;
  let owner: CabinetPerson;
  let shop: PayoutShop;
  let client: CabinetClient;
  const made = {
    paymentId: '',
    depositId: '',
    invoiceExternalId: '',
    payoutId: '',
    payoutExternalId: '',
    payoutTxHash: '',
    refundId: '',
    refundExternalId: '',
    refundTxHash: '',
  };

  beforeAll(async () => {
    testApp = await createChainTestApp(backend);
    owner = await createOwner(testApp);
    shop = { shopId: owner.shopId, merchantId: owner.merchantId, key: owner.apiKey };
    client = new CabinetClient(testApp.app);
    expect((await client.signIn(owner.email)).statusCode).toBe(303);
    await savePayoutSettings(
      testApp.context.db,
      shop.shopId,
      { ...DEFAULT_PAYOUT_SETTINGS, serviceFeeFixedMicro: 500_000n },
      testApp.clock.now(),
    );
    await testApp.post(shop, '/v1/test_helpers/crypto/faucet', { usdt: '100000', trx: '100000' });
    await testApp.mine(shop, 1);
    await testApp.watch();

    // A paid RUB payment whose order_id a spreadsheet would run as a formula.
    const payment = await testApp.post(shop, '/v1/payments', {
      amount: 150,
      currency: 'RUB',
      order_id: FORMULA_ORDER_ID,
    });
    made.paymentId = payment.payment_id;
    await testApp.post(shop, `/v1/test_helpers/payments/${made.paymentId}/pay`);

    // A credited deposit to an invoice.
    const deposit = await testApp.creditedInvoiceDeposit(shop, '100');
    made.depositId = deposit.depositId;
    made.invoiceExternalId = (await testApp.get(shop, `/v1/crypto/invoices/${deposit.invoiceId}`)).external_id;

    // A completed payout: its amount, network fee and service fee.
    made.payoutExternalId = externalId('payout');
    const payout = await testApp.post(
      shop,
      '/v1/crypto/payouts',
      payoutBody({ amount: '10', external_id: made.payoutExternalId }),
    );
    made.payoutId = payout.payout_id;
    await testApp.carryToFinal(shop);
    const paidOut = await testApp.get(shop, `/v1/crypto/payouts/${made.payoutId}`);
    expect(paidOut.status).toBe('completed');
    made.payoutTxHash = paidOut.tx_hash;

    // A refund of a second credited deposit.
    const refunded = await testApp.creditedInvoiceDeposit(shop, '40');
    made.refundExternalId = externalId('refund');
    const refund = await testApp.post(shop, '/v1/crypto/refunds', {
      external_id: made.refundExternalId,
      address: recipient(),
      deposit_id: refunded.depositId,
    });
    made.refundId = refund.refund_id;
    await testApp.carryToFinal(shop);
    const sentBack = await testApp.get(shop, `/v1/crypto/refunds/${made.refundId}`);
    expect(sentBack.status).toBe('completed');
    made.refundTxHash = sentBack.tx_hash;
  });
  afterAll(() => testApp?.close());

  async function download(format: 'csv' | 'xlsx', query = '') {
    const response = await client.get(`/cabinet/shops/${shop.shopId}/accounting.${format}${query}`);
    expect(response.statusCode, response.body.slice(0, 500)).toBe(200);
    return response;
  }

  it('every ledger entry of the merchant’s accounts is in the file once, and the amounts per account add up to the balances', async () => {
    const rows = records((await download('csv')).body);
    const entries = await testApp.context.db
      .selectFrom('ledger_operations as o')
      .innerJoin('ledger_accounts as a', 'a.id', 'o.account_id')
      .select('o.id')
      .where('a.merchant_id', '=', shop.merchantId)
      .where('a.book', '=', 'sandbox')
      .execute();
    const ids = rows.map((row) => row.entry_id);
    expect(new Set(ids).size).toBe(ids.length);
    expect([...ids].sort()).toEqual(entries.map((entry) => entry.id).sort());

    const balances: { account_id: string; currency: string; kind: string; available: string }[] = (
      await testApp.get(shop, '/v1/crypto/balance')
    ).accounts;
    for (const account of balances) {
      const own = rows.filter((row) => row.account_id === account.account_id);
      const sum = own.reduce((total, row) => total + minorOf(row.amount!, account.currency), 0n);
      const debitCredit = own.reduce(
        (total, row) =>
          total +
          (row.credit ? minorOf(row.credit, account.currency) : 0n) -
          (row.debit ? minorOf(row.debit, account.currency) : 0n),
        0n,
      );
      expect(sum, `${account.currency} ${account.account_id}`).toBe(minorOf(account.available, account.currency));
      expect(debitCredit).toBe(sum);
      // Oldest first within the account: the last row's balance_after is the balance.
      if (own.length > 0) expect(own.at(-1)!.balance_after).toBe(account.available);
    }
    expect(balances.find((account) => account.currency === 'RUB' && account.kind === 'main')!.available).toBe('150.00');
  });

  it('each row names its object: the payment’s order_id, the deposit’s invoice and transaction, the payout and its two fees, the refund', async () => {
    const rows = records((await download('csv')).body);
    for (const row of rows) {
      expect(row.object_type, JSON.stringify(row)).toMatch(/^(payment|deposit|payout|refund|withdrawal|transfer)$/);
      expect(row.object_id).not.toBe('');
    }
    const of = (objectType: string, objectId: string) =>
      rows.filter((row) => row.object_type === objectType && row.object_id === objectId);

    const payment = of('payment', made.paymentId);
    expect(payment).toHaveLength(1);
    expect(payment[0]).toMatchObject({
      operation_type: 'payment',
      currency: 'RUB',
      credit: '150.00',
      debit: '',
      status: 'posted',
      shop_id: shop.shopId,
      // The CSV's formula guard: the order_id stays text.
      external_ref: `'${FORMULA_ORDER_ID}`,
      tx_hash: '',
    });

    const deposit = of('deposit', made.depositId);
    expect(deposit.length).toBeGreaterThanOrEqual(1);
    expect(deposit.map((row) => row.amount)).toContain('100.000000');
    for (const row of deposit) {
      expect(row.external_ref).toBe(made.invoiceExternalId);
      expect(row.tx_hash).toMatch(/^[0-9a-f]{64}$/);
    }

    const payout = of('payout', made.payoutId);
    // The amount, then the network fee and the service fee (both `payout_fee`), each posted when the payout landed.
    expect(payout.filter((row) => row.operation_type === 'payout').map((row) => row.debit)).toContain('10.000000');
    expect(payout.filter((row) => row.operation_type === 'payout_fee').length).toBeGreaterThanOrEqual(2);
    for (const row of payout) {
      expect(row).toMatchObject({
        external_ref: made.payoutExternalId,
        tx_hash: made.payoutTxHash,
        shop_id: shop.shopId,
      });
      expect(row.status).toBe('posted');
    }
    const serviceFee = payout.filter((row) => row.operation_type === 'payout_fee');
    expect(serviceFee.map((row) => row.debit)).toContain('0.500000');

    const refund = of('refund', made.refundId);
    expect(refund.length).toBeGreaterThanOrEqual(1);
    for (const row of refund)
      expect(row).toMatchObject({ external_ref: made.refundExternalId, tx_hash: made.refundTxHash });
  });

  it('the XLSX holds the CSV’s cells, amounts as numbers, and a formula as text', async () => {
    const csv = parseCsv((await download('csv')).body);
    const xlsx = await readXlsx((await download('xlsx')).rawPayload);
    expect(xlsx).toHaveLength(csv.length);
    csv.forEach((row, rowIndex) => {
      row.forEach((cell, columnIndex) => {
        const other = xlsx[rowIndex]![columnIndex] ?? null;
        expect(sameCell(cell, other), `row ${rowIndex} column ${csv[0]![columnIndex]}: ${cell} / ${other}`).toBe(true);
      });
    });
    const header = xlsx[0]!;
    const column = (name: string) => header.indexOf(name);
    const paymentRow = xlsx.find((row) => row[column('object_id')] === made.paymentId)!;
    expect(paymentRow[column('external_ref')]).toBe(FORMULA_ORDER_ID);
    expect(paymentRow[column('credit')]).toBe(150);
    expect(typeof paymentRow[column('balance_after')]).toBe('number');
  });

  it('every table’s XLSX download, filtered by days and narrowed to some columns, holds its CSV’s cells', async () => {
    const day = testApp.clock.now().toISOString().slice(0, 10);
    const downloads = cabinetRoutes(testApp)
      .filter((route) => route.method === 'GET' && route.url.startsWith('/cabinet/shops/:shopId/'))
      .filter((route) => route.url.endsWith('.xlsx'))
      .map((route) => route.url.replace(':shopId', shop.shopId).replace(/\.xlsx$/, ''));
    expect(downloads).toContain(`/cabinet/shops/${shop.shopId}/accounting`);
    for (const base of downloads) {
      const header = parseCsv((await client.get(`${base}.csv`)).body)[0]!;
      // A table takes a choice of columns (the accounting export has all of them whatever is asked).
      const columns = [header[0], header.at(-1)].join(',');
      const query = `?from=${day}&to=${day}&columns=${encodeURIComponent(columns)}`;
      const csv = await client.get(`${base}.csv${query}`);
      const xlsx = await client.get(`${base}.xlsx${query}`);
      expect([csv.statusCode, xlsx.statusCode], base).toEqual([200, 200]);
      expect(xlsx.headers['content-type']).toBe('application/vnd.openxmlformats-officedocument.spreadsheetml.sheet');
      expect(xlsx.headers['content-disposition']).toMatch(/^attachment; filename=".+\.xlsx"$/);
      const csvRows = parseCsv(csv.body);
      const xlsxRows = await readXlsx(xlsx.rawPayload);
      expect(xlsxRows.length, base).toBe(csvRows.length);
      csvRows.forEach((row, rowIndex) =>
        row.forEach((cell, columnIndex) =>
          expect(
            sameCell(cell, xlsxRows[rowIndex]![columnIndex] ?? null),
            `${base} row ${rowIndex} column ${columnIndex}`,
          ).toBe(true),
        ),
      );
    }
  });

  it('the days narrow the file, and a bad day is refused', async () => {
    const everything = records((await download('csv')).body);
    const day = everything[0]!.created_at!.slice(0, 10);
    const next = new Date(Date.parse(`${day}T00:00:00Z`) + 86_400_000).toISOString().slice(0, 10);
    expect(records((await download('csv', `?from=${day}&to=${day}`)).body)).toEqual(everything);
    expect(records((await download('csv', `?from=${next}`)).body)).toEqual([]);
    expect(records((await download('csv', `?to=${day}`)).body)).toEqual(everything);
    const bad = await client.get(`/cabinet/shops/${shop.shopId}/accounting.csv?from=2026-02-30`);
    expect(bad.statusCode).toBe(400);
    const reversed = await client.get(`/cabinet/shops/${shop.shopId}/accounting.xlsx?from=${next}&to=${day}`);
    expect(reversed.statusCode).toBe(400);
  });

  it('the page describes every column; finance may download, a viewer and a developer may not; each download is audited', async () => {
    const page = await client.get(`/cabinet/shops/${shop.shopId}/accounting`);
    expect(page.statusCode).toBe(200);
    const header = parseCsv((await download('csv')).body)[0]!;
    for (const name of header) expect(page.body).toContain(`<code>${name}</code>`);
    expect(page.body).toContain(`formaction="/cabinet/shops/${shop.shopId}/accounting.xlsx"`);
    expect((await client.get(`/cabinet/shops/${shop.shopId}`)).body).toContain(
      `/cabinet/shops/${shop.shopId}/accounting`,
    );

    const finance = new CabinetClient(testApp.app);
    await finance.signIn((await addMember(testApp, owner, 'finance')).email);
    expect((await finance.get(`/cabinet/shops/${shop.shopId}/accounting.xlsx?from=2026-11-01`)).statusCode).toBe(200);
    for (const role of ['viewer', 'developer'] as const) {
      const member = new CabinetClient(testApp.app);
      await member.signIn((await addMember(testApp, owner, role)).email);
      expect((await member.get(`/cabinet/shops/${shop.shopId}/accounting.csv`)).statusCode).toBe(403);
      expect((await member.get(`/cabinet/shops/${shop.shopId}/accounting`)).statusCode).toBe(403);
    }
    const audited = await testApp.context.db
      .selectFrom('audit_events')
      .select(['action', 'target', 'details'])
      .where('merchant_id', '=', shop.merchantId)
      .where('action', '=', 'export.downloaded')
      // The merchant's table downloads (other tests of this file) are audited too, under their own targets.
      .where('target', '=', 'accounting')
      .execute();
    const details = audited.map((row) => (typeof row.details === 'string' ? JSON.parse(row.details) : row.details));
    expect(details).toContainEqual({ format: 'xlsx', filters: { from: '2026-11-01' } });
    expect(details).toContainEqual({ format: 'csv', filters: {} });
  });
});

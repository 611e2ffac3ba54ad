// Methods and tariffs: method_unavailable, amount_not_supported, and amount_total = amount + payer fee (half-up).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { percentHalfUp as payerFeeKopecks } from '../../src/money/decimal.ts';
import { OPERATOR } from '../../src/audit/audit-service.ts';
import { updateShopMethod } from '../../src/payments/payment-methods.ts';
import { backends } from '../support/databases.ts';
import { createTestApp, type TestApp } from '../support/app.ts';
import { postPayment, sandboxShop } from './payment-test-support.ts';

describe('payer fee', () => {
  it('rounds half-up to whole kopecks', () => {
    expect(payerFeeKopecks(100n, 250)).toBe(3n); // 2.5 → 3
    expect(payerFeeKopecks(100n, 249)).toBe(2n); // 2.49 → 2
    expect(payerFeeKopecks(1n, 5000)).toBe(1n); // 0.5 → 1
    expect(payerFeeKopecks(100_000_000n, 10_000)).toBe(100_000_000n);
    expect(payerFeeKopecks(12_345n, 0)).toBe(0n);
  });
});

describe.each(backends)('methods and tariffs on %s', (backend) => {
  let testApp: TestApp;

  beforeAll(async () => {
    testApp = await createTestApp(backend);
  });
  afterAll(async () => testApp.close());

  it('every method is on by default with no fee: amount_total equals amount', async () => {
    const shop = await sandboxShop(testApp);
    for (const method of ['card', 'sbp', 'sberpay']) {
      const response = await postPayment(testApp, shop.key, { amount: 100, currency: 'RUB', method });
      expect(response.statusCode).toBe(201);
      expect(response.json()).toMatchObject({ method, amount: 100, amount_total: 100 });
    }
  });

  it('amount_total adds the bound method payer fee, half-up to kopecks', async () => {
    const shop = await sandboxShop(testApp);
    await updateShopMethod(testApp.context, shop.shopId, 'card', { feeBasisPoints: 250 }, OPERATOR);
    const response = await postPayment(testApp, shop.key, { amount: 10.1, currency: 'RUB', method: 'card' });
    // 1010 kopecks * 2.5 % = 25.25 → 25 kopecks
    expect(response.json()).toMatchObject({ amount: 10.1, amount_total: 10.35, method: 'card' });
    const half = await postPayment(testApp, shop.key, { amount: 1.02, currency: 'RUB', method: 'card' });
    // 102 * 2.5 % = 2.55 → 3 kopecks
    expect(half.json().amount_total).toBe(1.05);
  });

  it.each(['bitcoin', 'CARD', '', 'x'.repeat(32)])(
    'an unknown method code %j is 400 method_unavailable and creates nothing',
    async (method) => {
      const shop = await sandboxShop(testApp);
      const response = await postPayment(testApp, shop.key, { amount: 100, currency: 'RUB', method });
      expect(response.statusCode).toBe(400);
      expect(response.json().error).toBe('method_unavailable');
      expect(await count(testApp, shop.shopId)).toBe(0);
    },
  );

  it('a method switched off for the shop is 400 method_unavailable', async () => {
    const shop = await sandboxShop(testApp);
    await updateShopMethod(testApp.context, shop.shopId, 'sbp', { enabled: false }, OPERATOR);
    const response = await postPayment(testApp, shop.key, { amount: 100, currency: 'RUB', method: 'sbp' });
    expect(response.statusCode).toBe(400);
    expect(response.json().error).toBe('method_unavailable');
    expect(await count(testApp, shop.shopId)).toBe(0);
  });

  it('an amount outside the method range is 400 method_unavailable, on both sides of each bound', async () => {
    const shop = await sandboxShop(testApp);
    await updateShopMethod(
      testApp.context,
      shop.shopId,
      'sberpay',
      { minKopecks: 1_000n, maxKopecks: 50_000n },
      OPERATOR,
    );
    const cases: Array<[number, number]> = [
      [9.99, 400],
      [10, 201],
      [500, 201],
      [500.01, 400],
    ];
    for (const [amount, status] of cases) {
      const response = await postPayment(testApp, shop.key, { amount, currency: 'RUB', method: 'sberpay' });
      expect(response.statusCode, `amount ${amount}`).toBe(status);
      if (status === 400) expect(response.json().error).toBe('method_unavailable');
    }
  });

  it('an amount no enabled method covers is 400 amount_not_supported with a message saying what to do', async () => {
    const shop = await sandboxShop(testApp);
    for (const method of ['card', 'sbp'] as const)
      await updateShopMethod(testApp.context, shop.shopId, method, { maxKopecks: 10_000n }, OPERATOR);
    await updateShopMethod(testApp.context, shop.shopId, 'sberpay', { enabled: false }, OPERATOR);
    expect((await postPayment(testApp, shop.key, { amount: 100, currency: 'RUB' })).statusCode).toBe(201);
    const response = await postPayment(testApp, shop.key, { amount: 100.01, currency: 'RUB' });
    expect(response.statusCode).toBe(400);
    expect(response.json().error).toBe('amount_not_supported');
    expect(response.json().message).toMatch(/use an amount|widen/);
    expect(await count(testApp, shop.shopId)).toBe(1);
  });

  it('a shop with every method off answers amount_not_supported', async () => {
    const shop = await sandboxShop(testApp);
    for (const method of ['card', 'sbp', 'sberpay'] as const)
      await updateShopMethod(testApp.context, shop.shopId, method, { enabled: false }, OPERATOR);
    const response = await postPayment(testApp, shop.key, { amount: 100, currency: 'RUB' });
    expect(response.statusCode).toBe(400);
    expect(response.json().error).toBe('amount_not_supported');
  });

  it('refuses settings that break the limits', async () => {
    const shop = await sandboxShop(testApp);
    await expect(updateShopMethod(testApp.context, shop.shopId, 'card', { minKopecks: 50n }, OPERATOR)).rejects.toThrow(
      /limits/,
    );
    await expect(
      updateShopMethod(testApp.context, shop.shopId, 'card', { feeBasisPoints: 10_001 }, OPERATOR),
    ).rejects.toThrow(/fee/);
    await expect(updateShopMethod(testApp.context, shop.shopId, 'cash', { enabled: true }, OPERATOR)).rejects.toThrow(
      /unknown method/,
    );
  });
});

async function count(testApp: TestApp, shopId: string): Promise<number> {
  const rows = await testApp.context.db.selectFrom('payments').select('id').where('shop_id', '=', shopId).execute();
  return rows.length;
}

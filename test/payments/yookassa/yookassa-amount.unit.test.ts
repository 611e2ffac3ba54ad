// What goes into YooKassa's requests, without a server: kopecks as an exact
// decimal string and back, the payment body of each method, and the
// Idempotence-Key within YooKassa's 64 characters.
import { describe, expect, it } from 'vitest';
import { idempotenceKeyOf } from '../../../src/payments/connectors/yookassa/yookassa-client.ts';
import {
  kopecksOf,
  paymentBody,
  yookassaAmount,
} from '../../../src/payments/connectors/yookassa/yookassa-connector.ts';

describe('amounts', () => {
  it('writes kopecks as a decimal string with two places, exactly, however large', () => {
    expect(yookassaAmount(1n)).toEqual({ value: '0.01', currency: 'RUB' });
    expect(yookassaAmount(12_345n)).toEqual({ value: '123.45', currency: 'RUB' });
    expect(yookassaAmount(100_000_000_00n)).toEqual({ value: '100000000.00', currency: 'RUB' });
    // 2^53 + 1 kopecks: a double would round it.
    expect(yookassaAmount(9_007_199_254_740_993n).value).toBe('90071992547409.93');
  });

  it('reads YooKassa amounts back to the same kopecks, and refuses anything else', () => {
    for (const kopecks of [1n, 10n, 12_345n, 9_007_199_254_740_993n]) {
      expect(kopecksOf(yookassaAmount(kopecks))).toBe(kopecks);
    }
    expect(kopecksOf({ value: '2', currency: 'RUB' })).toBe(200n);
    expect(kopecksOf({ value: '1.005', currency: 'RUB' })).toBeUndefined();
    expect(kopecksOf({ value: 1.5, currency: 'RUB' })).toBeUndefined();
    expect(kopecksOf({ value: '1.50', currency: 'USD' })).toBeUndefined();
    expect(kopecksOf(undefined)).toBeUndefined();
  });
});

describe('the payment body', () => {
  const base = {
    chargeKey: 'pay_1:attempt-1',
    paymentId: 'pay_1',
    amountKopecks: 50_050n,
    currency: 'RUB' as const,
    returnUrl: 'https://gateway.example/pay/ord_1/return',
    description: `Shop: ${'x'.repeat(200)}`,
  };

  it('card and SberPay redirect back to our return URL; SBP asks for a QR', () => {
    expect(paymentBody({ ...base, method: 'card' })).toEqual({
      amount: { value: '500.50', currency: 'RUB' },
      capture: true,
      confirmation: { type: 'redirect', return_url: base.returnUrl },
      payment_method_data: { type: 'bank_card' },
      description: base.description.slice(0, 128),
      metadata: { paygate_payment_id: 'pay_1', paygate_charge_key: 'pay_1:attempt-1' },
    });
    expect(paymentBody({ ...base, method: 'sberpay' })).toMatchObject({
      confirmation: { type: 'redirect' },
      payment_method_data: { type: 'sberbank' },
    });
    expect(paymentBody({ ...base, method: 'sbp' })).toMatchObject({
      confirmation: { type: 'qr' },
      payment_method_data: { type: 'sbp' },
    });
  });
});

describe('Idempotence-Key', () => {
  it('keeps a short key as it is and sends a longer one as its SHA-256, the same each time', () => {
    expect(idempotenceKeyOf('pay_01:attempt-1')).toBe('pay_01:attempt-1');
    const long = `pay_${'a'.repeat(80)}`;
    expect(idempotenceKeyOf(long)).toMatch(/^[0-9a-f]{64}$/);
    expect(idempotenceKeyOf(long)).toBe(idempotenceKeyOf(long));
    expect(idempotenceKeyOf(`${long}b`)).not.toBe(idempotenceKeyOf(long));
  });
});

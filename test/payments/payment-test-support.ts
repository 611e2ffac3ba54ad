// Shared steps of the payments tests: a sandbox shop with a key, and a POST /v1/payments.
import type { TestApp } from '../support/app.ts';

export interface ShopWithKey {
  readonly shopId: string;
  readonly key: string;
}

export async function sandboxShop(testApp: TestApp, mode: 'sandbox' | 'live' = 'sandbox'): Promise<ShopWithKey> {
  const merchant = await testApp.createMerchant({ mode });
  return { shopId: merchant.shop_id, key: merchant.api_key };
}

export function postPayment(testApp: TestApp, key: string, body: unknown, headers: Record<string, string> = {}) {
  return testApp.app.inject({
    method: 'POST',
    url: '/v1/payments',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers },
    payload: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

export function getJson(testApp: TestApp, key: string, url: string) {
  return testApp.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${key}` } });
}

export function postHelper(testApp: TestApp, key: string, paymentId: string, action: 'pay' | 'fail' | 'expire') {
  return testApp.app.inject({
    method: 'POST',
    url: `/v1/test_helpers/payments/${paymentId}/${action}`,
    headers: { authorization: `Bearer ${key}` },
  });
}

/** A sandbox payment of `amount` RUB, paid through the test helper: the merchant's RUB main balance grows by it. */
export async function paidPayment(testApp: TestApp, key: string, amount: number): Promise<string> {
  const created = await postPayment(testApp, key, { amount, currency: 'RUB' });
  if (created.statusCode !== 201) throw new Error(`payment not created: ${created.statusCode} ${created.body}`);
  const paymentId = created.json().payment_id as string;
  const paid = await postHelper(testApp, key, paymentId, 'pay');
  if (paid.statusCode !== 200) throw new Error(`payment not paid: ${paid.statusCode} ${paid.body}`);
  return paymentId;
}

/** The acquirer's page a live card payment's `to_bank` step sends the payer on to (the href of its button). */
export function acquirerPageOf(html: string): string {
  const href = /id="to-bank" href="([^"]+)"/.exec(html)?.[1];
  if (href === undefined) throw new Error('the page has no link to the bank');
  return href.replaceAll('&amp;', '&').replaceAll('&quot;', '"').replaceAll('&#39;', "'");
}

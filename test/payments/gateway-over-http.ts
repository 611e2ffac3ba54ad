// A gateway process on a real port, driven over HTTP as a merchant and a payer
// would: the merchant's API calls with its key, and a live card payment taken
// from the payer page's button through our `to_bank` step to the acquirer's page.
import { expect } from 'vitest';
import { acquirerPageOf } from './payment-test-support.ts';

function field(html: string, name: string): string {
  const value = new RegExp(`name="${name}" value="([^"]*)"`).exec(html)?.[1];
  if (value === undefined) throw new Error(`the page has no field ${name}`);
  return value;
}

/** The merchant's API at `gateway` with `apiKey`: a GET without a body, a JSON POST with one. */
export function merchantApi(gateway: string, apiKey: string) {
  return async (path: string, body?: unknown) => {
    const response = await fetch(`${gateway}${path}`, {
      method: body === undefined ? 'GET' : 'POST',
      headers: {
        authorization: `Bearer ${apiKey}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: response.status, json: (await response.json()) as Record<string, unknown> };
  };
}

/**
 * A live card payment of 2500 ₽ created through the API, the payer page's button
 * pressed, and the acquirer's page our `to_bank` step links to (a form may not
 * redirect off our origin under CSP form-action 'self').
 */
export async function cardPaymentSentToAcquirer(
  gateway: string,
  api: ReturnType<typeof merchantApi>,
  callbackUrl: string,
): Promise<{ paymentId: string; acquirerUrl: string }> {
  const created = await api('/v1/payments', {
    amount: 2500,
    currency: 'RUB',
    method: 'card',
    callback_url: callbackUrl,
  });
  expect(created.status).toBe(201);
  const orderCode = String(created.json['order_code']);
  const page = await fetch(`${gateway}/pay/${orderCode}?lang=en`);
  const html = await page.text();
  const cookie = page.headers.getSetCookie()[0]!.split(';')[0]!;
  const submitted = await fetch(`${gateway}/pay/${orderCode}/card`, {
    method: 'POST',
    redirect: 'manual',
    headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ csrf: field(html, 'csrf'), attempt: field(html, 'attempt'), lang: 'en' }).toString(),
  });
  expect(submitted.status).toBe(303);
  const toBank = await fetch(`${gateway}${submitted.headers.get('location')!}`);
  return { paymentId: String(created.json['payment_id']), acquirerUrl: acquirerPageOf(await toBank.text()) };
}

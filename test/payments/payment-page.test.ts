// The hosted payment page over the real HTTP stack: rendering, languages,
// CSRF, the sandbox acquirer's card and QR flows, and charging once.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OPERATOR } from '../../src/audit/audit-service.ts';
import { updateShopMethod } from '../../src/payments/payment-methods.ts';
import { backends } from '../support/databases.ts';
import { createTestApp, type TestApp } from '../support/app.ts';
import { getJson, postPayment, sandboxShop, type ShopWithKey } from './payment-test-support.ts';

interface OpenedPage {
  readonly status: number;
  readonly html: string;
  readonly cookie: string;
  readonly csrf: string | undefined;
  readonly attempt: string | undefined;
}

function field(html: string, name: string): string | undefined {
  return new RegExp(`name="${name}" value="([^"]*)"`).exec(html)?.[1];
}

describe.each(backends)('payment page on %s', (backend) => {
  let testApp: TestApp;
  let shop: ShopWithKey;

  beforeAll(async () => {
    testApp = await createTestApp(backend);
    shop = await sandboxShop(testApp);
  });
  afterAll(async () => testApp.close());

  async function create(body: Record<string, unknown> = {}) {
    return (
      await postPayment(testApp, shop.key, { amount: 1500.5, currency: 'RUB', order_id: 'ORD-7', ...body })
    ).json();
  }

  async function open(path: string, cookie = '', headers: Record<string, string> = {}): Promise<OpenedPage> {
    const response = await testApp.app.inject({ method: 'GET', url: path, headers: { cookie, ...headers } });
    const setCookie = response.headers['set-cookie'];
    const newCookie = typeof setCookie === 'string' ? setCookie.split(';')[0]! : cookie;
    return {
      status: response.statusCode,
      html: response.body,
      cookie: newCookie,
      csrf: field(response.body, 'csrf'),
      attempt: field(response.body, 'attempt'),
    };
  }

  function submit(path: string, cookie: string, form: Record<string, string>) {
    return testApp.app.inject({
      method: 'POST',
      url: path,
      headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams(form).toString(),
    });
  }

  async function status(paymentId: string): Promise<string> {
    return (await getJson(testApp, shop.key, `/v1/payments/${paymentId}`)).json().status;
  }

  const goodCard = { 'cc-number': '4242 4242 4242 4242', 'cc-exp': '12/34', 'cc-csc': '123' };

  it('shows the shop, the amounts and a method choice, in Russian by default and English on request', async () => {
    const payment = await create();
    const page = await open(new URL(payment.payment_url).pathname);
    expect(page.status).toBe(200);
    expect(page.html).toContain('<html lang="ru">');
    expect(page.html).toContain('Оплата заказа');
    expect(page.html).toContain('1\u00a0500,50\u00a0₽');
    expect(page.html).toContain('ORD-7');
    expect(page.html).toMatch(/data-method="card"[\s\S]*data-method="sbp"[\s\S]*data-method="sberpay"/);
    expect(page.html).not.toMatch(/<(script|link|img)[^>]+src=/); // no external assets
    const english = await open(`/pay/${payment.order_code}`, '', { 'accept-language': 'en-US,en;q=0.9,ru;q=0.5' });
    expect(english.html).toContain('<html lang="en">');
    expect(english.html).toContain('1,500.50 RUB');
    const switched = await open(`/pay/${payment.order_code}?lang=en`, '', { 'accept-language': 'ru' });
    expect(switched.html).toContain('Choose how to pay');
  });

  it('opens the bound method directly, with no choice step, and the card form carries the autocomplete tokens', async () => {
    const payment = await create({ method: 'card' });
    const page = await open(`/pay/${payment.order_code}`);
    expect(page.html).not.toContain('data-method=');
    for (const token of [
      'autocomplete="cc-number"',
      'autocomplete="cc-exp"',
      'autocomplete="cc-csc"',
      'inputmode="numeric"',
      '<label for="cc-number">',
    ]) {
      expect(page.html).toContain(token);
    }
    expect(page.csrf).toBeDefined();
    expect(page.cookie).toMatch(/^paygate_page=/);
  });

  it('shows the method fee in the total the payer pays', async () => {
    const feeShop = await sandboxShop(testApp);
    await updateShopMethod(testApp.context, feeShop.shopId, 'card', { feeBasisPoints: 200 }, OPERATOR);
    const payment = (await postPayment(testApp, feeShop.key, { amount: 100, currency: 'RUB', method: 'card' })).json();
    expect(payment.amount_total).toBe(102);
    const page = await open(`/pay/${payment.order_code}?lang=en`);
    expect(page.html).toContain('102.00 RUB');
  });

  it('an unknown order code is a 404 page', async () => {
    expect((await open('/pay/doesNotExist1')).status).toBe(404);
    expect((await open('/pay/%3Cscript%3E')).status).toBe(404);
  });

  it('pays with the success card: the payment is paid and the page says so', async () => {
    const payment = await create({ method: 'card', callback_url: 'https://merchant.example/hook' });
    const page = await open(`/pay/${payment.order_code}`);
    const response = await submit(`/pay/${payment.order_code}/card`, page.cookie, {
      csrf: page.csrf!,
      attempt: page.attempt!,
      lang: 'en',
      ...goodCard,
    });
    expect(response.statusCode).toBe(303);
    expect(await status(payment.payment_id)).toBe('paid');
    const after = await open(response.headers.location as string, page.cookie);
    expect(after.html).toContain('data-status="paid"');
    expect(after.html).not.toContain('id="card-form"');
  });

  it('refuses a form without a valid CSRF token and charges nothing', async () => {
    const payment = await create({ method: 'card' });
    const page = await open(`/pay/${payment.order_code}`);
    const noCookie = await submit(`/pay/${payment.order_code}/card`, '', {
      csrf: page.csrf!,
      attempt: page.attempt!,
      ...goodCard,
    });
    expect(noCookie.statusCode).toBe(403);
    const forged = await submit(`/pay/${payment.order_code}/card`, page.cookie, {
      csrf: 'x'.repeat(43),
      attempt: page.attempt!,
      ...goodCard,
    });
    expect(forged.statusCode).toBe(403);
    // A token of another payment does not open this one.
    const other = await create({ method: 'card' });
    const otherPage = await open(`/pay/${other.order_code}`, page.cookie);
    const crossed = await submit(`/pay/${payment.order_code}/card`, page.cookie, {
      csrf: otherPage.csrf!,
      attempt: page.attempt!,
      ...goodCard,
    });
    expect(crossed.statusCode).toBe(403);
    expect(await status(payment.payment_id)).toBe('pending');
  });

  it('the decline card leaves the payment pending with a retry; the final-decline card fails it', async () => {
    const payment = await create({ method: 'card', callback_url: 'https://merchant.example/hook' });
    const page = await open(`/pay/${payment.order_code}`);
    const declined = await submit(`/pay/${payment.order_code}/card`, page.cookie, {
      csrf: page.csrf!,
      attempt: page.attempt!,
      'cc-number': '4000000000000002',
      'cc-exp': '12/34',
      'cc-csc': '123',
    });
    expect(declined.headers.location).toContain('declined=card_declined');
    expect(await status(payment.payment_id)).toBe('pending');
    const retry = await open(declined.headers.location as string, page.cookie);
    expect(retry.html).toContain('data-status="declined"');
    expect(retry.html).toContain('id="card-form"');
    await submit(`/pay/${payment.order_code}/card`, page.cookie, {
      csrf: retry.csrf!,
      attempt: retry.attempt!,
      'cc-number': '4000000000000119',
      'cc-exp': '12/34',
      'cc-csc': '123',
    });
    expect(await status(payment.payment_id)).toBe('failed');
    const events = await testApp.context.db
      .selectFrom('webhook_events')
      .select('type')
      .where('shop_id', '=', shop.shopId)
      .where('payload', 'like', `%${payment.payment_id}%`)
      .execute();
    expect(events.map((event) => event.type)).toEqual(['payment.failed']);
  });

  it('an invalid card number (Luhn) or a past expiry never reaches a charge', async () => {
    const payment = await create({ method: 'card' });
    const page = await open(`/pay/${payment.order_code}`);
    const bad = await submit(`/pay/${payment.order_code}/card`, page.cookie, {
      csrf: page.csrf!,
      attempt: page.attempt!,
      'cc-number': '4242424242424241',
      'cc-exp': '12/34',
      'cc-csc': '123',
    });
    expect(bad.headers.location).toContain('invalid=1');
    const expiredCard = await submit(`/pay/${payment.order_code}/card`, page.cookie, {
      csrf: page.csrf!,
      attempt: page.attempt!,
      ...goodCard,
      'cc-exp': '01/20',
    });
    expect(expiredCard.headers.location).toContain('declined=expired_card');
    expect(await status(payment.payment_id)).toBe('pending');
  });

  it('a double submit of the card form charges once and pays once', async () => {
    const payment = await create({ method: 'card', callback_url: 'https://merchant.example/hook' });
    const page = await open(`/pay/${payment.order_code}`);
    const form = { csrf: page.csrf!, attempt: page.attempt!, ...goodCard };
    const responses = await Promise.all(
      [1, 2, 3].map(() => submit(`/pay/${payment.order_code}/card`, page.cookie, form)),
    );
    for (const response of responses) expect(response.statusCode).toBe(303);
    // A later submit of a freshly rendered form (another attempt) cannot pay again either.
    await submit(`/pay/${payment.order_code}/card`, page.cookie, { ...form, attempt: 'another-attempt-nonce-1' });
    const charges = await testApp.context.db
      .selectFrom('sandbox_acquirer_charges')
      .selectAll()
      .where('payment_id', '=', payment.payment_id)
      .execute();
    expect(charges.filter((charge) => charge.status === 'succeeded')).toHaveLength(1);
    expect(await status(payment.payment_id)).toBe('paid');
    const events = await testApp.context.db
      .selectFrom('webhook_events')
      .select('type')
      .where('payload', 'like', `%${payment.payment_id}%`)
      .execute();
    expect(events.map((event) => event.type)).toEqual(['payment.paid']);
  });

  it('the confirmation card asks for a confirmation step; confirming pays, cancelling leaves it pending', async () => {
    const payment = await create({ method: 'card' });
    const page = await open(`/pay/${payment.order_code}`);
    const first = await submit(`/pay/${payment.order_code}/card`, page.cookie, {
      csrf: page.csrf!,
      attempt: page.attempt!,
      ...goodCard,
      'cc-number': '4000000000003220',
    });
    expect(first.headers.location).toContain('confirm=');
    const confirmPage = await open(first.headers.location as string, page.cookie);
    expect(confirmPage.html).toContain('id="confirm-button"');
    const cancel = await submit(`/pay/${payment.order_code}/confirm`, page.cookie, {
      csrf: confirmPage.csrf!,
      charge: field(confirmPage.html, 'charge')!,
      decision: 'cancel',
    });
    expect(cancel.headers.location).toContain('declined=authentication_failed');
    expect(await status(payment.payment_id)).toBe('pending');

    const again = await open(`/pay/${payment.order_code}`, page.cookie);
    const second = await submit(`/pay/${payment.order_code}/card`, page.cookie, {
      csrf: again.csrf!,
      attempt: again.attempt!,
      ...goodCard,
      'cc-number': '4000000000003220',
    });
    const confirmAgain = await open(second.headers.location as string, page.cookie);
    await submit(`/pay/${payment.order_code}/confirm`, page.cookie, {
      csrf: confirmAgain.csrf!,
      charge: field(confirmAgain.html, 'charge')!,
      decision: 'approve',
    });
    expect(await status(payment.payment_id)).toBe('paid');
  });

  it('SBP and SberPay show a locally rendered QR code and pay through the sandbox action', async () => {
    for (const method of ['sbp', 'sberpay']) {
      const payment = await create();
      const page = await open(`/pay/${payment.order_code}?method=${method}`);
      expect(page.html).toMatch(/<svg[^>]*>[\s\S]*<path/);
      const response = await submit(`/pay/${payment.order_code}/qr`, page.cookie, {
        csrf: page.csrf!,
        attempt: page.attempt!,
        method,
      });
      expect(response.statusCode).toBe(303);
      expect(await status(payment.payment_id)).toBe('paid');
      // The method stays as bound at creation (null); the payer's choice is internal.
      expect((await getJson(testApp, shop.key, `/v1/payments/${payment.payment_id}`)).json().method).toBeNull();
    }
  });

  it('an expired payment shows the expired page and cannot be paid', async () => {
    const payment = await create({ method: 'card' });
    const page = await open(`/pay/${payment.order_code}`);
    testApp.clock.advance(3_600_000);
    const expiredPage = await open(`/pay/${payment.order_code}`, page.cookie);
    expect(expiredPage.html).toContain('data-status="expired"');
    await submit(`/pay/${payment.order_code}/card`, page.cookie, {
      csrf: page.csrf!,
      attempt: page.attempt!,
      ...goodCard,
    });
    expect(await status(payment.payment_id)).toBe('pending'); // the worker will expire it; it was never paid
    const charges = await testApp.context.db
      .selectFrom('sandbox_acquirer_charges')
      .selectAll()
      .where('payment_id', '=', payment.payment_id)
      .execute();
    expect(charges).toEqual([]);
  });
});

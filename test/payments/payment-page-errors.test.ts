// The payer's page never answers API JSON: a form too large (413), too many
// attempts (429) and an unexpected failure (500) are HTML pages in the payer's
// language, with the page's security headers, and nothing meant for merchants.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backends } from '../support/databases.ts';
import { createTestApp, type TestApp } from '../support/app.ts';
import { postPayment, sandboxShop } from './payment-test-support.ts';

const PAGE_ACTIONS_PER_MINUTE = 30;

describe.each(backends)('payment page errors on %s', (backend) => {
  let testApp: TestApp;
  let pagePath: string;

  beforeAll(async () => {
    testApp = await createTestApp(backend);
    const shop = await sandboxShop(testApp);
    const payment = (await postPayment(testApp, shop.key, { amount: 100, currency: 'RUB' })).json();
    pagePath = new URL(payment.payment_url).pathname;
  });
  afterAll(async () => testApp.close());

  /** Each test posts from its own address, so the per-address limits of one do not touch another. */
  function postForm(path: string, form: string, remoteAddress: string, headers: Record<string, string> = {}) {
    return testApp.app.inject({
      method: 'POST',
      url: path,
      remoteAddress,
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
      payload: form,
    });
  }

  function expectPayerPage(response: Awaited<ReturnType<typeof postForm>>, lang: 'ru' | 'en', title: string): void {
    expect(response.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(response.headers['content-security-policy']).toContain("default-src 'none'");
    expect(response.headers['cache-control']).toBe('no-store');
    expect(response.body).toContain(`<html lang="${lang}">`);
    expect(response.body).toContain(title);
    // Words meant for integrators stay out of the payer's page.
    for (const apiWord of ['with this key', 'KiB', '"error"', 'internal_error', 'Repeat the request'])
      expect(response.body).not.toContain(apiWord);
  }

  it('a form over the page limit is 413 as a page in the language the browser asks for', async () => {
    const form = `cc-number=${'4'.repeat(6000)}`;
    const english = await postForm(`${pagePath}/card`, form, '192.0.2.1', { 'accept-language': 'en-GB,en;q=0.9' });
    expect(english.statusCode).toBe(413);
    expectPayerPage(english, 'en', 'Too much data');
    const russian = await postForm(`${pagePath}/card`, form, '192.0.2.1');
    expect(russian.statusCode).toBe(413);
    expectPayerPage(russian, 'ru', 'Слишком много данных');
  });

  it('too many attempts from one address is 429 as a page, with Retry-After', async () => {
    const answers: number[] = [];
    for (let attempt = 0; attempt < PAGE_ACTIONS_PER_MINUTE; attempt++) {
      answers.push((await postForm(`${pagePath}/card`, 'csrf=stale', '192.0.2.2')).statusCode);
    }
    // Each is refused for its stale CSRF token, and each counts.
    expect(new Set(answers)).toEqual(new Set([403]));
    const limited = await postForm(`${pagePath}/card?lang=en`, 'csrf=stale', '192.0.2.2');
    expect(limited.statusCode).toBe(429);
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    expectPayerPage(limited, 'en', 'Too many attempts');
  });

  it('an unexpected failure is 500 as a page in the payer language, with nothing internal in it', async () => {
    // A real fault in the real database: a table the page reads is gone.
    await sql`alter table payment_method_settings rename to payment_method_settings_away`.execute(testApp.context.db);
    try {
      const response = await testApp.app.inject({ method: 'GET', url: pagePath, headers: { 'accept-language': 'ru' } });
      expect(response.statusCode).toBe(500);
      expectPayerPage(response, 'ru', 'Что-то пошло не так');
      expect(response.body).not.toContain('payment_method_settings');
    } finally {
      await sql`alter table payment_method_settings_away rename to payment_method_settings`.execute(testApp.context.db);
    }
    expect((await testApp.app.inject({ method: 'GET', url: pagePath })).statusCode).toBe(200);
  });

  it.each([
    ['GET', '/pay/x/y'],
    ['GET', '/pay'],
    ['POST', '/pay/whatever/else/entirely'],
  ])('%s %s, a path under /pay that names no page, is a 404 page in the payer language', async (method, path) => {
    const response = await testApp.app.inject({
      method: method as 'GET' | 'POST',
      url: path,
      remoteAddress: '192.0.2.4',
      headers: { 'accept-language': 'en' },
    });
    expect(response.statusCode).toBe(404);
    expectPayerPage(response, 'en', 'Payment not found');
  });

  it('a NUL in a form field is 400 as a page, not API JSON', async () => {
    const response = await postForm(`${pagePath}/qr?lang=en`, 'method=sbp%00', '192.0.2.3');
    expect(response.statusCode).toBe(400);
    expectPayerPage(response, 'en', 'The request could not be read');
  });
});

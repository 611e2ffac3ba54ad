// The hosted crypto invoice page through app.inject: what the payer sees (shop,
// amount, address, QR, countdown), in both languages, with the payment page's
// security headers; the status JSON its script polls; a page 404 for unknown ids.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expireDueInvoices } from '../../../src/crypto/receiving/invoice-expiry.ts';
import { backends } from '../../support/databases.ts';
import { createCryptoTestApp, invoiceBody, type CryptoTestApp } from './crypto-routes-support.ts';

describe.each(backends)('crypto invoice page on %s', (backend) => {
  let testApp: CryptoTestApp;
  let key: string;

  beforeAll(async () => {
    testApp = await createCryptoTestApp(backend);
    const merchant = await testApp.createMerchant({ name: 'Crypto <Shop> & Co' });
    key = merchant.api_key;
  });
  afterAll(() => testApp.close());

  const newInvoice = async (overrides: Record<string, unknown> = {}) =>
    (await testApp.call(key, 'POST', '/v1/crypto/invoices', invoiceBody(overrides))).json();
  const page = (path: string, language = 'en') =>
    testApp.app.inject({ method: 'GET', url: path, headers: { 'accept-language': language } });

  it('shows the shop, the amount, the address, the QR code of the payment URI and a countdown', async () => {
    const invoice = await newInvoice({ amount: '1500.5' });
    const response = await page(`/pay/crypto/${invoice.invoice_id}`);
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toBe('text/html; charset=utf-8');
    const html = response.body;
    expect(html).toContain('<html lang="en">');
    expect(html).toContain('Crypto &#60;Shop&#62; &#38; Co');
    expect(html).not.toContain('Crypto <Shop>');
    expect(html).toContain('data-testid="amount">1,500.5\u00a0USDT<');
    expect(html).toContain(`id="address" data-testid="address">${invoice.address}</code>`);
    expect(html).toMatch(/data-testid="qr"><svg[\s\S]*?<\/svg>\s*<\/div>/);
    expect(html).toContain(`href="${invoice.payment_uri}"`);
    expect(html).toContain('id="countdown"');
    expect(html).toContain('data-status="pending"');
    expect(html).toContain('Test mode');
    expect(html).toContain('id="copy-address"');
  });

  it('speaks Russian by Accept-Language or ?lang=ru, English by ?lang=en', async () => {
    const invoice = await newInvoice({ amount: '1500.5' });
    const russian = await page(`/pay/crypto/${invoice.invoice_id}`, 'ru-RU,ru;q=0.9');
    expect(russian.body).toContain('<html lang="ru">');
    expect(russian.body).toContain('Оплата в USDT');
    expect(russian.body).toContain('1\u00a0500,5\u00a0USDT');
    expect((await page(`/pay/crypto/${invoice.invoice_id}?lang=ru`, 'en')).body).toContain('Скопировать адрес');
    expect((await page(`/pay/crypto/${invoice.invoice_id}?lang=en`, 'ru')).body).toContain('Copy address');
  });

  it('carries the payment page’s security headers, with a CSP that allows only its own script, style and status polls', async () => {
    const invoice = await newInvoice();
    const response = await page(`/pay/crypto/${invoice.invoice_id}`);
    const csp = String(response.headers['content-security-policy']);
    const nonce = /script-src 'nonce-([A-Za-z0-9_-]+)'/.exec(csp)?.[1];
    expect(nonce).toBeDefined();
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("connect-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(response.headers['x-frame-options']).toBe('DENY');
    expect(response.headers['cache-control']).toBe('no-store');
    expect(response.headers['referrer-policy']).toBe('no-referrer');
    // Every script and style element carries the nonce; nothing inline runs without it.
    const tags = response.body.match(/<(script|style)\b[^>]*>/g) ?? [];
    expect(tags.length).toBeGreaterThan(0);
    for (const tag of tags) expect(tag).toContain(`nonce="${nonce}"`);
    expect(response.body).not.toMatch(/\son[a-z]+=/);
  });

  it('the status JSON gives what the page shows and nothing of the shop', async () => {
    const invoice = await newInvoice();
    const response = await page(`/pay/crypto/${invoice.invoice_id}/status`);
    expect(response.statusCode).toBe(200);
    expect(response.headers['cache-control']).toBe('no-store');
    expect(response.json()).toEqual({
      status: 'pending',
      amount: invoice.amount,
      paid_amount: invoice.paid_amount,
      expires_at: invoice.expires_at,
    });
  });

  it('an unknown or malformed id is a 404 page in the payer’s language; its status is a 404 JSON', async () => {
    for (const id of ['inv_01jcx1a2b3c4d5e6f7g8h9j0k3', 'inv_x', 'wal_01jcx1a2b3c4d5e6f7g8h9j0k3', '%3Cscript%3E']) {
      const response = await page(`/pay/crypto/${id}`);
      expect(response.statusCode, id).toBe(404);
      expect(response.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(response.body).toContain('Invoice not found');
      expect(response.body).not.toContain('<script>');
    }
    expect((await page('/pay/crypto/inv_01jcx1a2b3c4d5e6f7g8h9j0k3', 'ru')).body).toContain('Счёт не найден');
    const status = await page('/pay/crypto/inv_01jcx1a2b3c4d5e6f7g8h9j0k3/status');
    expect(status.statusCode).toBe(404);
    expect(status.json()).toEqual({ error: 'not_found' });
  });

  it('an expired invoice says so and no longer shows where to pay', async () => {
    const invoice = await newInvoice({ lifetime_s: 300 });
    testApp.clock.advance(301_000);
    await expireDueInvoices(testApp.context.db, testApp.clock);
    const html = (await page(`/pay/crypto/${invoice.invoice_id}`)).body;
    expect(html).toContain('data-status="expired"');
    expect(html).toContain('This invoice has expired');
    expect(html).not.toContain('id="address"');
    expect(html).not.toContain('id="countdown"');
  });
});

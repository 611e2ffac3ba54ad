// The payer's view of a crypto invoice in headless Chromium against the gateway
// on a real port, with the real workers (chain watcher, expiry): the page shows
// the address, amount and QR code; a payer sends USDT on the sandbox chain
// (test helper), blocks are mined, and the page turns to confirming, then paid,
// by itself. Skipped (loudly, by the global set-up) where no Chromium can be had.
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Worker } from '../../../src/context.ts';
import { createWorkers } from '../../../src/modules.ts';
import { CHROMIUM_ARGS, browserForTests } from '../../support/chromium.ts';
import { backends } from '../../support/databases.ts';
import { createCryptoTestApp, invoiceBody, type CryptoTestApp } from './crypto-routes-support.ts';
import { freePort } from '../../support/free-port.ts';
import { expectPageHoldsUp } from '../../support/page-checks.ts';
import { pageTrailForThisTest, type PageTrail } from '../../support/page-trail.ts';

const chromiumExecutable = browserForTests();
const describeInBrowser = 'skip' in chromiumExecutable ? describe.skip : describe;

describeInBrowser.each(backends)('crypto invoice page in Chromium on %s', (backend) => {
  let testApp: CryptoTestApp;
  let browser: Browser;
  let workers: Worker[];
  let key: string;
  let origin: string;

  beforeAll(async () => {
    if ('fail' in chromiumExecutable) throw new Error(chromiumExecutable.fail);
    const port = await freePort();
    origin = `http://127.0.0.1:${port}`;
    testApp = await createCryptoTestApp(backend, { config: { publicUrl: origin } });
    testApp.clock.set(new Date());
    await testApp.app.listen({ port, host: '127.0.0.1' });
    workers = createWorkers(testApp.modules);
    for (const worker of workers) worker.start();
    browser = await chromium.launch({
      executablePath: (chromiumExecutable as { path: string }).path,
      args: CHROMIUM_ARGS,
    });
    key = (await testApp.createMerchant({ name: 'Browser Crypto Shop' })).api_key;
  });
  /**
   * A page whose waits have no deadline of their own: the test's timeout is the only
   * bound, and the trail tells where it stood if that bound is reached.
   */
  function withoutDeadlines(trail: PageTrail, page: Page, name: string): Page {
    page.setDefaultTimeout(0);
    page.setDefaultNavigationTimeout(0);
    return trail.watch(page, name);
  }

  afterAll(async () => {
    await browser?.close();
    await Promise.all((workers ?? []).map((worker) => worker.stop()));
    await testApp?.close();
  });

  it(
    'shows address, amount and QR; paying on the sandbox chain turns the page confirming, then paid',
    { timeout: 300_000 },
    async () => {
      const invoice = (await testApp.call(key, 'POST', '/v1/crypto/invoices', invoiceBody({ amount: '12.5' }))).json();
      const context = await browser.newContext({ locale: 'en-US', extraHTTPHeaders: { 'accept-language': 'en' } });
      await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin });
      const trail = pageTrailForThisTest();
      const page = withoutDeadlines(trail, await context.newPage(), 'payer');
      const scriptErrors: string[] = [];
      page.on('pageerror', (error) => scriptErrors.push(error.message));
      page.on('console', (message) => {
        if (message.type() === 'error') scriptErrors.push(message.text());
      });
      trail.step('the pending invoice page loads');
      await page.goto(`${origin}/pay/crypto/${invoice.invoice_id}`);

      expect(await page.textContent('[data-testid="address"]')).toBe(invoice.address);
      expect(await page.textContent('[data-testid="amount"]')).toBe('12.5\u00a0USDT');
      expect(await page.textContent('body')).toContain('Browser Crypto Shop');
      const qr = await page.locator('[data-testid="qr"] svg').boundingBox();
      expect(qr?.width).toBeGreaterThan(100);
      expect(await page.locator('[data-status="pending"]').isVisible()).toBe(true);
      expect(await page.textContent('#countdown')).toMatch(/^\d+ min \d{2} s$/);
      await expectPageHoldsUp(page, 'invoice-pending', trail);

      // The clipboard takes text only from a focused document.
      await page.bringToFront();
      trail.step('Copy is clicked; the button says the address is copied');
      await page.click('#copy-address');
      // A locator's wait runs in Playwright's own world, out of the page's CSP (waitForFunction's eval is not).
      await page.locator('#copy-address', { hasText: /^Address copied$/ }).waitFor();
      expect(await page.evaluate('navigator.clipboard.readText()')).toBe(invoice.address);

      trail.step('a deposit is sent and mined in one block; the page turns confirming');
      const deposit = await testApp.call(key, 'POST', '/v1/test_helpers/crypto/deposits', {
        address: invoice.address,
        amount: '12.5',
      });
      expect(deposit.statusCode, deposit.body).toBe(200);
      expect((await testApp.call(key, 'POST', '/v1/test_helpers/crypto/blocks', { count: 1 })).statusCode).toBe(200);
      await page.waitForSelector('[data-status="confirming"]');
      await expectPageHoldsUp(page, 'invoice-confirming', trail);
      // Received counts final deposits only: nothing yet while the block is not solidified.
      expect(await page.textContent('[data-testid="paid-amount"]')).toBe('0\u00a0USDT');

      trail.step('19 more blocks solidify the deposit; the page turns paid');
      expect((await testApp.call(key, 'POST', '/v1/test_helpers/crypto/blocks', { count: 19 })).statusCode).toBe(200);
      await page.waitForSelector('[data-status="paid"]');
      expect(await page.textContent('[data-status="paid"] h2')).toBe('Payment received');
      expect(await page.textContent('[data-testid="paid-amount"]')).toBe('12.5\u00a0USDT');
      expect(await page.locator('#address').count()).toBe(0);
      await expectPageHoldsUp(page, 'invoice-paid', trail);
      const paid = (await testApp.call(key, 'GET', `/v1/crypto/invoices/${invoice.invoice_id}`)).json();
      expect(paid.status).toBe('paid');
      expect(scriptErrors).toEqual([]);
      await context.close();
    },
  );

  it('an unknown invoice id shows the not-found page in Russian', async () => {
    const trail = pageTrailForThisTest();
    const page = withoutDeadlines(
      trail,
      await browser.newPage({ extraHTTPHeaders: { 'accept-language': 'ru' } }),
      'payer',
    );
    trail.step('the not-found page loads');
    const response = await page.goto(`${origin}/pay/crypto/inv_01jcx1a2b3c4d5e6f7g8h9j0k3`);
    expect(response?.status()).toBe(404);
    expect(await page.textContent('[data-status="notFound"] h2')).toBe('Счёт не найден');
    await expectPageHoldsUp(page, 'invoice-not-found', trail);
    await page.close();
  });
});

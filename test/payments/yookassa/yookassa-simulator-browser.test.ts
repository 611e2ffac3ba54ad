// The YooKassa simulator's payer pages in headless Chromium, at a phone's and a
// desktop's width with the accessibility check: the confirmation page, its
// 3-D Secure step (the passcode typed, then back to the shop's return URL, paid)
// and the bank app that pays an SBP QR link. Skipped (loudly, by the global set-up) where no Chromium can be had.
import { createServer, type Server } from 'node:http';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AcquirerConnector } from '../../../src/payments/connectors/acquirer-connector.ts';
import { yookassaProvider } from '../../../src/payments/connectors/yookassa/yookassa-provider.ts';
import {
  SIMULATOR_3DS_PASSCODE,
  SIMULATOR_SHOP,
  startYooKassaSimulator,
  type YooKassaSimulator,
} from '../../../src/payments/connectors/yookassa/simulator/index.ts';
import { ManualClock } from '../../../src/clock.ts';
import { CHROMIUM_ARGS, browserForTests } from '../../support/chromium.ts';
import { expectPageHoldsUp } from '../../support/page-checks.ts';
import { closeServer, listen, silentLogger } from '../tbank/tbank-support.ts';

const chromiumExecutable = browserForTests();
const describeInBrowser = 'skip' in chromiumExecutable ? describe.skip : describe;

describeInBrowser('YooKassa simulator pages in Chromium', () => {
  let browser: Browser;
  let simulator: YooKassaSimulator;
  let shop: Server;
  let shopUrl: string;
  let yookassa: AcquirerConnector;

  beforeAll(async () => {
    if ('fail' in chromiumExecutable) throw new Error(chromiumExecutable.fail);
    shop = createServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      response.end('<!doctype html><html lang="en"><title>Shop</title><main><h1>Back at the shop</h1></main></html>');
    });
    shopUrl = await listen(shop);
    simulator = await startYooKassaSimulator({ port: 0, notify: false });
    yookassa = yookassaProvider.connect(
      {
        id: 'acq_browser',
        shopId: 'shop_browser',
        provider: 'yookassa',
        apiUrl: simulator.url,
        credentials: { shop_id: SIMULATOR_SHOP.shopId, secret_key: SIMULATOR_SHOP.secretKey },
        methods: ['card', 'sbp'],
        notificationUrl: `${shopUrl}/notifications`,
      },
      { clock: new ManualClock(), logger: silentLogger },
    );
    browser = await chromium.launch({
      executablePath: (chromiumExecutable as { path: string }).path,
      args: CHROMIUM_ARGS,
    });
  });
  afterAll(async () => {
    await browser?.close();
    await simulator?.close();
    if (shop) await closeServer(shop);
  });

  it('the confirmation page and its 3-D Secure step hold up, and the passcode brings the payer back paid', async () => {
    const request = {
      chargeKey: 'pay_browser1:attempt-browser-0001',
      paymentId: 'pay_browser1',
      method: 'card' as const,
      amountKopecks: 99_900n,
      currency: 'RUB' as const,
      returnUrl: `${shopUrl}/pay/ord_browser/return`,
      description: 'Browser shop: order 7',
    };
    const outcome = await yookassa.charge(request);
    if (outcome.status !== 'requires_action' || outcome.action.kind !== 'redirect')
      throw new Error('redirect expected');
    const page = await browser.newPage();
    await page.goto(outcome.action.url);
    await expect.poll(() => page.textContent('main')).toContain('999.00 ₽');
    await expectPageHoldsUp(page, 'yookassa-simulator-confirmation');

    await page.getByRole('button', { name: 'Pay with 3-D Secure' }).click();
    await page.getByLabel('One-time passcode').waitFor();
    await expectPageHoldsUp(page, 'yookassa-simulator-3ds');
    await page.getByLabel('One-time passcode').fill(SIMULATOR_3DS_PASSCODE);
    await page.getByRole('button', { name: 'Confirm' }).click();
    await page.waitForURL(request.returnUrl);
    expect(await page.textContent('h1')).toBe('Back at the shop');
    expect(await yookassa.lookup(request)).toMatchObject({ status: 'succeeded' });
    await page.close();
  });

  it('the bank app page of an SBP QR link holds up and pays', async () => {
    const request = {
      chargeKey: 'pay_browser2:attempt-browser-0002',
      paymentId: 'pay_browser2',
      method: 'sbp' as const,
      amountKopecks: 150_000n,
      currency: 'RUB' as const,
      returnUrl: `${shopUrl}/pay/ord_browser2/return`,
      description: 'Browser shop: order 8',
    };
    const outcome = await yookassa.charge(request);
    if (outcome.status !== 'requires_action' || outcome.action.kind !== 'qr') throw new Error('qr expected');
    const page = await browser.newPage();
    await page.goto(outcome.action.payload);
    await expectPageHoldsUp(page, 'yookassa-simulator-bank-app');
    await page.getByRole('button', { name: 'Pay' }).click();
    await expect.poll(() => page.textContent('main')).toContain('succeeded');
    expect(await yookassa.lookup(request)).toMatchObject({ status: 'succeeded' });
    await page.close();
  });
});

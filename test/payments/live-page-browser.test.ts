// A live shop's payer page in headless Chromium, against the gateway on a real
// port and the T-Bank simulator on another: the card button sends the payer to
// T-Bank's form and back to /return; the SBP QR page and the return page while
// the bank has not answered update by themselves by polling the status JSON.
// The same card and SBP steps run once more through the YooKassa simulator.
// Each page is checked at a phone's and a desktop's width with axe-core.
// Skipped (loudly, by the global set-up) where no Chromium can be had.
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { saveConnection } from '../../src/payments/connectors/acquirer-connections.ts';
import type { AcquirerProvider } from '../../src/payments/connectors/acquirer-provider.ts';
import {
  SIMULATOR_TERMINAL,
  startTBankSimulator,
  type TBankSimulator,
} from '../../src/payments/connectors/tbank/simulator/index.ts';
import { tbankProvider } from '../../src/payments/connectors/tbank/tbank-provider.ts';
import {
  SIMULATOR_SHOP,
  startYooKassaSimulator,
  type YooKassaSimulator,
} from '../../src/payments/connectors/yookassa/simulator/index.ts';
import { yookassaProvider } from '../../src/payments/connectors/yookassa/yookassa-provider.ts';
import { createReconciliationWorker } from '../../src/payments/reconciliation-worker.ts';
import { CHROMIUM_ARGS, browserForTests } from '../support/chromium.ts';
import { backends } from '../support/databases.ts';
import { createTestApp, type TestApp } from '../support/app.ts';
import { freePort } from '../support/free-port.ts';
import { expectPageHoldsUp } from '../support/page-checks.ts';
import { pageTrailForThisTest, type PageTrail } from '../support/page-trail.ts';
import { getJson, postPayment, sandboxShop, type ShopWithKey } from './payment-test-support.ts';

const chromiumExecutable = browserForTests();
const describeInBrowser = 'skip' in chromiumExecutable ? describe.skip : describe;

const PHONE = { width: 375, height: 812 };
const DESKTOP = { width: 1280, height: 800 };

/** The real T-Bank provider, taking notifications from the simulator on loopback instead of T-Bank's networks. */
const loopbackTbank: AcquirerProvider = {
  ...tbankProvider,
  connect: (connection, deps) =>
    tbankProvider.connect(connection, { ...deps, notificationSources: ['127.0.0.1/32', '::1/128'] }),
};
/** The real YooKassa provider, likewise taking the simulator's notifications on loopback. */
const loopbackYooKassa: AcquirerProvider = {
  ...yookassaProvider,
  connect: (connection, deps) =>
    yookassaProvider.connect(connection, { ...deps, notificationSources: ['127.0.0.1/32', '::1/128'] }),
};
const providers = new Map([
  [loopbackTbank.name, loopbackTbank],
  [loopbackYooKassa.name, loopbackYooKassa],
]);

/** The newest notifications a simulator sent, and whether the gateway accepted them. */
function notificationsSent(
  acquirer: string,
  deliveries: ReadonlyArray<{ readonly body: Readonly<Record<string, unknown>>; attempts: number; delivered: boolean }>,
): string {
  const newest = deliveries.slice(-6).map(({ body, attempts, delivered }) => {
    const what = body['Status'] ?? body['event'];
    return `${String(what)} of ${String(body['OrderId'] ?? body['PaymentId'] ?? '')}: ${attempts} attempt(s), ${delivered ? 'accepted' : 'not accepted'}`;
  });
  return `${acquirer} notifications (newest last): ${newest.join('; ') || 'none'}`;
}

describeInBrowser.each(backends)('live payer page in Chromium on %s', (backend) => {
  let testApp: TestApp;
  let simulator: TBankSimulator;
  let yookassa: YooKassaSimulator;
  let browser: Browser;
  /** A live shop charging through T-Bank, and one charging through YooKassa. */
  let shop: ShopWithKey;
  let yookassaShop: ShopWithKey;

  beforeAll(async () => {
    if ('fail' in chromiumExecutable) throw new Error(chromiumExecutable.fail);
    simulator = await startTBankSimulator({ port: 0, notificationRetryDelaysMs: [50, 50, 50] });
    yookassa = await startYooKassaSimulator({ port: 0, notificationRetryDelaysMs: [50, 50, 50] });
    const port = await freePort();
    testApp = await createTestApp(backend, {
      acquirerProviders: providers,
      config: { publicUrl: `http://127.0.0.1:${port}` },
    });
    testApp.clock.set(new Date());
    await testApp.app.listen({ port, host: '127.0.0.1' });
    shop = await sandboxShop(testApp, 'live');
    await saveConnection(testApp.context, providers, {
      shopId: shop.shopId,
      provider: 'tbank',
      apiUrl: simulator.url,
      credentials: { terminal_key: SIMULATOR_TERMINAL.terminalKey, password: SIMULATOR_TERMINAL.password },
    });
    yookassaShop = await sandboxShop(testApp, 'live');
    const yookassaConnection = await saveConnection(testApp.context, providers, {
      shopId: yookassaShop.shopId,
      provider: 'yookassa',
      apiUrl: yookassa.url,
      credentials: { shop_id: SIMULATOR_SHOP.shopId, secret_key: SIMULATOR_SHOP.secretKey },
    });
    // YooKassa takes the notification URL from the shop's settings, not from each payment.
    yookassa.setNotificationUrl(
      SIMULATOR_SHOP.shopId,
      `${testApp.context.config.publicUrl}/acquirers/yookassa/notifications/${yookassaConnection.id}`,
    );
    browser = await chromium.launch({
      executablePath: (chromiumExecutable as { path: string }).path,
      args: CHROMIUM_ARGS,
    });
  });
  afterAll(async () => {
    await browser?.close();
    await testApp?.close();
    await simulator?.close();
    await yookassa?.close();
  });

  async function newPayment(method: 'card' | 'sbp', onShop: ShopWithKey = shop) {
    return (await postPayment(testApp, onShop.key, { amount: 990, currency: 'RUB', method })).json() as {
      payment_id: string;
      payment_url: string;
      order_code: string;
    };
  }

  /**
   * A page whose waits have no deadline of their own: the test's timeout is the only
   * bound, and the trail tells where it stood if that bound is reached.
   */
  async function openPage(trail: PageTrail, name: string, viewport: { width: number; height: number }): Promise<Page> {
    const page = await browser.newPage({ viewport, extraHTTPHeaders: { 'accept-language': 'en' } });
    page.setDefaultTimeout(0);
    return trail.watch(page, name);
  }

  /** A trail for this test that also prints the simulators' notifications (whether the gateway took them). */
  function trailWithNotifications(): PageTrail {
    const trail = pageTrailForThisTest();
    trail.alsoPrint(() => notificationsSent('T-Bank', simulator.deliveries));
    trail.alsoPrint(() => notificationsSent('YooKassa', yookassa.deliveries));
    return trail;
  }

  async function statusOf(paymentId: string, onShop: ShopWithKey = shop): Promise<string> {
    return (await getJson(testApp, onShop.key, `/v1/payments/${paymentId}`)).json().status;
  }

  it('card: the button sends the payer to T-Bank’s form; approved there, back through /return, the page says paid', async () => {
    const trail = trailWithNotifications();
    const payment = await newPayment('card');
    const page = await openPage(trail, 'payer', PHONE);
    trail.step('the payment page loads');
    await page.goto(payment.payment_url);
    await expectPageHoldsUp(page, 'live-card-button', trail);
    // No card field here: the card is entered at the acquirer (SAQ A).
    expect(await page.locator('#cc-number').count()).toBe(0);
    trail.step('Pay is clicked; the payer reaches T-Bank’s form');
    await page.click('#pay-button');
    await page.waitForURL(/\/new\/f[0-9]+$/);
    trail.step('approved at T-Bank; the payer is back and the page says paid');
    await page.getByRole('button', { name: 'Pay (approve)' }).click();
    await page.waitForSelector('[data-status="paid"]');
    expect(new URL(page.url()).pathname).toBe(`/pay/${payment.order_code}`);
    expect(await page.textContent('[data-status="paid"]')).toContain('Payment successful');
    await expectPageHoldsUp(page, 'live-card-paid', trail);
    expect(await statusOf(payment.payment_id)).toBe('paid');
    await page.close();
  });

  it('SBP: the QR and the bank-app link show (the link first on a phone); paid in the bank app, the page updates by itself', async () => {
    const trail = trailWithNotifications();
    const payment = await newPayment('sbp');
    const page = await openPage(trail, 'payer', PHONE);
    trail.step('the payment page loads');
    await page.goto(payment.payment_url);
    trail.step('Pay is clicked; the QR page shows the bank-app link');
    await page.click('#pay-button');
    const link = page.locator('#open-bank-app');
    const qr = page.locator('.qr svg');
    await link.waitFor();
    expect(await qr.isVisible()).toBe(true);
    expect(await page.textContent('[data-status="waiting_for_payer"]')).toContain(
      'Waiting for the payment in your banking app',
    );
    // On a phone the link that opens the bank app comes before the QR; on a desktop the QR leads.
    expect((await link.boundingBox())!.y).toBeLessThan((await qr.boundingBox())!.y);
    await page.setViewportSize(DESKTOP);
    expect((await qr.boundingBox())!.y).toBeLessThan((await link.boundingBox())!.y);
    await expectPageHoldsUp(page, 'live-sbp-qr', trail);

    // The payer's bank app (another device) pays the link; T-Bank notifies the gateway.
    const bankApp = await openPage(trail, 'bank app', PHONE);
    trail.step('the bank app pays the link');
    await bankApp.goto((await link.getAttribute('href'))!);
    await bankApp.getByRole('button', { name: 'Pay' }).click();
    // The result page's text, waited for (expect.poll would give it one second).
    await bankApp.getByText('Status: CONFIRMED').waitFor();
    await bankApp.close();

    // Nobody touches the payer's page: its poll sees the payment paid and shows it.
    trail.step('the payer’s page polls until it says paid');
    await page.locator('[data-status="paid"]').waitFor();
    expect(await statusOf(payment.payment_id)).toBe('paid');
    await expectPageHoldsUp(page, 'live-sbp-paid', trail);
    await page.close();
  });

  it('back from T-Bank before the bank’s answer reaches us: the return page waits, then updates by itself', async () => {
    const trail = trailWithNotifications();
    const payment = await newPayment('card');
    const page = await openPage(trail, 'payer', PHONE);
    trail.step('the payment page loads');
    await page.goto(payment.payment_url);
    trail.step('Pay is clicked; the payer reaches T-Bank’s form');
    await page.click('#pay-button');
    await page.waitForURL(/\/new\/f[0-9]+$/);
    // T-Bank's notifications get lost; the return page's look-up waits 10 s per attempt.
    simulator.faults.notifications.lose = Number.MAX_SAFE_INTEGER;
    try {
      trail.step('approved at T-Bank, notifications lost; the return page waits for the bank');
      await page.getByRole('button', { name: 'Pay (approve)' }).click();
      await page.locator('[data-status="waiting_for_bank"]').waitFor();
      expect(await page.textContent('[data-status="waiting_for_bank"]')).toContain(
        'the bank has not confirmed the payment yet',
      );
      expect(await page.locator('#check-again').isVisible()).toBe(true);
      await expectPageHoldsUp(page, 'live-return-waiting', trail);
      expect(await statusOf(payment.payment_id)).toBe('pending');

      // The reconciliation worker asks T-Bank on schedule and records the payment.
      trail.step('the reconciliation worker records the payment');
      testApp.clock.advance(61_000);
      await createReconciliationWorker({ ...testApp.context, acquirerProviders: providers }).runOnce();
      expect(await statusOf(payment.payment_id)).toBe('paid');
      trail.step('the waiting page polls until it says paid');
      await page.locator('[data-status="paid"]').waitFor();
      expect(new URL(page.url()).search).not.toContain('returned');
    } finally {
      simulator.faults.notifications.lose = 0;
    }
    await page.close();
  });

  it('card: the button sends the payer to YooKassa’s page; approved there, back through /return, the page says paid', async () => {
    const trail = trailWithNotifications();
    const payment = await newPayment('card', yookassaShop);
    const page = await openPage(trail, 'payer', DESKTOP);
    trail.step('the payment page loads');
    await page.goto(payment.payment_url);
    expect(await page.locator('#cc-number').count()).toBe(0);
    trail.step('Pay is clicked; the payer reaches YooKassa’s page');
    await page.click('#pay-button');
    trail.step('approved at YooKassa; the payer is back and the page says paid');
    await page.getByRole('button', { name: 'Pay (approve)' }).click();
    await page.waitForSelector('[data-status="paid"]');
    expect(new URL(page.url()).pathname).toBe(`/pay/${payment.order_code}`);
    expect(await page.textContent('[data-status="paid"]')).toContain('Payment successful');
    await expectPageHoldsUp(page, 'live-yookassa-card-paid', trail);
    expect(await statusOf(payment.payment_id, yookassaShop)).toBe('paid');
    await page.close();
  });

  it('SBP through YooKassa: the QR and the bank-app link show; paid in the bank app, the page updates by itself', async () => {
    const trail = trailWithNotifications();
    const payment = await newPayment('sbp', yookassaShop);
    const page = await openPage(trail, 'payer', PHONE);
    trail.step('the payment page loads');
    await page.goto(payment.payment_url);
    trail.step('Pay is clicked; the QR page shows the bank-app link');
    await page.click('#pay-button');
    const link = page.locator('#open-bank-app');
    await link.waitFor();
    expect(await page.locator('.qr svg').isVisible()).toBe(true);
    await expectPageHoldsUp(page, 'live-yookassa-sbp-qr', trail);

    const bankApp = await openPage(trail, 'bank app', PHONE);
    trail.step('the bank app pays the link');
    await bankApp.goto((await link.getAttribute('href'))!);
    await bankApp.getByRole('button', { name: 'Pay' }).click();
    await bankApp.getByText('Status: succeeded').waitFor();
    await bankApp.close();

    trail.step('the payer’s page polls until it says paid');
    await page.locator('[data-status="paid"]').waitFor();
    expect(await statusOf(payment.payment_id, yookassaShop)).toBe('paid');
    await page.close();
  });
});

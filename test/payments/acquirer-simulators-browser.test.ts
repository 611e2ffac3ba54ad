// The acquirer simulators' payer pages in headless Chromium, at a phone's and a
// desktop's width with the accessibility check, the same steps for each
// provider: the hosted card page, its 3-D Secure step (the passcode typed, then
// back to the shop's return URL, paid) and the bank app that pays an SBP link.
// Skipped (loudly, by the global set-up) where no Chromium can be had.
import { createServer, type Server } from 'node:http';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.ts';
import type { AcquirerConnector } from '../../src/payments/connectors/acquirer-connector.ts';
import type { AcquirerProvider } from '../../src/payments/connectors/acquirer-provider.ts';
import * as tbankSimulator from '../../src/payments/connectors/tbank/simulator/index.ts';
import { tbankProvider } from '../../src/payments/connectors/tbank/tbank-provider.ts';
import * as yookassaSimulator from '../../src/payments/connectors/yookassa/simulator/index.ts';
import { yookassaProvider } from '../../src/payments/connectors/yookassa/yookassa-provider.ts';
import { CHROMIUM_ARGS, browserForTests } from '../support/chromium.ts';
import { expectPageHoldsUp } from '../support/page-checks.ts';
import { closeServer, listen, silentLogger } from './acquirer-test-support.ts';

const chromiumExecutable = browserForTests();
const describeInBrowser = 'skip' in chromiumExecutable ? describe.skip : describe;

interface SimulatedAcquirer {
  readonly title: string;
  readonly provider: AcquirerProvider;
  start(): Promise<{ readonly url: string; close(): Promise<void> }>;
  readonly credentials: Readonly<Record<string, string>>;
  readonly passcode: string;
  /** The snapshot names of its card page, 3-D Secure step and bank app. */
  readonly pages: { readonly card: string; readonly threeDs: string; readonly bankApp: string };
  /** What its bank app shows once the SBP payment went through. */
  readonly bankAppPaidText: string;
}

const ACQUIRERS: readonly SimulatedAcquirer[] = [
  {
    title: 'T-Bank',
    provider: tbankProvider,
    start: () => tbankSimulator.startTBankSimulator({ port: 0, notify: false }),
    credentials: {
      terminal_key: tbankSimulator.SIMULATOR_TERMINAL.terminalKey,
      password: tbankSimulator.SIMULATOR_TERMINAL.password,
    },
    passcode: tbankSimulator.SIMULATOR_3DS_PASSCODE,
    pages: { card: 'tbank-simulator-form', threeDs: 'tbank-simulator-3ds', bankApp: 'tbank-simulator-bank-app' },
    bankAppPaidText: 'CONFIRMED',
  },
  {
    title: 'YooKassa',
    provider: yookassaProvider,
    start: () => yookassaSimulator.startYooKassaSimulator({ port: 0, notify: false }),
    credentials: {
      shop_id: yookassaSimulator.SIMULATOR_SHOP.shopId,
      secret_key: yookassaSimulator.SIMULATOR_SHOP.secretKey,
    },
    passcode: yookassaSimulator.SIMULATOR_3DS_PASSCODE,
    pages: {
      card: 'yookassa-simulator-confirmation',
      threeDs: 'yookassa-simulator-3ds',
      bankApp: 'yookassa-simulator-bank-app',
    },
    bankAppPaidText: 'succeeded',
  },
];

describeInBrowser.each(ACQUIRERS)('$title simulator pages in Chromium', (acquirer) => {
  let browser: Browser;
  let simulator: { readonly url: string; close(): Promise<void> };
  let shop: Server;
  let shopUrl: string;
  let connector: AcquirerConnector;

  beforeAll(async () => {
    if ('fail' in chromiumExecutable) throw new Error(chromiumExecutable.fail);
    shop = createServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      response.end('<!doctype html><html lang="en"><title>Shop</title><main><h1>Back at the shop</h1></main></html>');
    });
    shopUrl = await listen(shop);
    simulator = await acquirer.start();
    connector = acquirer.provider.connect(
      {
        id: 'acq_browser',
        shopId: 'shop_browser',
        provider: acquirer.provider.name,
        apiUrl: simulator.url,
        credentials: acquirer.credentials,
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

  /** A page whose waits have no deadline of their own: the test's timeout is the only bound. */
  async function openPage(): Promise<Page> {
    const page = await browser.newPage();
    page.setDefaultTimeout(0);
    return page;
  }

  it('the card page and its 3-D Secure step hold up, and the passcode brings the payer back paid', async () => {
    const request = {
      chargeKey: 'pay_browser1:attempt-browser-0001',
      paymentId: 'pay_browser1',
      method: 'card' as const,
      amountKopecks: 99_900n,
      currency: 'RUB' as const,
      returnUrl: `${shopUrl}/pay/ord_browser/return`,
      description: 'Browser shop: order 7',
    };
    const outcome = await connector.charge(request);
    if (outcome.status !== 'requires_action' || outcome.action.kind !== 'redirect')
      throw new Error('redirect expected');
    const page = await openPage();
    await page.goto(outcome.action.url);
    expect(await page.textContent('main')).toContain('999.00 ₽');
    await expectPageHoldsUp(page, acquirer.pages.card);

    await page.getByRole('button', { name: 'Pay with 3-D Secure' }).click();
    await page.getByLabel('One-time passcode').waitFor();
    await expectPageHoldsUp(page, acquirer.pages.threeDs);
    await page.getByLabel('One-time passcode').fill(acquirer.passcode);
    await page.getByRole('button', { name: 'Confirm' }).click();
    await page.waitForURL(request.returnUrl);
    expect(await page.textContent('h1')).toBe('Back at the shop');
    expect(await connector.lookup(request)).toMatchObject({ status: 'succeeded' });
    await page.close();
  });

  it('the bank app page of an SBP link holds up and pays', async () => {
    const request = {
      chargeKey: 'pay_browser2:attempt-browser-0002',
      paymentId: 'pay_browser2',
      method: 'sbp' as const,
      amountKopecks: 150_000n,
      currency: 'RUB' as const,
      returnUrl: `${shopUrl}/pay/ord_browser2/return`,
      description: 'Browser shop: order 8',
    };
    const outcome = await connector.charge(request);
    if (outcome.status !== 'requires_action' || outcome.action.kind !== 'qr') throw new Error('qr expected');
    const page = await openPage();
    await page.goto(outcome.action.payload);
    await expectPageHoldsUp(page, acquirer.pages.bankApp);
    await page.getByRole('button', { name: 'Pay' }).click();
    // The result page's text, waited for (expect.poll would give it one second).
    await page.getByText(`Status: ${acquirer.bankAppPaidText}`).waitFor();
    expect(await connector.lookup(request)).toMatchObject({ status: 'succeeded' });
    await page.close();
  });
});

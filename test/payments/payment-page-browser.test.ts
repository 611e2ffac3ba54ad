// The payer's journey in headless Chromium against the gateway on a real port:
// open payment_url, choose a method, pay with a sandbox card, and the merchant's
// receiver on 127.0.0.1 gets a signed payment.paid from the real workers.
// Where no Chromium can be had the suites are skipped (the global set-up says
// why, loudly), or fail when PAYGATE_REQUIRE_BROWSER=1 (CI).
import { chromium, type Browser, type Page } from 'playwright-core';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Worker } from '../../src/context.ts';
import { createWorkers } from '../../src/modules.ts';
import { CHROMIUM_ARGS, browserForTests } from '../support/chromium.ts';
import { backends } from '../support/databases.ts';
import { createTestApp, type TestApp } from '../support/app.ts';
import { startReceiver, type Receiver } from '../webhooks/receiver.ts';
import { getJson, postPayment } from './payment-test-support.ts';
import { freePort } from '../support/free-port.ts';
import { expectPageHoldsUp } from '../support/page-checks.ts';

const chromiumExecutable = browserForTests();
const describeInBrowser = 'skip' in chromiumExecutable ? describe.skip : describe;

/** Asks until `probe` has a value; the test's timeout is the only bound. */
async function until<T>(probe: () => T | undefined): Promise<T> {
  for (;;) {
    const value = probe();
    if (value !== undefined) return value;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describeInBrowser.each(backends)('payment page in Chromium on %s', (backend) => {
  let testApp: TestApp;
  let receiver: Receiver;
  let browser: Browser;
  let workers: Worker[];
  let merchant: Awaited<ReturnType<TestApp['createMerchant']>>;

  beforeAll(async () => {
    if ('fail' in chromiumExecutable) throw new Error(chromiumExecutable.fail);
    const port = await freePort();
    testApp = await createTestApp(backend, { config: { publicUrl: `http://127.0.0.1:${port}` } });
    testApp.clock.set(new Date()); // signatures are checked against real time
    await testApp.app.listen({ port, host: '127.0.0.1' });
    receiver = await startReceiver();
    workers = createWorkers(testApp.modules);
    for (const worker of workers) worker.start();
    browser = await chromium.launch({
      executablePath: (chromiumExecutable as { path: string }).path,
      args: CHROMIUM_ARGS,
    });
    merchant = await testApp.createMerchant({ name: 'Browser Shop' });
  });
  afterAll(async () => {
    await browser?.close();
    await Promise.all((workers ?? []).map((worker) => worker.stop()));
    await receiver?.close();
    await testApp?.close();
  });

  async function newPayment(body: Record<string, unknown> = {}) {
    return (
      await postPayment(testApp, merchant.api_key, {
        amount: 1250,
        currency: 'RUB',
        callback_url: receiver.url,
        ...body,
      })
    ).json();
  }

  async function fillCard(page: Page, number: string): Promise<void> {
    await page.getByLabel(/Card number/).fill(number);
    await page.getByLabel(/Expiry/).fill('12/34');
    await page.getByLabel(/Security code/).fill('123');
  }

  /** A page whose waits have no deadline of their own: the test's timeout is the only bound. */
  async function openPage(options: Parameters<Browser['newPage']>[0]): Promise<Page> {
    const page = await browser.newPage(options);
    page.setDefaultTimeout(0);
    return page;
  }

  function eventsFor(paymentId: string) {
    return receiver.requests.filter((request) => request.body.includes(paymentId));
  }

  it('choose card, pay with the success card: the page says paid and the receiver gets a signed payment.paid', async () => {
    const payment = await newPayment();
    const page = await openPage({ locale: 'en-US', extraHTTPHeaders: { 'accept-language': 'en' } });
    await page.goto(payment.payment_url);
    expect(await page.textContent('body')).toContain('Browser Shop');
    await expectPageHoldsUp(page, 'payment-method-choice');
    await page.click('a[data-method="card"]');
    await expectPageHoldsUp(page, 'payment-card-form');
    await fillCard(page, '4242 4242 4242 4242');
    await page.click('#pay-button');
    await page.waitForSelector('[data-status="paid"]');
    await expectPageHoldsUp(page, 'payment-paid');
    const delivered = await until(() => eventsFor(payment.payment_id)[0]);
    const event = new Webhook(merchant.webhook_secret).verify(
      delivered.body,
      delivered.headers as Record<string, string>,
    ) as {
      type: string;
      data: { status: string; payment_id: string };
    };
    expect(event.type).toBe('payment.paid');
    expect(event.data).toMatchObject({ payment_id: payment.payment_id, status: 'paid' });
    await page.close();
  });

  it('the decline card shows the decline and leaves the payment payable', async () => {
    const payment = await newPayment({ method: 'card' });
    const page = await openPage({ extraHTTPHeaders: { 'accept-language': 'en' } });
    await page.goto(payment.payment_url);
    await fillCard(page, '4000 0000 0000 0002');
    await page.click('#pay-button');
    await page.waitForSelector('[data-status="declined"]');
    await expectPageHoldsUp(page, 'payment-declined');
    expect(await page.isVisible('#card-form')).toBe(true);
    expect((await getJson(testApp, merchant.api_key, `/v1/payments/${payment.payment_id}`)).json().status).toBe(
      'pending',
    );
    await page.close();
  });

  it('the same card form submitted twice at once charges once and sends one payment.paid', async () => {
    const payment = await newPayment({ method: 'card' });
    const page = await openPage({ extraHTTPHeaders: { 'accept-language': 'ru' } });
    await page.goto(payment.payment_url);
    await page.getByLabel(/Номер карты/).fill('4242424242424242');
    await page.getByLabel(/Срок/).fill('12/34');
    await page.getByLabel(/CVC/).fill('123');
    // Chrome coalesces two submits of one form into one navigation (and the page's CSP
    // forbids fetch), so the same filled form is sent twice at once with the browser's
    // cookies through the browser context, the way a double click reaches servers.
    const form = (await page.evaluate(
      "Object.fromEntries(new FormData(document.getElementById('card-form')))",
    )) as Record<string, string>;
    const action = new URL(`/pay/${payment.order_code}/card`, payment.payment_url).toString();
    const answers = await Promise.all([1, 2].map(() => page.context().request.post(action, { form, maxRedirects: 0 })));
    expect(answers.map((answer) => answer.status())).toEqual([303, 303]);
    await page.reload();
    await page.waitForSelector('[data-status="paid"]');
    await until(() => eventsFor(payment.payment_id)[0]);
    const charges = await testApp.context.db
      .selectFrom('sandbox_acquirer_charges')
      .selectAll()
      .where('payment_id', '=', payment.payment_id)
      .execute();
    expect(charges.filter((charge) => charge.status === 'succeeded')).toHaveLength(1);
    const outbox = await testApp.context.db
      .selectFrom('webhook_events')
      .select('type')
      .where('payload', 'like', `%${payment.payment_id}%`)
      .execute();
    expect(outbox.map((event) => event.type)).toEqual(['payment.paid']);
    expect(eventsFor(payment.payment_id)).toHaveLength(1);
    await page.close();
  });
});

// The fiat tables in Chromium: the payments table and a payment's page, the
// balance operations and the webhook events tables, and an event's page, each
// checked by axe-core at phone and desktop widths; and the XSS probes as a
// payment's order_id render as text on the payments table, the payment's page and
// the pages its webhook event and ledger entry show on.
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { backends } from '../support/databases.ts';
import { expectPageHoldsUp } from '../support/page-checks.ts';
import { injectedElements, XSS_PROBES } from '../support/xss-probes.ts';
import { postHelper, postPayment } from '../payments/payment-test-support.ts';
import { createOwner, type CabinetPerson } from './cabinet-client.ts';
import {
  describeInBrowser,
  signInInBrowser,
  startCabinetInBrowser,
  type CabinetInBrowser,
} from './cabinet-browser-support.ts';
import { DECLINE_CARD, payOnPage, SUCCESS_CARD } from './fiat-tables-support.ts';

const HOOK = 'https://merchant.example/hooks';

describeInBrowser.each(backends)('cabinet fiat tables in Chromium on %s', (backend) => {
  let cabinet: CabinetInBrowser;
  beforeAll(async () => {
    cabinet = await startCabinetInBrowser(backend);
  });
  afterAll(() => cabinet?.close());

  async function paidPayment(owner: CabinetPerson, orderId: string) {
    const created = await postPayment(cabinet.testApp, owner.apiKey, {
      amount: 1234.5,
      currency: 'RUB',
      method: 'card',
      order_id: orderId,
      callback_url: HOOK,
    });
    expect(created.statusCode, created.body).toBe(201);
    const payment = created.json() as { payment_id: string; order_code: string };
    await payOnPage(cabinet.testApp, payment.order_code, [DECLINE_CARD, SUCCESS_CARD]);
    return payment;
  }

  it('the payments table, a payment, the operations, the webhook events and an event page hold up', async () => {
    const owner = await createOwner(cabinet.testApp);
    const payment = await paidPayment(owner, 'ORD-1001');
    const failed = await postPayment(cabinet.testApp, owner.apiKey, {
      amount: 99,
      currency: 'RUB',
      order_id: 'ORD-1002',
    });
    expect((await postHelper(cabinet.testApp, owner.apiKey, failed.json().payment_id, 'fail')).statusCode).toBe(200);
    const shop = `/cabinet/shops/${owner.shopId}`;
    const page = await cabinet.newPage();
    await signInInBrowser(page, owner.email);

    await page.goto(`${shop}/payments`);
    expect(await page.locator('table.listing-table tbody tr').count()).toBe(2);
    await expectPageHoldsUp(page, 'cabinet-payments');
    await page.locator('select[name="status"]').selectOption('paid');
    await page.locator('form.listing-filters button[type="submit"]').click();
    await page.waitForURL(/status=paid/);
    expect(await page.locator('table.listing-table tbody tr').count()).toBe(1);
    await page.locator(`a[href="${shop}/payments/${payment.payment_id}"]`).click();
    await page.waitForURL(new RegExp(`/payments/${payment.payment_id}$`));
    expect(await page.locator('#payment-order-id').textContent()).toBe('ORD-1001');
    expect(await page.locator('[data-attempt-status]').count()).toBe(2);
    await expectPageHoldsUp(page, 'cabinet-payment');

    await page.locator('a[href*="/webhooks/events/evt_"]').first().click();
    await page.waitForURL(/\/webhooks\/events\/evt_/);
    await expectPageHoldsUp(page, 'cabinet-webhook-event-about');
    await page.locator(`#event-subjects a[href="${shop}/payments/${payment.payment_id}"]`).waitFor();

    await page.goto(`${shop}/webhooks/events`);
    expect(await page.locator('table.listing-table tbody tr').count()).toBe(1);
    await expectPageHoldsUp(page, 'cabinet-webhook-events');

    await page.goto(`${shop}/operations`);
    await page.locator(`table.listing-table a[href="${shop}/payments/${payment.payment_id}"]`).waitFor();
    await expectPageHoldsUp(page, 'cabinet-operations');
  });

  async function visit(page: Page, dialogs: string[], path: string) {
    const before = dialogs.length;
    const response = await page.goto(path);
    return {
      status: response?.status() ?? 0,
      dialogs: dialogs.slice(before),
      injected: await injectedElements(page),
      text: await page.locator('body').innerText(),
    };
  }

  it.each(XSS_PROBES)('a payment whose order_id is %j shows it as text on the table and its pages', async (probe) => {
    const owner = await createOwner(cabinet.testApp);
    const payment = await paidPayment(owner, probe);
    const shop = `/cabinet/shops/${owner.shopId}`;
    const page = await cabinet.newPage();
    const dialogs: string[] = [];
    page.on('dialog', (dialog) => {
      dialogs.push(dialog.message());
      void dialog.dismiss();
    });
    await signInInBrowser(page, owner.email);
    const shown = [
      `${shop}/payments`,
      `${shop}/payments?q=${encodeURIComponent(probe)}`,
      `${shop}/payments/${payment.payment_id}`,
    ];
    for (const path of shown) {
      const visited = await visit(page, dialogs, path);
      expect(visited.status, path).toBe(200);
      expect(visited.dialogs, path).toEqual([]);
      expect(visited.injected, path).toEqual([]);
      expect(visited.text, path).toContain(probe);
    }
    expect(await page.locator('#payment-order-id').textContent()).toBe(probe);
    for (const path of [
      `${shop}/operations`,
      `${shop}/webhooks/events`,
      `${shop}/webhooks/events?q=${encodeURIComponent(probe)}`,
    ]) {
      const visited = await visit(page, dialogs, path);
      expect(visited.dialogs, path).toEqual([]);
      expect(visited.injected, path).toEqual([]);
    }
    expect(dialogs).toEqual([]);
  });
});

// In Chromium: the shop overview with a paid payment holds up (axe-core, no
// sideways overflow at 390 and 1280 px); its charts are SVG images with a name,
// each followed by its table of the same days; a range chosen in the form is shown.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { backends } from '../support/databases.ts';
import { expectPageHoldsUp } from '../support/page-checks.ts';
import { postHelper, postPayment } from '../payments/payment-test-support.ts';
import { createOwner } from './cabinet-client.ts';
import {
  describeInBrowser,
  signInInBrowser,
  startCabinetInBrowser,
  type CabinetInBrowser,
} from './cabinet-browser-support.ts';

const CHARTS = ['payments', 'deposits', 'payouts', 'balance-rub', 'balance-usdt'];

describeInBrowser.each(backends)('cabinet overview in Chromium on %s', (backend) => {
  let cabinet: CabinetInBrowser;
  beforeAll(async () => {
    cabinet = await startCabinetInBrowser(backend);
  });
  afterAll(() => cabinet?.close());

  it('the overview holds up; each chart is a named SVG image with its table; a chosen range is shown', async () => {
    const owner = await createOwner(cabinet.testApp);
    const created = await postPayment(cabinet.testApp, owner.apiKey, { amount: 1234.56, currency: 'RUB' });
    expect(created.statusCode).toBe(201);
    expect((await postHelper(cabinet.testApp, owner.apiKey, created.json().payment_id, 'pay')).statusCode).toBe(200);

    const page = await cabinet.newPage();
    await signInInBrowser(page, owner.email);
    await page.goto(`/cabinet/shops/${owner.shopId}`);
    await page.locator(`a[href="/cabinet/shops/${owner.shopId}/overview"]`).first().click();
    await page.waitForURL(/\/overview$/);
    await expectPageHoldsUp(page, 'cabinet-overview');
    for (const id of CHARTS) {
      const section = page.locator(`section#${id}`);
      const chart = section.locator('svg[role="img"]');
      expect(await chart.count(), id).toBe(1);
      expect(await chart.getAttribute('aria-label'), id).toBeTruthy();
      expect(await section.locator('table caption').count(), id).toBe(1);
      expect(await section.locator('tbody tr').count(), id).toBe(30);
    }
    expect(await page.locator('section#payments svg rect').count()).toBe(1);
    expect(await page.locator('[data-currency="RUB"] [data-field="available"]').textContent()).toBe('1234.56 RUB');

    await page.locator('section#payments summary').click();
    await expectPageHoldsUp(page, 'cabinet-overview-table-open');

    const today = cabinet.testApp.clock.now().toISOString().slice(0, 10);
    const weekAgo = new Date(Date.parse(`${today}T00:00:00Z`) - 6 * 86_400_000).toISOString().slice(0, 10);
    await page.locator('#range-from').fill(weekAgo);
    await page.locator('#range-to').fill(today);
    await page.getByRole('button', { name: /Show|Показать/ }).click();
    await page.waitForURL(/from=/);
    expect(await page.locator('section#deposits tbody tr').count()).toBe(7);
  });
});

// In Chromium: a method switched off on the cabinet's methods page is no longer
// offered on the hosted payment page; the methods, crypto and sandbox pages each
// hold up (axe-core, no sideways overflow at 390 and 1280 px).
import { afterAll, beforeAll, expect, it } from 'vitest';
import { backends } from '../support/databases.ts';
import { expectPageHoldsUp } from '../support/page-checks.ts';
import { postPayment } from '../payments/payment-test-support.ts';
import { createOwner } from './cabinet-client.ts';
import {
  describeInBrowser,
  signInInBrowser,
  startCabinetInBrowser,
  type CabinetInBrowser,
} from './cabinet-browser-support.ts';

describeInBrowser.each(backends)('cabinet methods in Chromium on %s', (backend) => {
  let cabinet: CabinetInBrowser;
  beforeAll(async () => {
    cabinet = await startCabinetInBrowser(backend);
  });
  afterAll(() => cabinet?.close());

  it('SBP switched off in the cabinet is gone from the payment page; the shop pages hold up', async () => {
    const owner = await createOwner(cabinet.testApp);
    const created = await postPayment(cabinet.testApp, owner.apiKey, { amount: 100, currency: 'RUB' });
    expect(created.statusCode).toBe(201);
    const payPage = await cabinet.newPage();
    await payPage.goto(`/pay/${created.json().order_code}`);
    expect(await payPage.locator('[data-method="sbp"]').count()).toBe(1);

    const page = await cabinet.newPage();
    await signInInBrowser(page, owner.email);
    await page.goto(`/cabinet/shops/${owner.shopId}/methods`);
    await expectPageHoldsUp(page, 'cabinet-methods');
    const sbp = page.locator(`form[action$="/methods/sbp"]`);
    await sbp.getByRole('checkbox').uncheck();
    await sbp.getByRole('button').click();
    await page.waitForURL(/\/methods\?saved=sbp$/);
    expect(await page.locator('.notice.ok').count()).toBe(1);
    expect(await sbp.getByRole('checkbox').isChecked()).toBe(false);

    await payPage.reload();
    expect(await payPage.locator('[data-method="sbp"]').count()).toBe(0);
    expect(await payPage.locator('[data-method="card"]').count()).toBe(1);

    await page.goto(`/cabinet/shops/${owner.shopId}/crypto`);
    expect(await page.locator('h1').count()).toBe(1);
    await expectPageHoldsUp(page, 'cabinet-crypto');
    await page.goto(`/cabinet/shops/${owner.shopId}/sandbox`);
    await expectPageHoldsUp(page, 'cabinet-sandbox');
  });
});

// The transfers page in Chromium: finance enrols a second factor, moves money
// from main to payout, and the page holds up at phone and desktop widths.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { paidPayment } from '../payments/payment-test-support.ts';
import { backends } from '../support/databases.ts';
import { expectPageHoldsUp } from '../support/page-checks.ts';
import {
  describeInBrowser,
  signInInBrowser,
  startCabinetInBrowser,
  type CabinetInBrowser,
} from './cabinet-browser-support.ts';
import { addMember, createOwner } from './cabinet-client.ts';
import { totpCode } from './two-factor-support.ts';

describeInBrowser.each(backends)('cabinet transfers in Chromium on %s', (backend) => {
  let cabinet: CabinetInBrowser;
  beforeAll(async () => {
    cabinet = await startCabinetInBrowser(backend);
  });
  afterAll(() => cabinet?.close());

  it('finance enrols, moves 25 RUB to the payout account, and the page holds up', async () => {
    const owner = await createOwner(cabinet.testApp);
    await paidPayment(cabinet.testApp, owner.apiKey, 30);
    const finance = await addMember(cabinet.testApp, owner, 'finance');
    const page = await cabinet.newPage();
    await signInInBrowser(page, finance.email);
    await page.goto('/cabinet/account/two-factor');
    const secret = (await page.locator('#totp-secret').textContent())!.replace(/\s/g, '');
    await page.getByLabel(/Code from the app|Код из приложения/).fill(totpCode(secret, cabinet.testApp.clock.now()));
    await page.getByRole('button', { name: /Turn on|Включить/ }).click();
    await page.waitForSelector('#recovery-codes');

    await page.goto(`/cabinet/shops/${owner.shopId}/transfers`);
    await expectPageHoldsUp(page, 'cabinet-transfers');
    await page.getByLabel(/From and to|Откуда и куда/).selectOption('RUB:main>payout');
    await page.getByLabel(/^Amount|^Сумма/).fill('25');
    await page.getByRole('button', { name: /^Transfer$|^Перевести$/ }).click();
    await page.waitForURL(/\/transfers\?done=1$/);
    expect(await page.locator('tr[data-account="RUB:payout"] td').first().textContent()).toBe('25.00');
    await expectPageHoldsUp(page, 'cabinet-transfers-done');
  });
});

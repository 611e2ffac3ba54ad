// Sign-in, the shops list and the account page in Chromium, in both languages,
// at phone and desktop widths, each checked by axe-core.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { backends } from '../support/databases.ts';
import { expectPageHoldsUp } from '../support/page-checks.ts';
import { createOwner } from './cabinet-client.ts';
import {
  describeInBrowser,
  signInInBrowser,
  startCabinetInBrowser,
  type CabinetInBrowser,
} from './cabinet-browser-support.ts';

describeInBrowser.each(backends)('cabinet sign-in in Chromium on %s', (backend) => {
  let cabinet: CabinetInBrowser;
  beforeAll(async () => {
    cabinet = await startCabinetInBrowser(backend);
  });
  afterAll(() => cabinet?.close());

  it('signs in, sees its shops, switches language, and each page holds up at 390 and 1280 px', async () => {
    const owner = await createOwner(cabinet.testApp);
    const page = await cabinet.newPage();
    await page.goto('/cabinet/sign-in');
    await expectPageHoldsUp(page, 'cabinet-sign-in');
    await signInInBrowser(page, owner.email);
    await page.waitForURL(/\/cabinet\/shops$/);
    expect(await page.getByRole('link', { name: /Cabinet shop/ }).count()).toBe(1);
    await expectPageHoldsUp(page, 'cabinet-shops');
    // Headless Chromium asks for English: the switch offers Russian, and the choice is remembered.
    await page.getByRole('link', { name: 'RU', exact: true }).click();
    await page.locator('html[lang="ru"]').waitFor({ state: 'attached' });
    await page.goto('/cabinet/account');
    expect(await page.locator('h1').textContent()).toBe('Мой профиль');
    await expectPageHoldsUp(page, 'cabinet-account');
    await page
      .getByRole('button', { name: /Sign out|Выйти/ })
      .first()
      .click();
    await page.waitForURL(/\/cabinet\/sign-in\?signed_out=1/);
  });
});

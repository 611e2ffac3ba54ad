// Two-factor in Chromium: enrolment with the QR code and the secret shown, the
// recovery codes shown once, then a sign-in that asks for the TOTP code; the
// step-up and password-reset pages too. Each page checked by axe-core at 390 and 1280 px.
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
import { totpCode } from './two-factor-support.ts';
import { operatorResetLink } from '../../src/cabinet/password-reset/password-reset-service.ts';

describeInBrowser.each(backends)('cabinet two-factor in Chromium on %s', (backend) => {
  let cabinet: CabinetInBrowser;
  beforeAll(async () => {
    cabinet = await startCabinetInBrowser(backend);
  });
  afterAll(() => cabinet?.close());

  it('enrols by the secret beside the QR code, shows ten recovery codes, and the next sign-in asks for the code', async () => {
    const owner = await createOwner(cabinet.testApp);
    const page = await cabinet.newPage();
    await signInInBrowser(page, owner.email);
    await page.goto('/cabinet/account/two-factor');
    await page.locator('img.totp-qr').waitFor();
    await expectPageHoldsUp(page, 'cabinet-two-factor-enrol');
    const secret = (await page.locator('#totp-secret').textContent())!.replace(/\s/g, '');
    await page.getByLabel(/Code from the app|Код из приложения/).fill(totpCode(secret, cabinet.testApp.clock.now()));
    await page.getByRole('button', { name: /Turn on|Включить/ }).click();
    await page.waitForSelector('#recovery-codes');
    expect(await page.locator('#recovery-codes li').count()).toBe(10);
    await expectPageHoldsUp(page, 'cabinet-two-factor-recovery-codes');
    await page.goto('/cabinet/account/two-factor');
    await expectPageHoldsUp(page, 'cabinet-two-factor-manage');
    await page.goto('/cabinet/step-up?back=%2Fcabinet%2Faccount');
    await expectPageHoldsUp(page, 'cabinet-step-up');
    await page
      .getByRole('button', { name: /Sign out|Выйти/ })
      .first()
      .click();
    await page.waitForURL(/\/cabinet\/sign-in\?signed_out=1/);

    // The next step's code: the enrolment's one is spent.
    cabinet.testApp.clock.advance(30_000);
    await signInInBrowser(page, owner.email);
    await page.waitForURL(/\/cabinet\/sign-in\/two-factor/);
    await expectPageHoldsUp(page, 'cabinet-sign-in-two-factor');
    await page
      .getByLabel(/Code or recovery code|Код или резервный код/)
      .fill(totpCode(secret, cabinet.testApp.clock.now()));
    await page.getByRole('button', { name: /Confirm|Подтвердить/ }).click();
    await page.waitForURL(/\/cabinet\/shops/);
    expect(await page.getByRole('link', { name: /Cabinet shop/ }).count()).toBe(1);
  });

  it('the password-reset pages hold up', async () => {
    const page = await cabinet.newPage();
    await page.goto('/cabinet/password-reset');
    await expectPageHoldsUp(page, 'cabinet-password-reset');
    const owner = await createOwner(cabinet.testApp);
    const link = await operatorResetLink(cabinet.testApp.context, owner.email);
    await page.goto(new URL(link).pathname);
    await page.locator('#repeat').waitFor();
    await expectPageHoldsUp(page, 'cabinet-password-reset-new-password');
    await page.goto(`/cabinet/password-reset/${'A'.repeat(43)}`);
    await expectPageHoldsUp(page, 'cabinet-password-reset-invalid-link');
  });
});

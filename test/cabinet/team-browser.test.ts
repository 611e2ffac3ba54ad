// The team journey in Chromium: an owner invites (no mailer: the link is shown
// once), the invited person opens it in another browser context, creates their
// account and lands in the team; the owner then changes their role. The team page
// and the invitation page are each checked by axe-core at 390 and 1280 px.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { backends } from '../support/databases.ts';
import { expectPageHoldsUp } from '../support/page-checks.ts';
import { uniqueName } from '../support/seeded-random.ts';
import { createOwner } from './cabinet-client.ts';
import {
  describeInBrowser,
  signInInBrowser,
  startCabinetInBrowser,
  type CabinetInBrowser,
} from './cabinet-browser-support.ts';

describeInBrowser.each(backends)('cabinet team in Chromium on %s', (backend) => {
  let cabinet: CabinetInBrowser;
  beforeAll(async () => {
    cabinet = await startCabinetInBrowser(backend);
  });
  afterAll(() => cabinet?.close());

  it('an owner invites, the invited person accepts in another browser, and the owner changes their role', async () => {
    const owner = await createOwner(cabinet.testApp);
    const page = await cabinet.newPage();
    await signInInBrowser(page, owner.email);
    await page.goto('/cabinet/team');
    await expectPageHoldsUp(page, 'cabinet-team');

    const email = `invitee-${uniqueName('browser')}@example.test`;
    await page.getByLabel(/^(Email|Эл. почта)$/).fill(email);
    await page.locator('#invite-role').selectOption('developer');
    await page.getByRole('button', { name: /^(Invite|Пригласить)$/ }).click();
    const link = (await page.locator('#invite-link').textContent())?.trim() ?? '';
    expect(link).toMatch(/\/cabinet\/invites\/[A-Za-z0-9_-]{43}$/);
    await expectPageHoldsUp(page, 'cabinet-team-invite-link');

    const invitee = await cabinet.newPage();
    await invitee.goto(link);
    expect(await invitee.locator('main').textContent()).toContain(owner.email.replace(/^owner-(.*)@.*$/, '$1'));
    await expectPageHoldsUp(invitee, 'cabinet-invite');
    await invitee.getByLabel(/^(Name|Имя)$/).fill('Browser Person');
    await invitee.getByLabel(/Password|Пароль/).fill('a long new password');
    await invitee.getByRole('button', { name: /Accept the invitation|Принять приглашение/ }).click();
    await invitee.waitForURL(/\/cabinet\/team\?done=joined/);
    expect(await invitee.getByRole('status').textContent()).toMatch(/You have joined the team|Вы в команде/);

    await page.goto('/cabinet/team');
    await page
      .getByLabel(new RegExp(`(Role of|Роль участника) ${email.replace(/[.+]/g, '\\$&')}`))
      .selectOption('finance');
    await page
      .getByRole('row', { name: new RegExp(email.replace(/[.+]/g, '\\$&')) })
      .getByRole('button', { name: /Change role|Сменить роль/ })
      .click();
    await page.waitForURL(/\/cabinet\/team\?done=role_changed/);
    const row = page.getByRole('row', { name: new RegExp(email.replace(/[.+]/g, '\\$&')) });
    expect(await row.locator('.badge').textContent()).toMatch(/Finance|Финансы/);
    await invitee.close();
  });
});

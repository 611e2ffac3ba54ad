// The audit page in Chromium: an owner's sign-ins listed, the GET form filtering
// them, and the page holding up (axe-core, no sideways overflow) at 390 and 1280 px.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { recordAudit } from '../../src/audit/audit-service.ts';
import { backends } from '../support/databases.ts';
import { expectPageHoldsUp } from '../support/page-checks.ts';
import { createOwner } from './cabinet-client.ts';
import {
  describeInBrowser,
  signInInBrowser,
  startCabinetInBrowser,
  type CabinetInBrowser,
} from './cabinet-browser-support.ts';

describeInBrowser.each(backends)('the audit page in Chromium on %s', (backend) => {
  let cabinet: CabinetInBrowser;
  beforeAll(async () => {
    cabinet = await startCabinetInBrowser(backend);
  });
  afterAll(() => cabinet?.close());

  it('lists the owner’s sign-ins, filters them by action, and holds up at 390 and 1280 px', async () => {
    const owner = await createOwner(cabinet.testApp);
    const { db } = cabinet.testApp.context;
    await recordAudit(db, cabinet.testApp.clock, {
      actor: { kind: 'operator', label: 'cli:root' },
      action: 'withdrawal.requested',
      merchantId: owner.merchantId,
      shopId: owner.shopId,
      target: 'wd_browser',
      details: { amount: '12.5', address: 'TXYZ' },
    });
    const page = await cabinet.newPage();
    await signInInBrowser(page, owner.email);
    await page.goto('/cabinet/audit');
    expect(await page.locator('h1').textContent()).toMatch(/Audit log|Журнал действий/);
    expect(await page.getByRole('cell', { name: 'user.signed_in' }).count()).toBe(1);
    expect(await page.getByRole('cell', { name: 'wd_browser' }).count()).toBe(1);
    await expectPageHoldsUp(page, 'cabinet-audit');

    await page.getByLabel(/^(Action|Действие)$/).fill('user.');
    await page.getByRole('button', { name: /Apply|Показать/ }).click();
    await page.waitForURL(/action=user\./);
    expect(await page.getByRole('cell', { name: 'user.signed_in' }).count()).toBe(1);
    expect(await page.getByRole('cell', { name: 'wd_browser' }).count()).toBe(0);
    expect(await page.getByRole('link', { name: /Download CSV|Скачать CSV/ }).getAttribute('href')).toBe(
      '/cabinet/audit.csv?action=user.',
    );
    await expectPageHoldsUp(page, 'cabinet-audit-filtered');
  });
});

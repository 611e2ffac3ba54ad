// The accounting export's page in Chromium: it holds up (axe-core, no sideways
// overflow) at 390 and 1280 px, the shop's page links to it, and its XLSX button
// downloads a workbook that opens, without a script.
import { readFile } from 'node:fs/promises';
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
import { readXlsx } from './download-support.ts';

describeInBrowser.each(backends)('the accounting export page in Chromium on %s', (backend) => {
  let cabinet: CabinetInBrowser;
  beforeAll(async () => {
    cabinet = await startCabinetInBrowser(backend);
  });
  afterAll(() => cabinet?.close());

  it('is linked from the shop, holds up, and its XLSX button downloads a workbook that opens', async () => {
    const owner = await createOwner(cabinet.testApp);
    const page = await cabinet.newPage();
    await signInInBrowser(page, owner.email);
    await page.goto(`/cabinet/shops/${owner.shopId}`);
    await page.getByRole('link', { name: /Accounting export|Выгрузка для бухгалтерии/ }).click();
    await page.waitForURL(/\/accounting$/);
    expect(await page.locator('h1').textContent()).toMatch(/Accounting export|Выгрузка для бухгалтерии/);
    expect(await page.getByRole('rowheader', { name: /balance_after/ }).count()).toBe(1);
    await expectPageHoldsUp(page, 'cabinet-accounting');

    await page.getByLabel(/^(From|С) \(UTC/).fill('2026-11-01');
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: /Download XLSX|Скачать XLSX/ }).click(),
    ]);
    expect(download.suggestedFilename()).toMatch(
      new RegExp(`^accounting-${owner.shopId}-\\d{4}-\\d{2}-\\d{2}\\.xlsx$`),
    );
    const rows = await readXlsx(await readFile((await download.path())!));
    expect(rows[0]).toContain('entry_id');
  });
});

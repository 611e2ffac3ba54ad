// A shop's overview and API keys in Chromium: a key made through the form shows
// its secret once with a copy button, works on the API, and is refused (401) as
// soon as it is revoked from the list. A fresh sign-in counts as stepped up.
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

describeInBrowser.each(backends)('cabinet keys in Chromium on %s', (backend) => {
  let cabinet: CabinetInBrowser;
  beforeAll(async () => {
    cabinet = await startCabinetInBrowser(backend);
  });
  afterAll(() => cabinet?.close());

  const account = (apiKey: string) =>
    cabinet.testApp.app.inject({ method: 'GET', url: '/v1/account', headers: { authorization: `Bearer ${apiKey}` } });

  it('creates a key (shown once, with a copy button), uses it, revokes it, and the API then refuses it', async () => {
    const owner = await createOwner(cabinet.testApp);
    const page = await cabinet.newPage();
    await signInInBrowser(page, owner.email);
    await page.goto(`/cabinet/shops/${owner.shopId}`);
    await expectPageHoldsUp(page, 'cabinet-shop-overview');
    await page.getByRole('link', { name: /API keys|Ключи API/ }).click();
    await page.waitForURL(/\/keys$/);
    await expectPageHoldsUp(page, 'cabinet-shop-keys');

    await page.getByLabel(/^(Name|Название)$/).fill('Browser key');
    await page.locator('input[name="scopes"][value="read"]').check();
    await page.getByRole('button', { name: /Create key|Создать ключ/ }).click();
    const secret = page.locator('#new-api-key');
    await secret.waitFor();
    const apiKey = (await secret.textContent())!.trim();
    expect(apiKey).toMatch(/^sk_test_[A-Za-z0-9_-]{43}$/);
    // The script shows the copy button once it has loaded.
    await page.locator('button[data-copy="new-api-key"]').waitFor({ state: 'visible' });
    await expectPageHoldsUp(page, 'cabinet-key-created');
    expect((await account(apiKey)).statusCode).toBe(200);

    await page.getByRole('link', { name: /Back to the keys|К списку ключей/ }).click();
    await page.waitForURL(/\/keys$/);
    expect(await page.content()).not.toContain(apiKey);
    await page.getByRole('button', { name: /(Revoke|Отозвать) Browser key/ }).click();
    await page.waitForURL(/\/keys\?revoked=1$/);
    expect((await account(apiKey)).statusCode).toBe(401);
    expect((await account(owner.apiKey)).statusCode).toBe(200);
  });
});

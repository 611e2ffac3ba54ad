// Stored XSS in Chromium: merchants, shops and a user named with the shared probes
// (test/support/xss-probes.ts); every cabinet page a member can open without an id
// of its own — read from the route table, so pages merged later are covered — is
// opened, and no dialog fires, nothing the probes would make is in the DOM, and the
// names show as the literal text they are.
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { addMembership, createMerchantWithOwner } from '../../src/cabinet/users/user-service.ts';
import { backends } from '../support/databases.ts';
import { uniqueName } from '../support/seeded-random.ts';
import { injectedElements, XSS_PROBES } from '../support/xss-probes.ts';
import { TEST_PASSWORD } from './cabinet-client.ts';
import {
  describeInBrowser,
  signInInBrowser,
  startCabinetInBrowser,
  type CabinetInBrowser,
} from './cabinet-browser-support.ts';
import { cabinetRoutes, concretePath } from './cabinet-route-table.ts';

describeInBrowser.each(backends)('cabinet XSS probes in Chromium on %s', (backend) => {
  let cabinet: CabinetInBrowser;
  beforeAll(async () => {
    cabinet = await startCabinetInBrowser(backend);
  });
  afterAll(() => cabinet?.close());

  /** Opens `path` and returns the dialogs it fired and the elements the probes made. */
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

  it.each(XSS_PROBES)('merchant, shop and user named %j render as text on every cabinet page', async (probe) => {
    const { testApp } = cabinet;
    const email = `xss-${uniqueName('owner')}@example.test`;
    const created = await createMerchantWithOwner(testApp.context, {
      name: probe,
      shopName: probe,
      email,
      password: TEST_PASSWORD,
      mode: 'sandbox',
    });
    // A second merchant, also named with the probe, so the merchant switch lists names.
    const other = await createMerchantWithOwner(testApp.context, {
      name: `${probe} 2`,
      email: `xss-${uniqueName('other')}@example.test`,
      mode: 'sandbox',
    });
    await addMembership(testApp.context, testApp.context.db, {
      userId: created.owner_user_id!,
      merchantId: other.merchant_id,
      role: 'viewer',
    });
    const page = await cabinet.newPage();
    const dialogs: string[] = [];
    page.on('dialog', (dialog) => {
      dialogs.push(dialog.message());
      void dialog.dismiss();
    });
    await signInInBrowser(page, email);

    const shops = await visit(page, dialogs, '/cabinet/shops');
    expect(shops.text).toContain(probe);
    expect(await page.getByRole('link', { name: probe, exact: true }).getAttribute('href')).toBe(
      `/cabinet/shops/${created.shop_id}`,
    );
    expect(await page.locator('#merchant-switch option').allTextContents()).toEqual(
      expect.arrayContaining([expect.stringContaining(probe)]),
    );

    const paths = cabinetRoutes(testApp)
      .filter((route) => route.method === 'GET' && route.access !== 'public' && route.access !== 'second-factor')
      .filter((route) => route.url.split('/').every((segment) => !segment.startsWith(':') || segment === ':shopId'))
      // Downloads (CSV and XLSX) are no page to render; their own tests cover their cells.
      .filter((route) => !/\.(csv|xlsx)$/.test(route.url))
      .map((route) => concretePath(route, created.shop_id));
    expect(paths).toContain('/cabinet/shops');
    for (const path of paths) {
      const visited = await visit(page, dialogs, path);
      expect(visited.dialogs, path).toEqual([]);
      expect(visited.injected, path).toEqual([]);
    }
    expect(dialogs).toEqual([]);
  });
});

// The cabinet's tables of crypto receiving in Chromium: invoices, static wallets,
// deposits and refunds, each table and each object's page checked by axe-core at
// phone and desktop widths, the refund form's preview too; the merchant-typed
// fields (an invoice's and a refund's external_id, a wallet's client_id) carry
// the XSS probes and show as text on the tables and the pages.
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { createChainWatcher } from '../../src/crypto/receiving/chain-watcher.ts';
import { backends } from '../support/databases.ts';
import { expectPageHoldsUp } from '../support/page-checks.ts';
import { injectedElements, XSS_PROBES } from '../support/xss-probes.ts';
import { recipient } from '../crypto/payouts/payout-support.ts';
import { addMember, createOwner, type CabinetPerson } from './cabinet-client.ts';
import {
  describeInBrowser,
  signInWithSecondFactorInBrowser,
  startCabinetInBrowser,
  type CabinetInBrowser,
} from './cabinet-browser-support.ts';

/** Solidification is at head − 18: a deposit is final once 19 blocks include it and follow. */
const BLOCKS_TO_FINALITY = 19;
const WATCHER_PASSES_MAX = 10;

describeInBrowser.each(backends)('cabinet receiving tables in Chromium on %s', (backend) => {
  let cabinet: CabinetInBrowser;
  let owner: CabinetPerson;
  const made = { invoices: [] as string[], wallets: [] as string[], deposits: [] as string[], refunds: [] as string[] };

  async function call(method: 'GET' | 'POST', url: string, body?: unknown) {
    const response = await cabinet.testApp.app.inject({
      method,
      url,
      headers: {
        authorization: `Bearer ${owner.apiKey}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      payload: body === undefined ? undefined : JSON.stringify(body),
    });
    expect(response.statusCode, `${url}: ${response.body}`).toBeLessThan(300);
    return response.json();
  }

  beforeAll(async () => {
    cabinet = await startCabinetInBrowser(backend);
    const { testApp } = cabinet;
    owner = await createOwner(testApp);
    const access = await testApp.crypto.chain.forMode('sandbox');
    const watcher = createChainWatcher({
      db: testApp.context.db,
      clock: testApp.context.clock,
      logger: testApp.context.logger,
      access,
    });
    await call('POST', '/v1/test_helpers/crypto/faucet', { usdt: '1000', trx: '1000' });
    for (const probe of XSS_PROBES) {
      const invoice = await call('POST', '/v1/crypto/invoices', { external_id: probe, amount: '5', network: 'TRC20' });
      const wallet = await call('POST', '/v1/crypto/wallets', { client_id: probe, network: 'TRC20' });
      await call('POST', `/v1/crypto/wallets/${wallet.wallet_id}/block`);
      made.invoices.push(invoice.invoice_id);
      made.wallets.push(wallet.wallet_id);
      await call('POST', '/v1/test_helpers/crypto/deposits', { address: invoice.address, amount: '5' });
      await call('POST', '/v1/test_helpers/crypto/deposits', { address: wallet.address, amount: '6' });
    }
    await call('POST', '/v1/test_helpers/crypto/blocks', { count: BLOCKS_TO_FINALITY + 1 });
    for (let pass = 0; pass < WATCHER_PASSES_MAX; pass++) {
      const result = await watcher.runPass();
      if (result.blocksScanned === 0 && result.depositsSettled === 0) break;
    }
    const deposits = await testApp.context.db
      .selectFrom('crypto_deposits')
      .select(['id', 'status'])
      .where('shop_id', '=', owner.shopId)
      .where('status', '=', 'held')
      .orderBy('id')
      .execute();
    expect(deposits).toHaveLength(XSS_PROBES.length);
    for (const [index, probe] of XSS_PROBES.entries()) {
      const refund = await call('POST', '/v1/crypto/refunds', {
        external_id: probe,
        deposit_id: deposits[index]!.id,
        address: recipient(),
      });
      made.refunds.push(refund.refund_id);
      made.deposits.push(deposits[index]!.id);
    }
  });
  afterAll(() => cabinet?.close());

  async function open(page: Page, dialogs: string[], path: string, name: string) {
    const response = await page.goto(path);
    expect(response?.status(), path).toBe(200);
    await expectPageHoldsUp(page, name);
    expect(dialogs, path).toEqual([]);
    expect(await injectedElements(page), path).toEqual([]);
    return page.locator('main').innerText();
  }

  it('every table and object page holds up, and the probes in external_id and client_id show as text', async () => {
    const admin = await addMember(cabinet.testApp, owner, 'admin');
    const page = await cabinet.newPage();
    const dialogs: string[] = [];
    page.on('dialog', (dialog) => {
      dialogs.push(dialog.message());
      void dialog.dismiss();
    });
    await signInWithSecondFactorInBrowser(page, cabinet.testApp, admin.email);
    const base = `/cabinet/shops/${owner.shopId}`;
    for (const table of ['invoices', 'wallets', 'refunds'] as const) {
      const text = await open(page, dialogs, `${base}/${table}`, `cabinet-${table}`);
      for (const probe of XSS_PROBES) expect(text, table).toContain(probe);
    }
    await open(page, dialogs, `${base}/deposits`, 'cabinet-deposits');
    expect((await page.goto(`${base}/invoices?status=nope`))?.status()).toBe(400);
    await expectPageHoldsUp(page, 'cabinet-invoices-bad-filter');

    for (const [index, probe] of XSS_PROBES.entries()) {
      const name = index === 0 ? '' : `-${index}`;
      expect(await open(page, dialogs, `${base}/invoices/${made.invoices[index]}`, `cabinet-invoice${name}`)).toContain(
        probe,
      );
      expect(await open(page, dialogs, `${base}/wallets/${made.wallets[index]}`, `cabinet-wallet${name}`)).toContain(
        probe,
      );
      expect(await open(page, dialogs, `${base}/refunds/${made.refunds[index]}`, `cabinet-refund${name}`)).toContain(
        probe,
      );
      await open(page, dialogs, `${base}/deposits/${made.deposits[index]}`, `cabinet-deposit${name}`);
    }

    // The refund form of an invoice's credited deposit: the preview shows the fee before confirming.
    await page.goto(`${base}/invoices/${made.invoices[0]}`);
    await page.getByLabel('Recipient TRON address').fill(recipient());
    await page.getByRole('button', { name: 'Show the fee' }).click();
    await page.getByRole('button', { name: 'Confirm the refund' }).waitFor();
    await expectPageHoldsUp(page, 'cabinet-refund-preview');
    await page.getByRole('button', { name: 'Confirm the refund' }).click();
    await page.waitForURL(/\/refunds\/ref_[0-9a-z]+\?done=requested/);
    await expectPageHoldsUp(page, 'cabinet-refund-requested');
  });
});

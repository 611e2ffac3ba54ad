// The payouts area in Chromium: an admin of a sandbox shop with a funded balance
// asks for a payout through the form (amount, address, the fee preview, confirm),
// the sign-once executor sends it on the simulated chain and its page shows it
// completed; a CSV with a bad row shows that row and creates nothing, a good one
// creates its batch; every page of the area holds up (axe, 390 and 1280 px); an
// external_id written as an XSS probe is text on the table and the payout page.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { inTransaction } from '../../src/db/transaction.ts';
import { ensureAccounts, merchantAccountKey, systemAccountKey } from '../../src/ledger/ledger-accounts.ts';
import { transfer } from '../../src/ledger/ledger-service.ts';
import { createOutgoingExecutor, type OutgoingExecutor } from '../../src/crypto/sending/executor.ts';
import { tronAddressFromPrivateKey } from '../../src/crypto/tron/address.ts';
import { USDT_CONTRACT_MAINNET } from '../../src/crypto/tron/trc20-usdt.ts';
import { outgoingOutcomeHandlers } from '../../src/modules.ts';
import { backends } from '../support/databases.ts';
import { expectPageHoldsUp } from '../support/page-checks.ts';
import { uniqueName } from '../support/seeded-random.ts';
import { injectedElements, XSS_PROBES } from '../support/xss-probes.ts';
import {
  describeInBrowser,
  signInWithSecondFactorInBrowser,
  startCabinetInBrowser,
  type CabinetInBrowser,
} from './cabinet-browser-support.ts';
import { addMember, createOwner, type CabinetPerson } from './cabinet-client.ts';

/** Solidified at head − 18: a transaction is final once 19 blocks include it and follow. */
const BLOCKS_TO_FINALITY = 19;

const recipient = () => tronAddressFromPrivateKey(randomBytes(32));

describeInBrowser.each(backends)('cabinet payouts in Chromium on %s', (backend) => {
  let cabinet: CabinetInBrowser;
  let executor: OutgoingExecutor;
  let owner: CabinetPerson;
  let page: Page;
  const dialogs: string[] = [];

  beforeAll(async () => {
    cabinet = await startCabinetInBrowser(backend);
    const { testApp } = cabinet;
    const { context } = testApp;
    owner = await createOwner(testApp);
    // The balance a final deposit would credit: hot wallet → the merchant's USDT main account.
    await inTransaction(context.db, async (tx) => {
      const [main, hotWallet] = await ensureAccounts(tx, testApp.clock, [
        merchantAccountKey('sandbox', owner.merchantId, 'USDT', 'main'),
        systemAccountKey('sandbox', 'hot_wallet', 'USDT', 0),
      ]);
      await transfer(tx, testApp.clock, {
        id: `test-funding:${owner.shopId}`,
        debitAccountId: hotWallet!.id,
        creditAccountId: main!.id,
        amount: 1_000_000_000n,
        type: 'deposit',
        reference: { type: 'deposit', id: `test-${owner.shopId}` },
      });
    });
    await api('/v1/test_helpers/crypto/faucet', { usdt: '100000', trx: '100000' });
    const access = await testApp.crypto.chain.forMode('sandbox');
    executor = await createOutgoingExecutor({
      db: context.db,
      clock: context.clock,
      logger: context.logger,
      chain: access.chain,
      node: access.node,
      transferEnergy: access.transferEnergy,
      signingKey: () => access.signingKey(),
      hotWallet: access.addressKey.hotWalletAddress,
      declareTransferOwners: access.declareTransferOwners,
      usdtContract: USDT_CONTRACT_MAINNET,
      handlers: outgoingOutcomeHandlers(),
      trxUsdtRateMicro: context.config.trxUsdtRateMicro,
      maxInFlight: 1_000,
      maxAttempts: 3,
      fundsWaitSeconds: 600,
    });
    const admin = await addMember(testApp, owner, 'admin');
    page = await cabinet.newPage();
    page.on('dialog', (dialog) => {
      dialogs.push(dialog.message());
      void dialog.dismiss();
    });
    await signInWithSecondFactorInBrowser(page, testApp, admin.email);
    await page.goto('/cabinet/language/en?back=%2Fcabinet%2Fshops');
  });
  afterAll(async () => {
    await executor?.release();
    await cabinet?.close();
  });

  async function api(path: string, body?: unknown, method: 'GET' | 'POST' = 'POST') {
    const response = await cabinet.testApp.app.inject({
      method,
      url: path,
      headers: { authorization: `Bearer ${owner.apiKey}` },
      ...(body === undefined ? {} : { payload: body as Record<string, unknown> }),
    });
    expect(response.statusCode, `${path}: ${response.body}`).toBeLessThan(300);
    return response.json();
  }

  const base = () => `/cabinet/shops/${owner.shopId}/payouts`;

  it('a payout asked for on the form is quoted, created and, sent on the simulated chain, shown completed', async () => {
    await page.goto(`/cabinet/shops/${owner.shopId}`);
    await page.getByRole('link', { name: 'New payout' }).click();
    await page.waitForURL(/\/payouts\/new$/);
    await expectPageHoldsUp(page, 'payout form');
    const address = recipient();
    await page.getByLabel(/^Amount, USDT/).fill('15.00');
    await page.getByLabel(/^Recipient address/).fill(address);
    await page.getByRole('button', { name: 'Show the fees' }).click();
    await page.waitForURL(/\/payouts\/new\/preview$/);
    const totalDebit = await page.locator('[data-quote="total_debit"]').innerText();
    expect(totalDebit).toMatch(/^\d+(\.\d+)?$/);
    await expectPageHoldsUp(page, 'payout preview');
    await page.getByRole('button', { name: 'Confirm the payout' }).click();
    await page.waitForURL(/\/payouts\/po_[0-9a-z]+\?done=created$/);
    const payoutId = /payouts\/(po_[0-9a-z]+)/.exec(page.url())![1]!;
    expect(await page.locator('.badge.pending').count()).toBe(1);

    await executor.runPass();
    await api('/v1/test_helpers/crypto/blocks', { count: 1 });
    await api('/v1/test_helpers/crypto/blocks', { count: BLOCKS_TO_FINALITY });
    await executor.runPass();
    const payout = await api(`/v1/crypto/payouts/${payoutId}`, undefined, 'GET');
    expect(payout).toMatchObject({ status: 'completed', recipient_amount: '15', recipient_address: address });
    expect(payout.total_debit).toBe(totalDebit);

    await page.goto(`${base()}/${payoutId}`);
    const text = await page.locator('main').innerText();
    for (const shown of ['completed', 'Transaction broadcast (processing)', 'Ledger transfer:', payout.tx_hash])
      expect(text).toContain(shown);
    await expectPageHoldsUp(page, 'payout page');
    await page.goto(base());
    expect(await page.locator('main').innerText()).toContain(payoutId);
    await expectPageHoldsUp(page, 'payouts table');
  });

  it('a CSV with a bad row shows that row and creates nothing; a good one creates its batch', async () => {
    await page.goto(`${base()}/batches/upload`);
    await expectPageHoldsUp(page, 'batch upload');
    const good = [1, 2].map((n) => `${uniqueName('row')},${n}.50,${recipient()}`);
    const bad = ['external_id,amount,address', good[0], `${uniqueName('row')},0,${recipient()}`].join('\n');
    await page
      .getByLabel('CSV file')
      .setInputFiles({ name: 'bad.csv', mimeType: 'text/csv', buffer: Buffer.from(bad) });
    await page.getByRole('button', { name: 'Check the file' }).click();
    await page.waitForURL(/\/batches\/upload$/);
    const problems = page.locator('table.batch-problems tbody tr');
    expect(await problems.count()).toBe(1);
    expect(await problems.first().innerText()).toMatch(/^3\s+amount\s+amount must be greater than 0\./);
    await expectPageHoldsUp(page, 'batch upload refused');
    expect((await api('/v1/crypto/payouts?limit=100', undefined, 'GET')).data).toHaveLength(1);

    await page.getByLabel('CSV file').setInputFiles({
      name: 'good.csv',
      mimeType: 'text/csv',
      buffer: Buffer.from(['external_id,amount,address', ...good].join('\n')),
    });
    await page.getByRole('button', { name: 'Check the file' }).click();
    await page.waitForSelector('[data-preview="items"]');
    expect(await page.locator('[data-preview="items"]').innerText()).toBe('2');
    await expectPageHoldsUp(page, 'batch preview');
    await page.getByRole('button', { name: 'Create the batch' }).click();
    await page.waitForURL(/\/batches\/pob_[0-9a-z]+\?done=created$/);
    const batchId = /batches\/(pob_[0-9a-z]+)/.exec(page.url())![1]!;
    const batch = await api(`/v1/crypto/payouts/batch/${batchId}`, undefined, 'GET');
    expect(batch.payouts.map((p: { external_id: string }) => p.external_id)).toEqual(
      good.map((row) => row.split(',')[0]),
    );
    await expectPageHoldsUp(page, 'batch page');
    await page.goto(`${base()}/batches`);
    expect(await page.locator('main').innerText()).toContain(batchId);
    await expectPageHoldsUp(page, 'batches table');
  });

  it.each(XSS_PROBES)('an external_id written as %j is text on the table and the payout page', async (probe) => {
    const created = await api('/v1/crypto/payouts', {
      external_id: probe,
      network: 'TRC20',
      amount: '1',
      address: recipient(),
    });
    for (const path of [`${base()}?q=${encodeURIComponent(probe)}`, `${base()}/${created.payout_id}`]) {
      const before = dialogs.length;
      await page.goto(path);
      expect(await page.locator('main').innerText(), path).toContain(probe);
      expect(await injectedElements(page), path).toEqual([]);
      expect(dialogs.slice(before), path).toEqual([]);
    }
  });
});

// A withdrawal in Chromium from request to the chain: member A (finance) adds an
// address (with a TOTP code) and, past its cool-down, requests a withdrawal with a
// preview of the fee and confirms it with a TOTP code; member B (owner) approves it
// with a TOTP code; the sandbox chain mines until it is completed, and
// cabinet.withdrawal.completed reaches a real receiver and verifies
// (standardwebhooks). Every page checked by axe-core at 390 and 1280 px.
import { chromium, type Browser, type Page } from 'playwright-core';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createMerchantWithOwner } from '../../src/cabinet/users/user-service.ts';
import { setEndpoint } from '../../src/webhooks/webhook-service.ts';
import { createDeliveryWorker } from '../../src/webhooks/delivery-worker.ts';
import { CHROMIUM_ARGS, browserForTests } from '../support/chromium.ts';
import { backends } from '../support/databases.ts';
import { freePort } from '../support/free-port.ts';
import { expectPageHoldsUp } from '../support/page-checks.ts';
import { uniqueName } from '../support/seeded-random.ts';
import { recipient } from '../crypto/payouts/payout-support.ts';
import { createChainTestApp, type ChainTestApp } from '../crypto/refunds/refund-support.ts';
import { startReceiver, type Receiver } from '../webhooks/receiver.ts';
import { addMember, CabinetClient, TEST_PASSWORD } from './cabinet-client.ts';
import { describeInBrowser } from './cabinet-browser-support.ts';
import { enrol, totpCode } from './two-factor-support.ts';

const COOLDOWN_MS = 10 * 60_000;

describeInBrowser.each(backends)('cabinet withdrawals in Chromium on %s', (backend) => {
  let testApp: ChainTestApp;
  let browser: Browser;
  let receiver: Receiver;

  beforeAll(async () => {
    const port = await freePort();
    testApp = await createChainTestApp(backend, {
      config: { publicUrl: `http://127.0.0.1:${port}`, withdrawalAddressCooldownMs: COOLDOWN_MS },
    });
    // The journey moves the clock past the cool-down; webhook signatures are checked against real
    // time (5 minutes' tolerance), so it starts a quarter of an hour back.
    testApp.clock.set(new Date(Date.now() - 15 * 60_000));
    await testApp.app.listen({ port, host: '127.0.0.1' });
    const executable = browserForTests() as { path: string };
    browser = await chromium.launch({ executablePath: executable.path, args: CHROMIUM_ARGS });
    receiver = await startReceiver();
  });
  afterAll(async () => {
    await browser?.close();
    await receiver?.close();
    await testApp?.close();
  });

  async function newPage(): Promise<Page> {
    const context = await browser.newContext({ baseURL: testApp.context.config.publicUrl, locale: 'en-US' });
    const page = await context.newPage();
    page.setDefaultTimeout(Number(process.env.DEBUG_PAGE_TIMEOUT ?? 0));
    return page;
  }

  function nextCode(secret: string): string {
    testApp.clock.advance(30_000);
    return totpCode(secret, testApp.clock.now());
  }

  async function signIn(page: Page, email: string, secret: string): Promise<void> {
    await page.goto('/cabinet/sign-in?back=%2Fcabinet%2Fshops');
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(TEST_PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(/\/cabinet\/sign-in\/two-factor/);
    await page.getByLabel('Code or recovery code').fill(nextCode(secret));
    await page.getByRole('button', { name: 'Confirm' }).click();
    await page.waitForURL(/\/cabinet\/shops/);
  }

  /** Enrols the person's second factor through the app (the two-factor pages have their own browser test). */
  async function enrolled(email: string): Promise<string> {
    const client = new CabinetClient(testApp.app);
    await client.signIn(email);
    return (await enrol(client, () => testApp.clock.now())).secret;
  }

  it('finance requests, the owner approves with TOTP, the chain completes it and the webhook verifies', async () => {
    const unique = uniqueName('wd');
    const ownerEmail = `owner-${unique}@example.test`;
    const created = await createMerchantWithOwner(testApp.context, {
      name: `Withdrawing shop ${unique}`,
      email: ownerEmail,
      password: TEST_PASSWORD,
      mode: 'sandbox',
    });
    const shop = { shopId: created.shop_id, merchantId: created.merchant_id, key: created.api_key };
    await setEndpoint(testApp.context, shop.shopId, receiver.url, {
      actor: { kind: 'operator', label: 'test' },
      merchantId: shop.merchantId,
    });
    await testApp.fund(shop, 500_000_000n);
    await testApp.post(shop, '/v1/test_helpers/crypto/faucet', { usdt: '100000', trx: '100000' });
    const owner = { email: ownerEmail, userId: created.owner_user_id!, ...shop, apiKey: shop.key };
    const finance = await addMember(testApp, owner, 'finance');
    const financeSecret = await enrolled(finance.email);
    const ownerSecret = await enrolled(owner.email);
    const base = `/cabinet/shops/${shop.shopId}/withdrawals`;
    const address = recipient();

    // Member A adds the address with a code typed in the form.
    const a = await newPage();
    await signIn(a, finance.email, financeSecret);
    await a.goto(`${base}/addresses`);
    await expectPageHoldsUp(a, 'cabinet-withdrawal-addresses');
    await a.getByLabel('Label').fill('Treasury');
    await a.getByLabel('TRON address (T…)').fill(address);
    await a.getByLabel('Code from the authenticator app').fill(nextCode(financeSecret));
    await a.getByRole('button', { name: 'Add the address' }).click();
    await a.waitForURL(/done=added/);
    expect(await a.locator(`tr:has-text("${address}") .badge`).textContent()).toBe('cooling down');

    // Past the cool-down it is offered; the preview shows the fee and the total before anything is made.
    testApp.clock.advance(COOLDOWN_MS);
    await a.goto(base);
    await expectPageHoldsUp(a, 'cabinet-withdrawals');
    await a.getByLabel('Amount, USDT (up to 2 decimals)').fill('25.5');
    await a.getByLabel('Address from the address book').selectOption({ label: `Treasury · ${address}` });
    await a.getByLabel('Note (up to 500 characters)').fill('October settlement');
    await a.getByRole('button', { name: 'Preview the fee' }).click();
    await a.locator('#total-debit').waitFor();
    await expectPageHoldsUp(a, 'cabinet-withdrawal-preview');
    // The requester confirms with their own code typed in the confirm form.
    await a.getByLabel('Code from the authenticator app').fill(nextCode(financeSecret));
    await a.getByRole('button', { name: 'Confirm the withdrawal' }).click();
    await a.waitForURL(/\/withdrawals\/wd_[0-9a-z]+\?done=requested/);
    const withdrawalId = /(wd_[0-9a-z]+)/.exec(a.url())![1]!;
    expect(await a.locator('#withdrawal-status').textContent()).toBe('awaiting approval');
    expect(await a.getByRole('button', { name: 'Approve' }).count()).toBe(0);
    await expectPageHoldsUp(a, 'cabinet-withdrawal-awaiting');

    // Member B approves with a code typed in the approve form.
    const b = await newPage();
    await signIn(b, owner.email, ownerSecret);
    await b.goto(`${base}/${withdrawalId}`);
    await b.getByLabel('Code from the authenticator app').fill(nextCode(ownerSecret));
    await b.getByRole('button', { name: 'Approve' }).click();
    await b.waitForURL(/done=approved/);
    expect(await b.locator('#withdrawal-status').textContent()).toBe('queued');

    // The sandbox chain mines it to the end.
    await testApp.carryToFinal(shop);
    await b.goto(`${base}/${withdrawalId}`);
    expect(await b.locator('#withdrawal-status').textContent()).toBe('completed');
    const txHash = (await b.locator('#withdrawal-tx code').textContent())!.trim();
    expect(txHash).toMatch(/^[0-9a-f]{64}$/);
    expect(await b.locator('ol.timeline').textContent()).toContain(`Approved`);
    await expectPageHoldsUp(b, 'cabinet-withdrawal-completed');
    expect(await testApp.usdtOnChain(address)).toBe(25_500_000n);

    // The outcome reaches the receiver, signed.
    await createDeliveryWorker(testApp.context, { concurrency: 2 }).drain();
    const delivered = receiver.requests.filter((request) => request.body.includes(withdrawalId));
    expect(delivered).toHaveLength(1);
    const event = new Webhook(created.webhook_secret).verify(
      delivered[0]!.body,
      delivered[0]!.headers as Record<string, string>,
    ) as { type: string; data: Record<string, unknown> };
    expect(event.type).toBe('cabinet.withdrawal.completed');
    expect(event.data).toMatchObject({
      withdrawal_id: withdrawalId,
      status: 'completed',
      tx_hash: txHash,
      amount: '25.5',
      requested_by: finance.email,
      note: 'October settlement',
      decision: { by: owner.email, user_id: owner.userId, approved: true },
    });
    expect(event.data.network_fee_actual).not.toBeNull();
  });
});

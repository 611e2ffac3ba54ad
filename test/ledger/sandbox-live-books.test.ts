// Sandbox money can never become live money: a merchant with a sandbox shop and
// a live shop has two books; each key sees and moves only its own mode's book.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inTransaction } from '../../src/db/transaction.ts';
import { ensureAccounts, merchantAccountKey } from '../../src/ledger/ledger-accounts.ts';
import { transfer } from '../../src/ledger/ledger-service.ts';
import { createShop } from '../../src/merchants/merchant-service.ts';
import { createTestApp, type TestApp } from '../support/app.ts';
import { backends } from '../support/databases.ts';

interface Account {
  account_id: string;
  currency: string;
  kind: string;
  available: string;
}

describe.each(backends)('sandbox and live books on %s', (backend) => {
  let testApp: TestApp;
  let merchantId: string;
  let sandboxKey: string;
  let liveKey: string;

  const call = (key: string, method: 'GET' | 'POST', url: string, body?: unknown) =>
    testApp.app.inject({
      method,
      url,
      headers: {
        authorization: `Bearer ${key}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
    });
  const balances = async (key: string) => (await call(key, 'GET', '/v1/crypto/balance')).json().accounts as Account[];
  const rubMain = (accounts: Account[]) =>
    accounts.find((account) => account.currency === 'RUB' && account.kind === 'main')!;
  const rubPayout = (accounts: Account[]) =>
    accounts.find((account) => account.currency === 'RUB' && account.kind === 'payout')!;

  beforeAll(async () => {
    testApp = await createTestApp(backend);
    const sandbox = await testApp.createMerchant({ mode: 'sandbox' });
    merchantId = sandbox.merchant_id;
    sandboxKey = sandbox.api_key;
    liveKey = (await createShop(testApp.context, { merchantId, mode: 'live' })).api_key;
    // A sandbox test-helper payment of 1,000,000 RUB.
    const payment = (await call(sandboxKey, 'POST', '/v1/payments', { amount: 1_000_000, currency: 'RUB' })).json();
    expect((await call(sandboxKey, 'POST', `/v1/test_helpers/payments/${payment.payment_id}/pay`)).statusCode).toBe(
      200,
    );
  });
  afterAll(async () => {
    await testApp?.close();
  });

  it('the sandbox key sees the sandbox payment; the live key of the same merchant sees none of it', async () => {
    expect(rubMain(await balances(sandboxKey)).available).toBe('1000000.00');
    const live = await balances(liveKey);
    expect(live.map((account) => Number(account.available))).toEqual([0, 0, 0, 0]);
    const sandboxIds = new Set((await balances(sandboxKey)).map((account) => account.account_id));
    for (const account of live) expect(sandboxIds.has(account.account_id)).toBe(false);
    const operations = (await call(liveKey, 'GET', '/v1/crypto/balance/operations')).json();
    expect(operations.data).toEqual([]);
  });

  it('the live key cannot move sandbox money: sandbox accounts are not its own (404), its own are empty (400)', async () => {
    const sandbox = await balances(sandboxKey);
    const live = await balances(liveKey);
    const fromSandbox = await call(liveKey, 'POST', '/v1/crypto/balance/transfers', {
      external_id: 'steal-1',
      from_account_id: rubMain(sandbox).account_id,
      to_account_id: rubPayout(live).account_id,
      amount: '1000.00',
    });
    expect(fromSandbox.statusCode).toBe(404);
    expect(fromSandbox.json()).toMatchObject({ error: 'not_found' });
    const ownEmpty = await call(liveKey, 'POST', '/v1/crypto/balance/transfers', {
      external_id: 'steal-2',
      from_account_id: rubMain(live).account_id,
      to_account_id: rubPayout(live).account_id,
      amount: '1000.00',
    });
    expect(ownEmpty.statusCode).toBe(400);
    expect(ownEmpty.json()).toMatchObject({ error: 'insufficient_funds' });
    const history = await call(
      liveKey,
      'GET',
      `/v1/crypto/balance/operations?account_id=${rubMain(sandbox).account_id}`,
    );
    expect(history.statusCode).toBe(404);
    expect(rubMain(await balances(sandboxKey)).available).toBe('1000000.00');
  });

  it('and the sandbox key cannot reach live accounts either', async () => {
    const sandbox = await balances(sandboxKey);
    const live = await balances(liveKey);
    const response = await call(sandboxKey, 'POST', '/v1/crypto/balance/transfers', {
      external_id: 'into-live',
      from_account_id: rubMain(sandbox).account_id,
      to_account_id: rubMain(live).account_id,
      amount: '1.00',
    });
    expect(response.statusCode).toBe(404);
  });

  it('the ledger itself refuses any transfer between the books', async () => {
    const [sandboxMain, liveMain] = await inTransaction(testApp.context.db, (tx) =>
      ensureAccounts(tx, testApp.context.clock, [
        merchantAccountKey('sandbox', merchantId, 'RUB', 'main'),
        merchantAccountKey('live', merchantId, 'RUB', 'main'),
      ]),
    );
    await expect(
      inTransaction(testApp.context.db, (tx) =>
        transfer(tx, testApp.context.clock, {
          id: `cross-book-${backend}`,
          debitAccountId: sandboxMain!.id,
          creditAccountId: liveMain!.id,
          amount: 100n,
          type: 'transfer',
          reference: { type: 'test', id: 'cross' },
        }),
      ),
    ).rejects.toMatchObject({ code: 'invalid_request', message: expect.stringContaining('different books') });
  });
});

import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { inTransaction } from '../../src/db/transaction.ts';
import { checkLedgerInvariants } from '../../src/ledger/ledger-check.ts';
import { reserve } from '../../src/ledger/ledger-service.ts';
import { ensureAccounts, systemAccountKey } from '../../src/ledger/ledger-accounts.ts';
import { creditPaymentPaid } from '../../src/payments/payment-credit.ts';
import type { ApiKeyScope } from '../../src/http/api-scopes.ts';
import { createShop } from '../../src/merchants/merchant-service.ts';
import { createTestApp, type TestApp } from '../support/app.ts';
import { backends } from '../support/databases.ts';
import { uniqueName } from '../support/seeded-random.ts';

interface BalanceAccount {
  account_id: string;
  currency: 'RUB' | 'USDT';
  kind: 'main' | 'payout';
  available: string;
  pending: string;
  total: string;
}

describe.each(backends)('balance API on %s', (backend) => {
  let testApp: TestApp;
  beforeAll(async () => {
    testApp = await createTestApp(backend);
  });
  afterEach(async () => {
    expect((await checkLedgerInvariants(testApp.context.db)).violations).toEqual([]);
  });
  afterAll(() => testApp.close());

  const auth = (key: string) => ({ authorization: `Bearer ${key}` });
  const getBalance = (key: string) =>
    testApp.app.inject({ method: 'GET', url: '/v1/crypto/balance', headers: auth(key) });
  const postTransfer = (key: string, body: unknown) =>
    testApp.app.inject({
      method: 'POST',
      url: '/v1/crypto/balance/transfers',
      headers: { ...auth(key), 'content-type': 'application/json' },
      payload: JSON.stringify(body),
    });
  const getOperations = (key: string, query = '') =>
    testApp.app.inject({ method: 'GET', url: `/v1/crypto/balance/operations${query}`, headers: auth(key) });

  async function merchantWithAccounts(rubKopecks = 0n) {
    const merchant = await testApp.createMerchant();
    const response = await getBalance(merchant.api_key);
    const accounts = (response.json() as { accounts: BalanceAccount[] }).accounts;
    const find = (currency: string, kind: string) => accounts.find((a) => a.currency === currency && a.kind === kind)!;
    if (rubKopecks > 0n) {
      await inTransaction(testApp.context.db, (tx) =>
        creditPaymentPaid(tx, testApp.context.clock, {
          paymentId: crypto.randomUUID(),
          merchantId: merchant.merchant_id,
          book: 'sandbox',
          amountKopecks: rubKopecks,
          feeKopecks: 0n,
        }),
      );
    }
    return {
      merchant,
      key: merchant.api_key,
      rubMain: find('RUB', 'main'),
      rubPayout: find('RUB', 'payout'),
      usdtMain: find('USDT', 'main'),
      usdtPayout: find('USDT', 'payout'),
    };
  }

  it('a new merchant sees its RUB and USDT main and payout accounts at zero before any money moved', async () => {
    const merchant = await testApp.createMerchant();
    const response = await getBalance(merchant.api_key);
    expect(response.statusCode).toBe(200);
    const accounts = (response.json() as { accounts: BalanceAccount[] }).accounts;
    expect(accounts.map((a) => [a.currency, a.kind, a.available, a.pending, a.total])).toEqual([
      ['RUB', 'main', '0.00', '0.00', '0.00'],
      ['RUB', 'payout', '0.00', '0.00', '0.00'],
      ['USDT', 'main', '0.000000', '0.000000', '0.000000'],
      ['USDT', 'payout', '0.000000', '0.000000', '0.000000'],
    ]);
    for (const account of accounts) expect(account.account_id).toMatch(/^acc_/);
    expect((await getBalance(merchant.api_key)).json()).toEqual(response.json());
  });

  it('a paid payment shows in the balance and in the operation history', async () => {
    const merchant = await testApp.createMerchant();
    const created = await testApp.app.inject({
      method: 'POST',
      url: '/v1/payments',
      headers: { ...auth(merchant.api_key), 'content-type': 'application/json' },
      payload: JSON.stringify({ amount: 1234.5, currency: 'RUB' }),
    });
    expect(created.statusCode).toBe(201);
    const payment = created.json() as { payment_id: string; amount: number };
    const paid = await testApp.app.inject({
      method: 'POST',
      url: `/v1/test_helpers/payments/${payment.payment_id}/pay`,
      headers: auth(merchant.api_key),
    });
    expect(paid.statusCode).toBe(200);
    const accounts = getBalanceJson(await getBalance(merchant.api_key));
    const rubMain = accounts.find((a) => a.currency === 'RUB' && a.kind === 'main')!;
    expect(rubMain).toMatchObject({ available: '1234.50', pending: '0.00', total: '1234.50' });
    const operations = await getOperations(merchant.api_key);
    expect(operations.statusCode).toBe(200);
    expect(operations.json()).toEqual({
      data: [
        {
          operation_id: expect.stringMatching(/^op_/),
          account_id: rubMain.account_id,
          transfer_id: expect.stringMatching(/^trf_/),
          type: 'payment',
          amount: '1234.50',
          currency: 'RUB',
          status: 'posted',
          balance_after: '1234.50',
          reference: { type: 'payment', id: payment.payment_id },
          created_at: testApp.clock.now().toISOString(),
        },
      ],
      next_cursor: null,
    });
  });

  function getBalanceJson(response: { json(): unknown }): BalanceAccount[] {
    return (response.json() as { accounts: BalanceAccount[] }).accounts;
  }

  it('a transfer between own accounts is 201, its repeat 200 with the same transfer, and the balances move once', async () => {
    const { key, rubMain, rubPayout } = await merchantWithAccounts(100_000n);
    const body = {
      external_id: 'move-1',
      from_account_id: rubMain.account_id,
      to_account_id: rubPayout.account_id,
      amount: '250.75',
    };
    const first = await postTransfer(key, body);
    expect(first.statusCode).toBe(201);
    expect(first.json()).toEqual({
      transfer_id: expect.stringMatching(/^trf_/),
      external_id: 'move-1',
      from_account_id: rubMain.account_id,
      to_account_id: rubPayout.account_id,
      amount: '250.75',
      currency: 'RUB',
      status: 'posted',
      created_at: expect.any(String),
    });
    const again = await postTransfer(key, body);
    expect(again.statusCode).toBe(200);
    expect(again.json()).toEqual(first.json());
    const accounts = getBalanceJson(await getBalance(key));
    expect(accounts.find((a) => a.account_id === rubMain.account_id)!.available).toBe('749.25');
    expect(accounts.find((a) => a.account_id === rubPayout.account_id)!.available).toBe('250.75');
  });

  it('the same external_id with other parameters is 409 duplicate_external_id', async () => {
    const { key, rubMain, rubPayout } = await merchantWithAccounts(100_000n);
    const body = {
      external_id: 'move-dup',
      from_account_id: rubMain.account_id,
      to_account_id: rubPayout.account_id,
      amount: '10.00',
    };
    expect((await postTransfer(key, body)).statusCode).toBe(201);
    for (const changed of [
      { amount: '10.01' },
      { from_account_id: rubPayout.account_id, to_account_id: rubMain.account_id },
    ]) {
      const response = await postTransfer(key, { ...body, ...changed });
      expect(response.statusCode).toBe(409);
      expect(response.json()).toEqual({
        error: 'duplicate_external_id',
        message: expect.stringContaining('different parameters'),
        request_id: expect.any(String),
      });
    }
  });

  it('two shops of one merchant share its transfer external_ids, as they share its balance: a repeat is that transfer, a conflict a clean 409', async () => {
    const { merchant, key, rubMain, rubPayout } = await merchantWithAccounts(100_000n);
    const second = await createShop(testApp.context, { merchantId: merchant.merchant_id, mode: 'sandbox' });
    const body = {
      external_id: 'move-shared',
      from_account_id: rubMain.account_id,
      to_account_id: rubPayout.account_id,
      amount: '10.00',
    };
    const first = await postTransfer(key, body);
    expect(first.statusCode).toBe(201);
    const repeat = await postTransfer(second.api_key, body);
    expect([repeat.statusCode, repeat.json().transfer_id]).toEqual([200, first.json().transfer_id]);
    // An external_id only the first shop used, sent by the second with another amount.
    expect((await postTransfer(key, { ...body, external_id: 'move-other' })).statusCode).toBe(201);
    const conflict = await postTransfer(second.api_key, { ...body, external_id: 'move-other', amount: '20.00' });
    expect(conflict.statusCode).toBe(409);
    expect(conflict.json().error).toBe('duplicate_external_id');
    expect(conflict.json().message).toContain('unique per merchant');
    expect(conflict.json().message).not.toContain('balance-transfer:');
    expect(
      (await getBalance(key))
        .json()
        .accounts.find((account: BalanceAccount) => account.account_id === rubPayout.account_id).available,
    ).toBe('20.00');
  });

  it('50 simultaneous identical transfers move the money once; every answer is that transfer', async () => {
    const { key, rubMain, rubPayout } = await merchantWithAccounts(100_000n);
    const body = {
      external_id: 'race-same',
      from_account_id: rubMain.account_id,
      to_account_id: rubPayout.account_id,
      amount: '12.34',
    };
    const responses = await Promise.all(Array.from({ length: 50 }, () => postTransfer(key, body)));
    const statuses = responses.map((response) => response.statusCode);
    expect(statuses.filter((status) => status === 201)).toHaveLength(1);
    expect(statuses.filter((status) => status !== 201).every((status) => status === 200)).toBe(true);
    expect(new Set(responses.map((response) => response.json().transfer_id)).size).toBe(1);
    const balances = (await getBalance(key)).json() as { accounts: BalanceAccount[] };
    expect(balances.accounts.find((a) => a.account_id === rubPayout.account_id)!.available).toBe('12.34');
  });

  it('50 simultaneous transfers under one external_id with different amounts: one moves money, the rest are 409', async () => {
    const { key, rubMain, rubPayout } = await merchantWithAccounts(100_000n);
    const responses = await Promise.all(
      Array.from({ length: 50 }, (_, index) =>
        postTransfer(key, {
          external_id: 'race-diff',
          from_account_id: rubMain.account_id,
          to_account_id: rubPayout.account_id,
          amount: `1.${String(index).padStart(2, '0')}`,
        }),
      ),
    );
    const created = responses.filter((response) => response.statusCode === 201);
    expect(created).toHaveLength(1);
    for (const response of responses.filter((candidate) => candidate.statusCode !== 201)) {
      expect([response.statusCode, response.json().error]).toEqual([409, 'duplicate_external_id']);
    }
    const balances = (await getBalance(key)).json() as { accounts: BalanceAccount[] };
    expect(balances.accounts.find((a) => a.account_id === rubPayout.account_id)!.available).toBe(
      created[0]!.json().amount,
    );
  });

  it('two merchants may use the same external_id independently', async () => {
    const a = await merchantWithAccounts(10_000n);
    const b = await merchantWithAccounts(10_000n);
    expect(
      (
        await postTransfer(a.key, {
          external_id: 'shared',
          from_account_id: a.rubMain.account_id,
          to_account_id: a.rubPayout.account_id,
          amount: '1',
        })
      ).statusCode,
    ).toBe(201);
    expect(
      (
        await postTransfer(b.key, {
          external_id: 'shared',
          from_account_id: b.rubMain.account_id,
          to_account_id: b.rubPayout.account_id,
          amount: '2',
        })
      ).statusCode,
    ).toBe(201);
  });

  it('more than the available balance is 400 insufficient_funds and nothing moves', async () => {
    const { key, rubMain, rubPayout } = await merchantWithAccounts(10_000n);
    const response = await postTransfer(key, {
      external_id: 'too-much',
      from_account_id: rubMain.account_id,
      to_account_id: rubPayout.account_id,
      amount: '100.01',
    });
    expect(response.statusCode).toBe(400);
    expect(response.json()).toEqual({
      error: 'insufficient_funds',
      message: expect.any(String),
      request_id: expect.any(String),
    });
    expect(getBalanceJson(await getBalance(key)).find((a) => a.account_id === rubMain.account_id)!.available).toBe(
      '100.00',
    );
  });

  it('money reserved for a payout is not available for a transfer and shows as pending', async () => {
    const { merchant, key, rubMain, rubPayout } = await merchantWithAccounts(10_000n);
    const [settlement] = await inTransaction(testApp.context.db, (tx) =>
      ensureAccounts(tx, testApp.context.clock, [systemAccountKey('sandbox', 'settlement', 'RUB')]),
    );
    await inTransaction(testApp.context.db, (tx) =>
      reserve(tx, testApp.context.clock, {
        id: `payout-test:${merchant.merchant_id}`,
        debitAccountId: rubMain.account_id,
        creditAccountId: settlement!.id,
        amount: 6_000n,
        type: 'payout',
        reference: { type: 'payout', id: 'po_test' },
      }),
    );
    expect(getBalanceJson(await getBalance(key)).find((a) => a.account_id === rubMain.account_id)).toMatchObject({
      available: '40.00',
      pending: '60.00',
      total: '100.00',
    });
    const response = await postTransfer(key, {
      external_id: 'after-reserve',
      from_account_id: rubMain.account_id,
      to_account_id: rubPayout.account_id,
      amount: '40.01',
    });
    expect(response.json()).toMatchObject({ error: 'insufficient_funds' });
    const history = (await getOperations(key, `?type=payout`)).json() as {
      data: { amount: string; status: string; balance_after: string }[];
    };
    expect(history.data).toEqual([
      expect.objectContaining({ amount: '-60.00', status: 'pending', balance_after: '40.00' }),
    ]);
  });

  it.each([
    [
      'different currencies',
      (m: Awaited<ReturnType<typeof merchantWithAccounts>>) => ({
        from_account_id: m.rubMain.account_id,
        to_account_id: m.usdtMain.account_id,
        amount: '1',
      }),
      /one currency/,
    ],
    [
      'the same account',
      (m: Awaited<ReturnType<typeof merchantWithAccounts>>) => ({
        from_account_id: m.rubMain.account_id,
        to_account_id: m.rubMain.account_id,
        amount: '1',
      }),
      /same account/,
    ],
    [
      'more than 2 decimal places for RUB',
      (m: Awaited<ReturnType<typeof merchantWithAccounts>>) => ({
        from_account_id: m.rubMain.account_id,
        to_account_id: m.rubPayout.account_id,
        amount: '1.001',
      }),
      /2 decimal places/,
    ],
    [
      'a zero amount',
      (m: Awaited<ReturnType<typeof merchantWithAccounts>>) => ({
        from_account_id: m.rubMain.account_id,
        to_account_id: m.rubPayout.account_id,
        amount: '0.00',
      }),
      /greater than zero/,
    ],
    [
      'a negative amount',
      (m: Awaited<ReturnType<typeof merchantWithAccounts>>) => ({
        from_account_id: m.rubMain.account_id,
        to_account_id: m.rubPayout.account_id,
        amount: '-1',
      }),
      /decimal string/,
    ],
    [
      'an amount in exponent form',
      (m: Awaited<ReturnType<typeof merchantWithAccounts>>) => ({
        from_account_id: m.rubMain.account_id,
        to_account_id: m.rubPayout.account_id,
        amount: '1e3',
      }),
      /decimal string/,
    ],
    [
      'an amount above the maximum',
      (m: Awaited<ReturnType<typeof merchantWithAccounts>>) => ({
        from_account_id: m.rubMain.account_id,
        to_account_id: m.rubPayout.account_id,
        amount: '1000000000.01',
      }),
      /at most/,
    ],
    [
      'more than 6 decimal places for USDT',
      (m: Awaited<ReturnType<typeof merchantWithAccounts>>) => ({
        from_account_id: m.usdtMain.account_id,
        to_account_id: m.usdtPayout.account_id,
        amount: '0.0000001',
      }),
      /6 decimal places/,
    ],
  ])('%s is 400 invalid_request with a clear message', async (_label, bodyOf, message) => {
    const merchant = await merchantWithAccounts(10_000n);
    const response = await postTransfer(merchant.key, { external_id: uniqueName('bad'), ...bodyOf(merchant) });
    expect(response.statusCode).toBe(400);
    expect(response.json()).toEqual({
      error: 'invalid_request',
      message: expect.stringMatching(message),
      request_id: expect.any(String),
    });
  });

  it.each([
    ['a missing field', { external_id: 'x', amount: '1' }],
    ['an unknown field', { external_id: 'x', from_account_id: 'a', to_account_id: 'b', amount: '1', note: 'hi' }],
    [
      'an external_id over 100 characters',
      { external_id: 'x'.repeat(101), from_account_id: 'a', to_account_id: 'b', amount: '1' },
    ],
    ['a numeric amount', { external_id: 'x', from_account_id: 'a', to_account_id: 'b', amount: 1 }],
  ])('%s is 400 invalid_request', async (_label, body) => {
    const { key } = await merchantWithAccounts();
    const response = await postTransfer(key, body);
    expect(response.statusCode).toBe(400);
    expect(response.json()).toMatchObject({ error: 'invalid_request' });
  });

  it('another merchant’s account is 404 not_found, as from or to, and in the history filter', async () => {
    const mine = await merchantWithAccounts(10_000n);
    const theirs = await merchantWithAccounts(10_000n);
    const asFrom = await postTransfer(mine.key, {
      external_id: 'steal',
      from_account_id: theirs.rubMain.account_id,
      to_account_id: mine.rubMain.account_id,
      amount: '1',
    });
    const asTo = await postTransfer(mine.key, {
      external_id: 'give',
      from_account_id: mine.rubMain.account_id,
      to_account_id: theirs.rubMain.account_id,
      amount: '1',
    });
    const unknown = await postTransfer(mine.key, {
      external_id: 'unknown',
      from_account_id: mine.rubMain.account_id,
      to_account_id: 'acc_nope',
      amount: '1',
    });
    for (const response of [asFrom, asTo, unknown]) {
      expect(response.statusCode).toBe(404);
      expect(response.json()).toMatchObject({ error: 'not_found' });
    }
    expect((await getOperations(mine.key, `?account_id=${theirs.rubMain.account_id}`)).statusCode).toBe(404);
    expect(
      getBalanceJson(await getBalance(theirs.key)).find((a) => a.account_id === theirs.rubMain.account_id)!.available,
    ).toBe('100.00');
  });

  it('scopes: a read key sees balances and history but cannot transfer (403); a crypto or payouts key can', async () => {
    const { merchant, rubMain, rubPayout } = await merchantWithAccounts(10_000n);
    const keyWith = (scopes: ApiKeyScope[]) => testApp.createKey(merchant.shop_id, scopes);
    const readKey = await keyWith(['read']);
    const paymentsKey = await keyWith(['payments']);
    expect((await getBalance(readKey)).statusCode).toBe(200);
    expect((await getOperations(paymentsKey)).statusCode).toBe(200);
    const refused = await postTransfer(readKey, {
      external_id: 's1',
      from_account_id: rubMain.account_id,
      to_account_id: rubPayout.account_id,
      amount: '1',
    });
    expect(refused.statusCode).toBe(403);
    expect(refused.json()).toMatchObject({ error: 'forbidden' });
    expect(
      (
        await postTransfer(await keyWith(['crypto']), {
          external_id: 's2',
          from_account_id: rubMain.account_id,
          to_account_id: rubPayout.account_id,
          amount: '1',
        })
      ).statusCode,
    ).toBe(201);
    expect(
      (
        await postTransfer(await keyWith(['payouts']), {
          external_id: 's3',
          from_account_id: rubMain.account_id,
          to_account_id: rubPayout.account_id,
          amount: '1',
        })
      ).statusCode,
    ).toBe(201);
  });

  it('the history pages newest first with a cursor and filters by account, type and time', async () => {
    const { key, rubMain, rubPayout } = await merchantWithAccounts(100_000n);
    const start = testApp.clock.now();
    for (let index = 1; index <= 5; index++) {
      testApp.clock.advance(60_000);
      const response = await postTransfer(key, {
        external_id: `page-${index}`,
        from_account_id: rubMain.account_id,
        to_account_id: rubPayout.account_id,
        amount: `${index}`,
      });
      expect(response.statusCode).toBe(201);
    }
    const seen: { amount: string; account_id: string; type: string }[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const response = await getOperations(
        key,
        `?limit=4&account_id=${rubMain.account_id}${cursor ? `&cursor=${cursor}` : ''}`,
      );
      expect(response.statusCode).toBe(200);
      const page = response.json() as { data: typeof seen; next_cursor: string | null };
      seen.push(...page.data);
      cursor = page.next_cursor;
      pages += 1;
    } while (cursor !== null && pages < 10);
    expect(pages).toBe(2);
    expect(seen.map((entry) => entry.amount)).toEqual(['-5.00', '-4.00', '-3.00', '-2.00', '-1.00', '1000.00']);
    const transfersOnly = (await getOperations(key, '?type=transfer')).json() as { data: typeof seen };
    expect(transfersOnly.data).toHaveLength(10);
    const from = new Date(start.getTime() + 2 * 60_000).toISOString();
    const to = new Date(start.getTime() + 4 * 60_000).toISOString();
    const window = (await getOperations(key, `?account_id=${rubPayout.account_id}&from=${from}&to=${to}`)).json() as {
      data: typeof seen;
    };
    expect(window.data.map((entry) => entry.amount)).toEqual(['3.00', '2.00']);
  });

  it('pages newest first by time even when the entries were numbered in another order, and a cursor of another merchant gives nothing', async () => {
    const { key, rubMain, rubPayout } = await merchantWithAccounts(100_000n);
    const other = await merchantWithAccounts(100_000n);
    // Two transfers numbered in the order written but dated the other way round (a writer that read the
    // clock first committed last): the list is by time, and its cursor continues from the entry shown.
    const start = testApp.clock.now();
    for (const [index, minutes] of [2, 1].entries()) {
      testApp.clock.set(new Date(start.getTime() + minutes * 60_000));
      const response = await postTransfer(key, {
        external_id: `order-${index}`,
        from_account_id: rubMain.account_id,
        to_account_id: rubPayout.account_id,
        amount: `${index + 1}`,
      });
      expect(response.statusCode).toBe(201);
    }
    testApp.clock.set(new Date(start.getTime() + 3 * 60_000));
    const amounts: string[] = [];
    let cursor: string | null = null;
    do {
      const page = (
        await getOperations(key, `?limit=1&account_id=${rubMain.account_id}${cursor ? `&cursor=${cursor}` : ''}`)
      ).json() as { data: { amount: string }[]; next_cursor: string | null };
      amounts.push(...page.data.map((entry) => entry.amount));
      cursor = page.next_cursor;
    } while (cursor !== null && amounts.length < 10);
    expect(amounts).toEqual(['-1.00', '-2.00', '1000.00']);
    const moved = await postTransfer(other.key, {
      external_id: 'other-1',
      from_account_id: other.rubMain.account_id,
      to_account_id: other.rubPayout.account_id,
      amount: '1',
    });
    expect(moved.statusCode).toBe(201);
    const foreign = (await getOperations(other.key, '?limit=1')).json() as { next_cursor: string | null };
    expect(foreign.next_cursor).not.toBeNull();
    const page = await getOperations(key, `?cursor=${foreign.next_cursor}`);
    expect(page.statusCode).toBe(200);
    expect(page.json()).toEqual({ data: [], next_cursor: null });
  });

  it.each([
    ['a limit above 100', '?limit=101'],
    ['a limit of 0', '?limit=0'],
    ['a forged cursor', '?cursor=bm9wZQ'],
    ['an unknown type', '?type=bonus'],
    ['a from that is not a timestamp', '?from=yesterday'],
    ['from after to', '?from=2026-11-02T00:00:00Z&to=2026-11-01T00:00:00Z'],
  ])('history with %s is 400 invalid_request', async (_label, query) => {
    const { key } = await merchantWithAccounts();
    const response = await getOperations(key, query);
    expect(response.statusCode).toBe(400);
    expect(response.json()).toMatchObject({ error: 'invalid_request' });
  });
});

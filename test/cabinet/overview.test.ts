// The shop overview through the real app, its sandbox chain and the injected
// clock: payments paid through the sandbox test helper, USDT deposits sent and
// mined on the simulated chain, a payout reserved, over several UTC days. Each
// day's numbers in the page's tables are what the ledger moved that day, the
// daily changes sum to the change of balance, and the last end-of-day balance is
// what GET /v1/crypto/balance answers, to the kopeck and the micro-USDT. A range
// of more than 366 days, or not a date, is refused with its reason; a viewer
// sees the overview and a developer gets 403.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createChainWatcher, type ChainWatcher } from '../../src/crypto/receiving/chain-watcher.ts';
import { checkLedgerInvariants } from '../../src/ledger/ledger-check.ts';
import { parseMinor } from '../../src/money/decimal.ts';
import type { Asset } from '../../src/money/asset.ts';
import { backends } from '../support/databases.ts';
import { createCryptoTestApp, externalId, type CryptoTestApp } from '../crypto/receiving/crypto-routes-support.ts';
import { payoutBody } from '../crypto/payouts/payout-support.ts';
import { addMember, CabinetClient, createOwner, type CabinetPerson } from './cabinet-client.ts';

const DAY_MS = 86_400_000;
/** Solidification is at head − 18: a deposit is final once 19 blocks include it and follow. */
const BLOCKS_TO_FINALITY = 19;
const WATCHER_PASSES_MAX = 10;

/** Minor units of an amount the page shows (a day's change may be negative). */
function minor(text: string, asset: Asset): bigint {
  const negative = text.startsWith('-');
  const parsed = parseMinor(negative ? text.slice(1) : text, asset, 'decimal-string');
  if (!parsed.ok) throw new Error(`"${text}" is not a ${asset} amount: ${parsed.problem}`);
  return negative ? -parsed.minor : parsed.minor;
}

/** The rows of the table in the page's section `id`: day → its cells, in minor units. */
function tableOf(page: string, id: string, asset: Asset): Map<string, bigint[]> {
  const start = page.indexOf(`id="${id}"`);
  expect(start, `section ${id}`).toBeGreaterThan(-1);
  const section = page.slice(start, page.indexOf('</section>', start));
  expect(section).toMatch(/<svg[^>]*role="img"[^>]*aria-label="[^"]+"/);
  expect(section).toContain('<caption>');
  const rows = new Map<string, bigint[]>();
  for (const row of section.matchAll(/<tr data-day="([\d-]+)">(.*?)<\/tr>/g)) {
    const cells = [...row[2]!.matchAll(/<td class="num">([^<]*)<\/td>/g)].map((cell) => minor(cell[1]!, asset));
    rows.set(row[1]!, cells);
  }
  return rows;
}

function balanceCell(page: string, currency: Asset, field: string): bigint {
  const row = new RegExp(`<tr data-currency="${currency}">(.*?)</tr>`).exec(page)?.[1] ?? '';
  const cell = new RegExp(`data-field="${field}">([^ <]+) ${currency}<`).exec(row)?.[1];
  expect(cell, `${currency} ${field}`).toBeDefined();
  return minor(cell!, currency);
}

describe.each(backends)('cabinet overview on %s', (backend) => {
  let testApp: CryptoTestApp;
  let watcher: ChainWatcher;
  beforeAll(async () => {
    testApp = await createCryptoTestApp(backend);
    const { context } = testApp;
    const access = await testApp.crypto.chain.forMode('sandbox');
    watcher = createChainWatcher({ db: context.db, clock: context.clock, logger: context.logger, access });
  });
  afterAll(async () => {
    if (testApp) {
      expect((await checkLedgerInvariants(testApp.context.db)).violations).toEqual([]);
      // Every entry written here carries its originating transfer's type, which the day sums read (migration 0039).
      const untyped = await sql<{ entries: string }>`
        select count(*)::text as entries from ledger_operations o join ledger_transfers t on t.id = o.origin_id
         where o.type is distinct from t.type`.execute(testApp.context.db);
      expect(untyped.rows[0]?.entries).toBe('0');
    }
    await testApp?.close();
  });

  async function watch(): Promise<void> {
    for (let pass = 0; pass < WATCHER_PASSES_MAX; pass++) {
      const result = await watcher.runPass();
      if (result.blocksScanned === 0 && result.depositsSettled === 0) return;
    }
    throw new Error(`the watcher still had work after ${WATCHER_PASSES_MAX} passes`);
  }

  async function ok(response: Promise<{ statusCode: number; body: string; json(): unknown }>, status = 200) {
    const answered = await response;
    expect(answered.statusCode, answered.body).toBe(status);
    return answered.json() as Record<string, string>;
  }

  /** Available per currency as the API reports it: main and payout accounts together, in minor units. */
  async function apiAvailable(owner: CabinetPerson): Promise<Record<Asset, bigint>> {
    const body = (await ok(testApp.call(owner.apiKey, 'GET', '/v1/crypto/balance'))) as unknown as {
      accounts: { currency: Asset; available: string }[];
    };
    const total = { RUB: 0n, USDT: 0n };
    for (const account of body.accounts) total[account.currency] += minor(account.available, account.currency);
    return total;
  }

  async function pay(owner: CabinetPerson, amount: number): Promise<void> {
    const payment = await ok(testApp.call(owner.apiKey, 'POST', '/v1/payments', { amount, currency: 'RUB' }), 201);
    await ok(testApp.call(owner.apiKey, 'POST', `/v1/test_helpers/payments/${payment.payment_id}/pay`));
  }

  async function deposit(address: string, amount: string, blocks: number): Promise<void> {
    await ok(testApp.call(testOwnerKey, 'POST', '/v1/test_helpers/crypto/deposits', { address, amount }));
    await ok(testApp.call(testOwnerKey, 'POST', '/v1/test_helpers/crypto/blocks', { count: blocks }));
    await watch();
  }
  let testOwnerKey = '';

  async function signedIn(person: CabinetPerson): Promise<CabinetClient> {
    const client = new CabinetClient(testApp.app);
    expect((await client.signIn(person.email)).statusCode).toBe(303);
    return client;
  }

  /** 09:00 UTC of the day after the clock's. */
  function nextMorning(): Date {
    const midnight = Math.floor(testApp.clock.now().getTime() / DAY_MS) * DAY_MS;
    return new Date(midnight + DAY_MS + 9 * 3_600_000);
  }

  it('each day holds what the ledger moved; the nets sum to the change of balance; the last day ends at the API balance', async () => {
    const owner = await createOwner(testApp);
    testOwnerKey = owner.apiKey;
    const wallet = await ok(
      testApp.call(owner.apiKey, 'POST', '/v1/crypto/wallets', { client_id: externalId('client'), network: 'TRC20' }),
      201,
    );
    const before = await apiAvailable(owner);
    const quietDay = nextMorning();
    testApp.clock.set(quietDay);
    const zeroDay = quietDay.toISOString().slice(0, 10);
    const closing = new Map<string, Record<Asset, bigint>>([[zeroDay, before]]);

    // Day 1: two payments paid.
    testApp.clock.set(nextMorning());
    const day1 = testApp.clock.now().toISOString().slice(0, 10);
    await pay(owner, 1000.5);
    testApp.clock.advance(3_600_000);
    await pay(owner, 250);
    closing.set(day1, await apiAvailable(owner));

    // Day 2: 30 USDT deposited and final.
    testApp.clock.set(nextMorning());
    const day2 = testApp.clock.now().toISOString().slice(0, 10);
    await deposit(wallet.address!, '30', BLOCKS_TO_FINALITY + 1);
    closing.set(day2, await apiAvailable(owner));

    // Day 3: a payout reserved, a payment paid, 5 USDT seen on chain but not final (incoming).
    testApp.clock.set(nextMorning());
    const day3 = testApp.clock.now().toISOString().slice(0, 10);
    const payout = await ok(
      testApp.call(owner.apiKey, 'POST', '/v1/crypto/payouts', payoutBody({ amount: '10' })),
      201,
    );
    const totalDebit = minor(payout.total_debit!, 'USDT');
    await pay(owner, 99.99);
    await deposit(wallet.address!, '5', 1);
    closing.set(day3, await apiAvailable(owner));

    // Day 4: nothing moves; the page is read then.
    testApp.clock.set(nextMorning());
    const day4 = testApp.clock.now().toISOString().slice(0, 10);
    const now = await apiAvailable(owner);
    closing.set(day4, now);

    const viewer = await addMember(testApp, owner, 'viewer');
    const client = await signedIn(viewer);
    const response = await client.get(`/cabinet/shops/${owner.shopId}/overview?from=${zeroDay}&to=${day4}`);
    expect(response.statusCode, response.body).toBe(200);
    const page = response.body;
    const days = [zeroDay, day1, day2, day3, day4];

    const payments = tableOf(page, 'payments', 'RUB');
    const deposits = tableOf(page, 'deposits', 'USDT');
    const payouts = tableOf(page, 'payouts', 'USDT');
    expect([...payments.keys()]).toEqual(days);
    expect(days.map((day) => payments.get(day)![0])).toEqual([
      0n,
      closing.get(day1)!.RUB - before.RUB,
      0n,
      closing.get(day3)!.RUB - closing.get(day2)!.RUB,
      0n,
    ]);
    expect(payments.get(day1)![0]).toBe(125_050n);
    expect(payments.get(day3)![0]).toBe(9_999n);
    expect(days.map((day) => deposits.get(day)![0])).toEqual([0n, 0n, 30_000_000n, 0n, 0n]);
    expect(days.map((day) => payouts.get(day)![0])).toEqual([0n, 0n, 0n, totalDebit, 0n]);

    for (const currency of ['RUB', 'USDT'] as const) {
      const balance = tableOf(page, `balance-${currency.toLowerCase()}`, currency);
      expect([...balance.keys()]).toEqual(days);
      // Each day: [change, balance at its end]; the end of each day is what the API answered then.
      for (const day of days) expect(balance.get(day)![1], `${currency} ${day}`).toBe(closing.get(day)![currency]);
      const nets = days.reduce((sum, day) => sum + (balance.get(day)?.[0] ?? 0n), 0n);
      expect(nets).toBe(now[currency] - before[currency]);
      expect(balance.get(day4)![1]).toBe(now[currency]);
    }

    expect(balanceCell(page, 'RUB', 'available')).toBe(now.RUB);
    expect(balanceCell(page, 'USDT', 'available')).toBe(now.USDT);
    expect(balanceCell(page, 'USDT', 'reserved')).toBe(totalDebit);
    expect(balanceCell(page, 'USDT', 'incoming')).toBe(5_000_000n);
    expect(balanceCell(page, 'RUB', 'incoming')).toBe(0n);
  });

  it('the last 30 days by default, 366 days at most; a bad range is refused with its reason and the default shown', async () => {
    const owner = await createOwner(testApp);
    const client = await signedIn(owner);
    const base = `/cabinet/shops/${owner.shopId}/overview`;
    const today = testApp.clock.now().toISOString().slice(0, 10);

    const standard = await client.get(base);
    expect(standard.statusCode).toBe(200);
    const days = [...tableOf(standard.body, 'payments', 'RUB').keys()];
    expect(days).toHaveLength(30);
    expect(days.at(-1)).toBe(today);

    const yearAgo = new Date(Date.parse(`${today}T00:00:00Z`) - 365 * DAY_MS).toISOString().slice(0, 10);
    const year = await client.get(`${base}?from=${yearAgo}&to=${today}`);
    expect(year.statusCode).toBe(200);
    expect(tableOf(year.body, 'deposits', 'USDT').size).toBe(366);

    const longer = new Date(Date.parse(`${yearAgo}T00:00:00Z`) - DAY_MS).toISOString().slice(0, 10);
    for (const [query, reason] of [
      [`from=${longer}&to=${today}`, 'longer than 366 days'],
      [`from=${today}&to=${yearAgo}`, '“From” is later than “To”'],
      ['from=2026-02-30', '“From” must be a real date'],
      ['to=yesterday', '“To” must be a real date'],
      [`from=${'9'.repeat(500)}`, '“From” must be a real date'],
    ] as const) {
      const refused = await client.get(`${base}?${query}`, { 'accept-language': 'en' });
      expect(refused.statusCode, query).toBe(400);
      expect(refused.body).toContain('notice error');
      expect(refused.body).toContain(reason);
      expect(tableOf(refused.body, 'payments', 'RUB').size).toBe(30);
    }
  });

  it('a viewer sees the balances; a developer gets 403 and no link to the overview', async () => {
    const owner = await createOwner(testApp);
    const viewer = await signedIn(await addMember(testApp, owner, 'viewer'));
    const developer = await signedIn(await addMember(testApp, owner, 'developer'));
    const url = `/cabinet/shops/${owner.shopId}/overview`;
    expect((await viewer.get(url)).statusCode).toBe(200);
    expect((await viewer.get(`/cabinet/shops/${owner.shopId}`)).body).toContain(`href="${url}"`);
    expect((await developer.get(url)).statusCode).toBe(403);
    expect((await developer.get(`/cabinet/shops/${owner.shopId}`)).body).not.toContain(`href="${url}"`);
  });
});

// A stuck transaction must not stall everyone else's payments: every pooled
// PostgreSQL session carries lock_timeout, statement_timeout and
// idle_in_transaction_session_timeout (PAYGATE_DB_*). PGlite is one session
// that serves transactions one after another, so these bounds are PostgreSQL's
// (docs/operations: the embedded database is for one process).
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/app.ts';
import { backends } from '../support/databases.ts';
import { postHelper, postPayment, sandboxShop, type ShopWithKey } from '../payments/payment-test-support.ts';

const onPostgres = backends.includes('postgres');
if (!onPostgres) console.warn('session-timeouts.test.ts: skipped, it needs PostgreSQL (set TEST_DATABASE_URL)');

describe.runIf(onPostgres)('database session timeouts on postgres', () => {
  const apps: TestApp[] = [];

  afterAll(async () => {
    await Promise.all(apps.map((testApp) => testApp.close()));
  });

  async function appWithTimeouts(timeouts: { lockMs: number; idleInTransactionMs: number }): Promise<{ testApp: TestApp; shop: ShopWithKey }> {
    const testApp = await createTestApp('postgres', { config: { databaseTimeouts: { statementMs: 30_000, ...timeouts } } });
    apps.push(testApp);
    const shop = await sandboxShop(testApp);
    // A first paid payment creates the gateway's accounts that every payment credit touches.
    const first = (await postPayment(testApp, shop.key, { amount: 100, currency: 'RUB' })).json();
    expect((await postHelper(testApp, shop.key, first.payment_id, 'pay')).statusCode).toBe(200);
    return { testApp, shop };
  }

  it('a transaction left idle while holding the hot rows is ended by the server, and payments go on', async () => {
    const { testApp, shop } = await appWithTimeouts({ lockMs: 10_000, idleInTransactionMs: 1_000 });
    let locked!: () => void;
    const lockTaken = new Promise<void>((resolve) => (locked = resolve));
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const stuck = testApp.context.db.transaction().execute(async (tx) => {
      await sql`select id from ledger_accounts where merchant_id is null order by id for update`.execute(tx);
      locked();
      await gate; // a caller stuck on something else, its transaction open and idle
    });
    await lockTaken;

    const payment = (await postPayment(testApp, shop.key, { amount: 250, currency: 'RUB' })).json();
    const started = Date.now();
    const paid = await postHelper(testApp, shop.key, payment.payment_id, 'pay').finally(() => setTimeout(release, 0));
    const waited = Date.now() - started;
    expect(paid.statusCode, paid.body).toBe(200);
    expect(paid.json().status).toBe('paid');
    // Bounded by idle_in_transaction_session_timeout (1 s here), not by the stuck caller.
    expect(waited).toBeLessThan(10_000);

    // The server ended the stuck session, so its COMMIT cannot succeed.
    await expect(stuck).rejects.toThrow();
  });

  it("a statement waiting on a busy transaction's lock gives up after lock_timeout with 503 and changes nothing", async () => {
    const { testApp, shop } = await appWithTimeouts({ lockMs: 500, idleInTransactionMs: 60_000 });
    let locked!: () => void;
    const lockTaken = new Promise<void>((resolve) => (locked = resolve));
    const busy = testApp.context.db.transaction().execute(async (tx) => {
      await sql`select id from ledger_accounts where merchant_id is null order by id for update`.execute(tx);
      locked();
      await sql`select pg_sleep(3)`.execute(tx); // busy, not idle: only lock_timeout bounds the others
    });
    await lockTaken;

    const payment = (await postPayment(testApp, shop.key, { amount: 300, currency: 'RUB' })).json();
    const started = Date.now();
    const refused = await postHelper(testApp, shop.key, payment.payment_id, 'pay');
    expect(Date.now() - started).toBeLessThan(2_500);
    await busy;
    expect(refused.statusCode, refused.body).toBe(503);
    expect(refused.json()).toMatchObject({ error: 'service_unavailable' });
    expect(refused.headers['retry-after']).toBeDefined();

    const read = await testApp.app.inject({ method: 'GET', url: `/v1/payments/${payment.payment_id}`, headers: { authorization: `Bearer ${shop.key}` } });
    expect(read.json().status).toBe('pending');
    expect((await postHelper(testApp, shop.key, payment.payment_id, 'pay')).statusCode).toBe(200);
  });
});

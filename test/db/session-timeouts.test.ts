// A stuck transaction must not stall everyone else's payments: every pooled
// PostgreSQL session carries lock_timeout, statement_timeout and
// idle_in_transaction_session_timeout (PAYGATE_DB_*). PGlite is one session
// that serves transactions one after another, so these bounds are PostgreSQL's
// (docs/operations: the embedded database is for one process).
import { sql } from 'kysely';
import { inTransaction, type Tx } from '../../src/db/transaction.ts';
import { ensureAccounts, shardOf, systemAccountKey } from '../../src/ledger/ledger-accounts.ts';
import { afterAll, describe, expect, it } from 'vitest';
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

  async function appWithTimeouts(timeouts: {
    lockMs: number;
    idleInTransactionMs: number;
  }): Promise<{ testApp: TestApp; shop: ShopWithKey }> {
    const testApp = await createTestApp('postgres', {
      config: { databaseTimeouts: { statementMs: 30_000, ...timeouts } },
    });
    apps.push(testApp);
    const shop = await sandboxShop(testApp);
    // A first paid payment creates the gateway's accounts that every payment credit touches.
    const first = (await postPayment(testApp, shop.key, { amount: 100, currency: 'RUB' })).json();
    expect((await postHelper(testApp, shop.key, first.payment_id, 'pay')).statusCode).toBe(200);
    return { testApp, shop };
  }

  /**
   * Opens a transaction that locks the gateway accounts a payment's credit will use (its shard),
   * runs `whileHolding`, then commits; resolves once the locks are held.
   */
  async function holdGatewayShardOf(
    testApp: TestApp,
    paymentId: string,
    whileHolding: (tx: Tx) => Promise<unknown>,
  ): Promise<{ held: Promise<void> }> {
    const shard = shardOf(paymentId);
    const accounts = await inTransaction(testApp.context.db, (tx) =>
      ensureAccounts(tx, testApp.context.clock, [
        systemAccountKey('sandbox', 'settlement', 'RUB', shard),
        systemAccountKey('sandbox', 'fees', 'RUB', shard),
      ]),
    );
    let locked!: () => void;
    const lockTaken = new Promise<void>((resolve) => (locked = resolve));
    const held = testApp.context.db.transaction().execute(async (tx) => {
      await sql`select id from ledger_accounts where id in (${sql.join(accounts.map((account) => account.id))}) order by id for update`.execute(
        tx,
      );
      locked();
      await whileHolding(tx);
    });
    await Promise.race([lockTaken, held]);
    return { held }; // wrapped: an async function would otherwise wait for the promise it returns
  }

  it('a transaction stuck on one shard of the gateway accounts does not delay payments on the others', async () => {
    const { testApp, shop } = await appWithTimeouts({ lockMs: 10_000, idleInTransactionMs: 60_000 });
    const payments = [];
    for (let index = 0; index < 6; index++)
      payments.push((await postPayment(testApp, shop.key, { amount: 10 + index, currency: 'RUB' })).json());
    const stuckPayment = payments[0]!;
    const others = payments.filter((payment) => shardOf(payment.payment_id) !== shardOf(stuckPayment.payment_id));
    expect(others.length).toBeGreaterThan(0);
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const { held: stuck } = await holdGatewayShardOf(testApp, stuckPayment.payment_id, () => gate);
    try {
      for (const payment of others) {
        const started = Date.now();
        const paid = await postHelper(testApp, shop.key, payment.payment_id, 'pay');
        expect(paid.statusCode, paid.body).toBe(200);
        // No lock wait at all: far below the 10 s lock_timeout.
        expect(Date.now() - started).toBeLessThan(2_000);
      }
    } finally {
      release();
      await stuck;
    }
    expect((await postHelper(testApp, shop.key, stuckPayment.payment_id, 'pay')).statusCode).toBe(200);
  });

  it('a transaction left idle while holding the hot rows is ended by the server, and payments go on', async () => {
    const { testApp, shop } = await appWithTimeouts({ lockMs: 10_000, idleInTransactionMs: 1_000 });
    const payment = (await postPayment(testApp, shop.key, { amount: 250, currency: 'RUB' })).json();
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    // A caller stuck on something else, its transaction open and idle, holding this payment's gateway rows.
    const { held: stuck } = await holdGatewayShardOf(testApp, payment.payment_id, () => gate);

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
    const payment = (await postPayment(testApp, shop.key, { amount: 300, currency: 'RUB' })).json();
    // Busy, not idle: only lock_timeout bounds the others.
    const { held: busy } = await holdGatewayShardOf(testApp, payment.payment_id, (tx) =>
      sql`select pg_sleep(3)`.execute(tx),
    );

    const started = Date.now();
    const refused = await postHelper(testApp, shop.key, payment.payment_id, 'pay');
    expect(Date.now() - started).toBeLessThan(2_500);
    await busy;
    expect(refused.statusCode, refused.body).toBe(503);
    expect(refused.json()).toMatchObject({ error: 'service_unavailable' });
    expect(refused.headers['retry-after']).toBeDefined();

    const read = await testApp.app.inject({
      method: 'GET',
      url: `/v1/payments/${payment.payment_id}`,
      headers: { authorization: `Bearer ${shop.key}` },
    });
    expect(read.json().status).toBe('pending');
    expect((await postHelper(testApp, shop.key, payment.payment_id, 'pay')).statusCode).toBe(200);
  });
});

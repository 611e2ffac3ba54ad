// A stuck transaction must not stall everyone else's payments: every pooled
// PostgreSQL session carries lock_timeout, statement_timeout and
// idle_in_transaction_session_timeout (PAYGATE_DB_*). PGlite is one session
// that serves transactions one after another, so these bounds are PostgreSQL's
// (docs/operations: the embedded database is for one process). Each case holds
// its locks until the test lets go, so what is asserted is what the server did
// (which statement it ended, with which error) and in which order, never how
// long anything took.
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

  /** A bound no case reaches: the cases that hold a transaction idle do so until the test lets go. */
  const IDLE_IN_TRANSACTION_UNREACHED_MS = 3_600_000;

  /**
   * Opens a transaction that locks the gateway accounts a payment's credit will use (its shard),
   * runs `whileHolding`, then commits; resolves once the locks are held.
   */
  async function holdGatewayShardOf(
    testApp: TestApp,
    paymentId: string,
    whileHolding: (tx: Tx) => Promise<unknown>,
  ): Promise<{ held: Promise<void>; accountIds: readonly string[] }> {
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
    // wrapped: an async function would otherwise wait for the promise it returns
    return { held, accountIds: accounts.map((account) => account.id) };
  }

  /** A transaction holding an advisory lock on `key` until `release()`, for another to wait on while busy. */
  async function holdAdvisoryLock(testApp: TestApp, key: string): Promise<{ release(): Promise<void> }> {
    let open!: () => void;
    const opened = new Promise<void>((resolve) => (open = resolve));
    let locked!: () => void;
    const lockTaken = new Promise<void>((resolve) => (locked = resolve));
    const held = testApp.context.db.transaction().execute(async (tx) => {
      await sql`select pg_advisory_xact_lock(hashtext(${key}))`.execute(tx);
      locked();
      await opened;
    });
    await Promise.race([lockTaken, held]);
    return {
      async release() {
        open();
        await held;
      },
    };
  }

  it('a transaction stuck on one shard of the gateway accounts does not delay payments on the others', async () => {
    const { testApp, shop } = await appWithTimeouts({
      lockMs: 10_000,
      idleInTransactionMs: IDLE_IN_TRANSACTION_UNREACHED_MS,
    });
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
      // The stuck transaction keeps its locks until the loop is done: a payment that waited on
      // them would end at lock_timeout with a 503, so each 200 here is a payment that did not wait.
      for (const payment of others) {
        const paid = await postHelper(testApp, shop.key, payment.payment_id, 'pay');
        expect(paid.statusCode, paid.body).toBe(200);
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
    let stuckSession: number | undefined;
    const { held: stuck } = await holdGatewayShardOf(testApp, payment.payment_id, async (tx) => {
      stuckSession = (await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(tx)).rows[0]!.pid;
      await gate;
    });

    // The stuck caller lets go only after the payment is answered: a 200 means the server
    // ended its session (idle_in_transaction_session_timeout, 1 s here), well within lock_timeout.
    const paid = await postHelper(testApp, shop.key, payment.payment_id, 'pay').finally(release);
    expect(paid.statusCode, paid.body).toBe(200);
    expect(paid.json().status).toBe('paid');

    // The server ended the stuck session, so its COMMIT cannot succeed.
    const alive = await sql`select pid from pg_stat_activity where pid = ${stuckSession}`.execute(testApp.context.db);
    expect(alive.rows).toEqual([]);
    await expect(stuck).rejects.toThrow('not queryable');
  });

  it("a statement waiting on a busy transaction's lock gives up after lock_timeout with 503 and changes nothing", async () => {
    const { testApp, shop } = await appWithTimeouts({
      lockMs: 500,
      idleInTransactionMs: IDLE_IN_TRANSACTION_UNREACHED_MS,
    });
    const payment = (await postPayment(testApp, shop.key, { amount: 300, currency: 'RUB' })).json();
    const gate = await holdAdvisoryLock(testApp, payment.payment_id);
    // Busy, not idle: its statement waits on the gate (with no timeout of its own) until the
    // test lets go, so only lock_timeout bounds the others.
    const { held: busy, accountIds } = await holdGatewayShardOf(testApp, payment.payment_id, async (tx) => {
      await sql`set local lock_timeout = 0`.execute(tx);
      await sql`set local statement_timeout = 0`.execute(tx);
      await sql`select pg_advisory_xact_lock(hashtext(${payment.payment_id}))`.execute(tx);
    });
    let busyEnded = false;
    busy.then(
      () => (busyEnded = true),
      () => undefined,
    );

    const refused = await postHelper(testApp, shop.key, payment.payment_id, 'pay');
    // A statement on the same rows is ended by the server's lock_timeout (55P03 lock_not_available).
    await expect(
      sql`select id from ledger_accounts where id in (${sql.join(accountIds)}) for update`.execute(testApp.context.db),
    ).rejects.toMatchObject({ code: '55P03' });
    // Both gave up while the busy transaction still held the rows.
    expect(busyEnded).toBe(false);
    await gate.release();
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

// The database goes away under a running gateway: requests answer 503
// service_unavailable with Retry-After (not 500), /readyz says not ready, and a
// payment retried with its Idempotency-Key right after the outage is created,
// not refused for 30 s because the failed request could not release its claim.
// PostgreSQL: the connection runs through a TCP relay the test cuts (a restart or
// a network break). PGlite lives in the process: its outage is its handle closing.
import type { LightMyRequestResponse } from 'fastify';
import { sql } from 'kysely';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.ts';
import type { AppContext } from '../../src/context.ts';
import { openDatabase, type DatabaseBackend } from '../../src/db/database.ts';
import { createMerchant } from '../../src/merchants/merchant-service.ts';
import { buildTestApp, createTestContext } from '../support/app.ts';
import { backends } from '../support/databases.ts';
import { eventually } from '../support/eventually.ts';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.ts';

interface Gateway {
  readonly app: App;
  readonly context: AppContext;
  /** The test database itself, not through the relay. */
  readonly directUrl: string | undefined;
  readonly proxy: TcpProxy | undefined;
  readonly key: string;
  close(): Promise<void>;
}

async function startGateway(backend: DatabaseBackend): Promise<Gateway> {
  const { context: direct, database } = await createTestContext(backend);
  const proxy = database.url ? await startTcpProxy(database.url) : undefined;
  const relayed = proxy ? await openDatabase({ url: proxy.url, poolSize: 4 }) : undefined;
  const context: AppContext = relayed ? { ...direct, db: relayed.db } : direct;
  const app = await buildTestApp(context);
  await app.ready();
  const merchant = await createMerchant(context, {
    name: 'Outage shop',
    email: `outage-${crypto.randomUUID()}@example.test`,
  });
  return {
    app,
    context,
    directUrl: database.url,
    proxy,
    key: merchant.api_key,
    async close() {
      await app.close();
      await relayed?.close();
      await proxy?.close();
      await database.close().catch(() => undefined);
    },
  };
}

describe.each(backends)('the database becomes unreachable on %s', (backend) => {
  let gateway: Gateway | undefined;
  afterEach(async () => {
    await gateway?.close();
    gateway = undefined;
  });

  const account = (g: Gateway) =>
    g.app.inject({ method: 'GET', url: '/v1/account', headers: { authorization: `Bearer ${g.key}` } });
  const createPayment = (g: Gateway, idempotencyKey: string) =>
    g.app.inject({
      method: 'POST',
      url: '/v1/payments',
      headers: {
        authorization: `Bearer ${g.key}`,
        'content-type': 'application/json',
        'idempotency-key': idempotencyKey,
      },
      payload: JSON.stringify({ amount: 250, currency: 'RUB', order_id: 'outage-1' }),
    });

  async function goDown(g: Gateway): Promise<void> {
    if (g.proxy) await g.proxy.cut();
    else await g.context.db.destroy();
  }

  it('requests answer 503 service_unavailable with Retry-After and /readyz says not ready', async () => {
    gateway = await startGateway(backend);
    expect((await account(gateway)).statusCode).toBe(200);
    await goDown(gateway);

    const refused = await account(gateway);
    expect(refused.statusCode).toBe(503);
    expect(refused.headers['retry-after']).toBe('5');
    expect(refused.json()).toEqual({
      error: 'service_unavailable',
      message: 'The database is not reachable right now; repeat the request in a few seconds.',
      request_id: refused.headers['x-request-id'],
    });
    const ready = await gateway.app.inject({ method: 'GET', url: '/readyz' });
    expect(ready.statusCode).toBe(503);
    expect(ready.headers['retry-after']).toBe('5');
    expect(ready.json()).toMatchObject({ error: 'service_unavailable' });

    if (!gateway.proxy) return; // a closed PGlite handle does not come back
    await gateway.proxy.restore();
    expect((await gateway.app.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(200);
    expect((await account(gateway)).statusCode).toBe(200);
  });

  it('a payment retried with its Idempotency-Key right after an outage mid-request is created once, without a 409', async () => {
    gateway = await startGateway(backend);
    const g = gateway;
    const restore = g.directUrl
      ? await breakRelayDuringPaymentInsert(g, () => createPayment(g, 'outage-key'))
      : await failPaymentInsertOnPGlite(g, () => createPayment(g, 'outage-key'));

    await restore();
    const retried = await createPayment(g, 'outage-key');
    expect(retried.statusCode, retried.body).toBe(201);
    const replayed = await createPayment(g, 'outage-key');
    expect(replayed.statusCode).toBe(201);
    expect(replayed.body).toBe(retried.body);
    const list = await g.app.inject({
      method: 'GET',
      url: '/v1/payments',
      headers: { authorization: `Bearer ${g.key}` },
    });
    expect(list.json().data.map((payment: { payment_id: string }) => payment.payment_id)).toEqual([
      retried.json().payment_id,
    ]);
  });
});

/**
 * PostgreSQL: the payment's INSERT waits on an advisory lock the test holds;
 * meanwhile the relay is cut, so the request loses its connection mid-transaction
 * and cannot release its claim either. Returns how to bring the database back.
 */
async function breakRelayDuringPaymentInsert(
  g: Gateway,
  send: () => Promise<LightMyRequestResponse>,
): Promise<() => Promise<void>> {
  const admin = new pg.Client({ connectionString: g.directUrl });
  await admin.connect();
  await admin.query(`
    create function test_wait_for_outage() returns trigger language plpgsql as $$
    begin perform pg_advisory_xact_lock(4242); return new; end $$;
    create trigger test_wait_for_outage before insert on payments for each row execute function test_wait_for_outage();`);
  await admin.query('select pg_advisory_lock(4242)');
  const pending = send();
  await eventually(
    async () =>
      (await admin.query(`select count(*)::int as n from pg_locks where locktype = 'advisory' and not granted`)).rows[0]
        .n as number,
    (waiting) => waiting === 1,
  );
  await g.proxy!.cut();
  const failed = await pending;
  expect(failed.statusCode).toBe(503);
  expect(failed.headers['retry-after']).toBe('5');
  return async () => {
    await admin.query('select pg_advisory_unlock(4242)');
    await admin.query('drop trigger test_wait_for_outage on payments; drop function test_wait_for_outage()');
    await admin.end();
    await g.proxy!.restore();
  };
}

/**
 * PGlite: the server's own "terminating connection due to administrator command"
 * (SQLSTATE 57P01) is raised by the payment's INSERT, which carries the
 * idempotency record with it, as when the server shuts down mid-statement. Returns how to end it.
 */
async function failPaymentInsertOnPGlite(
  g: Gateway,
  send: () => Promise<LightMyRequestResponse>,
): Promise<() => Promise<void>> {
  await sql`
    create function test_shutdown() returns trigger language plpgsql as $$
    begin raise exception 'terminating connection due to administrator command' using errcode = 'admin_shutdown'; end $$`.execute(
    g.context.db,
  );
  await sql`create trigger test_shutdown before insert on payments for each row execute function test_shutdown()`.execute(
    g.context.db,
  );
  const failed = await send();
  expect(failed.statusCode).toBe(503);
  expect(failed.headers['retry-after']).toBe('5');
  return async () => {
    await sql`drop trigger test_shutdown on payments`.execute(g.context.db);
  };
}

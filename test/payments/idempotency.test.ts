// Idempotency-Key on POST /v1/payments: rules 1–5 of spec 4.1.
import { sql } from 'kysely';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createIdempotencyPurgeWorker } from '../../src/idempotency/idempotency-purge-worker.ts';
import { backends } from '../support/databases.ts';
import { createTestApp, type TestApp } from '../support/app.ts';
import { postPayment, sandboxShop, type ShopWithKey } from './payment-test-support.ts';

async function paymentsOfShop(testApp: TestApp, shopId: string): Promise<string[]> {
  const rows = await testApp.context.db.selectFrom('payments').select('id').where('shop_id', '=', shopId).execute();
  return rows.map((row) => row.id);
}

describe.each(backends)('Idempotency-Key on %s', (backend) => {
  let testApp: TestApp;
  let shop: ShopWithKey;
  const body = { amount: 250, currency: 'RUB', order_id: 'A-1' };

  beforeAll(async () => {
    testApp = await createTestApp(backend);
  });
  beforeEach(async () => {
    shop = await sandboxShop(testApp);
  });
  afterAll(async () => testApp.close());

  it('same key and same body within 24 h returns the same status and byte-identical body, and no second payment', async () => {
    const first = await postPayment(testApp, shop.key, body, { 'idempotency-key': 'k-1' });
    testApp.clock.advance(23 * 3_600_000);
    const second = await postPayment(testApp, shop.key, body, { 'idempotency-key': 'k-1' });
    expect(first.statusCode).toBe(201);
    expect(second.statusCode).toBe(201);
    expect(second.body).toBe(first.body);
    expect(await paymentsOfShop(testApp, shop.shopId)).toEqual([first.json().payment_id]);
  });

  it('compares bodies as canonical JSON: key order and number spelling do not matter', async () => {
    const first = await postPayment(testApp, shop.key, '{"amount":10.1,"currency":"RUB"}', {
      'idempotency-key': 'k-order',
    });
    const second = await postPayment(testApp, shop.key, '{"currency":"RUB","amount":10.10}', {
      'idempotency-key': 'k-order',
    });
    expect(second.statusCode).toBe(201);
    expect(second.body).toBe(first.body);
  });

  it('compares the request as understood: an explicit null and an absent field are the same request', async () => {
    const first = await postPayment(
      testApp,
      shop.key,
      '{"amount":300,"currency":"RUB","method":null,"order_id":null}',
      { 'idempotency-key': 'k-null' },
    );
    const second = await postPayment(testApp, shop.key, '{"amount":300.00,"currency":"RUB"}', {
      'idempotency-key': 'k-null',
    });
    expect(first.statusCode).toBe(201);
    expect(second.statusCode, second.body).toBe(201);
    expect(second.body).toBe(first.body);
    const bound = await postPayment(testApp, shop.key, '{"amount":300,"currency":"RUB","method":"card"}', {
      'idempotency-key': 'k-null',
    });
    expect(bound.statusCode).toBe(409);
    expect(await paymentsOfShop(testApp, shop.shopId)).toHaveLength(1);
  });

  it('the purge worker deletes records past their 24 h window and keeps the fresh ones', async () => {
    await postPayment(testApp, shop.key, body, { 'idempotency-key': 'k-old' });
    testApp.clock.advance(25 * 3_600_000);
    await postPayment(testApp, shop.key, body, { 'idempotency-key': 'k-fresh' });
    expect(await createIdempotencyPurgeWorker(testApp.context).runOnce()).toBeGreaterThanOrEqual(1);
    const keys = await testApp.context.db
      .selectFrom('idempotency_records')
      .select('key')
      .where('shop_id', '=', shop.shopId)
      .execute();
    expect(keys.map((row) => row.key)).toEqual(['k-fresh']);
  });

  it('same key with a different body is 409 duplicate_external_id and creates nothing', async () => {
    await postPayment(testApp, shop.key, body, { 'idempotency-key': 'k-2' });
    const response = await postPayment(testApp, shop.key, { ...body, amount: 251 }, { 'idempotency-key': 'k-2' });
    expect(response.statusCode).toBe(409);
    expect(response.json().error).toBe('duplicate_external_id');
    expect(await paymentsOfShop(testApp, shop.shopId)).toHaveLength(1);
  });

  it('a request that failed with 500 leaves no record, so its repeat creates the payment', async () => {
    // A trigger in this test's own database makes the payment insert fail once, like a crash mid-request.
    await sql
      .raw(
        `create or replace function paygate_test_fail_insert() returns trigger language plpgsql as $$
         begin if new.order_id = 'boom' then raise exception 'simulated failure'; end if; return new; end $$`,
      )
      .execute(testApp.context.db);
    await sql
      .raw(
        `create trigger paygate_test_fail before insert on payments for each row execute function paygate_test_fail_insert();`,
      )
      .execute(testApp.context.db);
    const failing = { ...body, order_id: 'boom' };
    const failed = await postPayment(testApp, shop.key, failing, { 'idempotency-key': 'k-500' });
    expect(failed.statusCode).toBe(500);
    expect(failed.json().error).toBe('internal_error');
    await sql.raw('drop trigger paygate_test_fail on payments').execute(testApp.context.db);
    const record = await testApp.context.db
      .selectFrom('idempotency_records')
      .selectAll()
      .where('shop_id', '=', shop.shopId)
      .where('key', '=', 'k-500')
      .executeTakeFirst();
    expect(record).toBeUndefined();
    const repeat = await postPayment(testApp, shop.key, failing, { 'idempotency-key': 'k-500' });
    expect(repeat.statusCode).toBe(201);
    expect(await paymentsOfShop(testApp, shop.shopId)).toEqual([repeat.json().payment_id]);
  });

  it('after 24 h the key is new: a different body creates a new payment', async () => {
    const first = await postPayment(testApp, shop.key, body, { 'idempotency-key': 'k-old' });
    testApp.clock.advance(24 * 3_600_000);
    const later = await postPayment(testApp, shop.key, { ...body, amount: 300 }, { 'idempotency-key': 'k-old' });
    expect(later.statusCode).toBe(201);
    expect(later.json().payment_id).not.toBe(first.json().payment_id);
    expect(await paymentsOfShop(testApp, shop.shopId)).toHaveLength(2);
  });

  it('a new key, or no key, creates a new payment every time', async () => {
    await postPayment(testApp, shop.key, body, { 'idempotency-key': 'k-a' });
    await postPayment(testApp, shop.key, body, { 'idempotency-key': 'k-b' });
    await postPayment(testApp, shop.key, body);
    await postPayment(testApp, shop.key, body);
    expect(await paymentsOfShop(testApp, shop.shopId)).toHaveLength(4);
  });

  it('keys are scoped to the shop: another shop may use the same key', async () => {
    const other = await sandboxShop(testApp);
    const mine = await postPayment(testApp, shop.key, body, { 'idempotency-key': 'shared' });
    const theirs = await postPayment(testApp, other.key, { ...body, amount: 999 }, { 'idempotency-key': 'shared' });
    expect(theirs.statusCode).toBe(201);
    expect(theirs.json().payment_id).not.toBe(mine.json().payment_id);
  });

  it('accepts a key of 255 characters and refuses 256 or an empty key with 400', async () => {
    expect((await postPayment(testApp, shop.key, body, { 'idempotency-key': 'k'.repeat(255) })).statusCode).toBe(201);
    for (const key of ['k'.repeat(256), '']) {
      const response = await postPayment(testApp, shop.key, body, { 'idempotency-key': key });
      expect(response.statusCode).toBe(400);
      expect(response.json().error).toBe('invalid_request');
      expect(response.json().message).toContain('idempotency-key');
    }
  });

  it('a refused request (method_unavailable) stores nothing under the key', async () => {
    const refused = await postPayment(
      testApp,
      shop.key,
      { ...body, method: 'bitcoin' },
      { 'idempotency-key': 'k-refused' },
    );
    expect(refused.json().error).toBe('method_unavailable');
    const again = await postPayment(testApp, shop.key, body, { 'idempotency-key': 'k-refused' });
    expect(again.statusCode).toBe(201);
  });
});

describe.runIf(backends.includes('postgres'))('Idempotency-Key under real concurrency on PostgreSQL', () => {
  let testApp: TestApp;

  beforeAll(async () => {
    testApp = await createTestApp('postgres');
  });
  afterAll(async () => testApp.close());

  it('50 simultaneous identical requests create exactly one payment; each answer is that payment or 409 invalid_request', async () => {
    const shop = await sandboxShop(testApp);
    const body = { amount: 777.77, currency: 'RUB' };
    const responses = await Promise.all(
      Array.from({ length: 50 }, () => postPayment(testApp, shop.key, body, { 'idempotency-key': 'race' })),
    );
    const payments = await paymentsOfShop(testApp, shop.shopId);
    expect(payments).toHaveLength(1);
    const created = responses.filter((response) => response.statusCode === 201);
    expect(created.length).toBeGreaterThanOrEqual(1);
    for (const response of created) expect(response.json().payment_id).toBe(payments[0]);
    expect(new Set(created.map((response) => response.body)).size).toBe(1);
    for (const response of responses.filter((candidate) => candidate.statusCode !== 201)) {
      expect(response.statusCode).toBe(409);
      expect(response.json().error).toBe('invalid_request');
    }
  });
});

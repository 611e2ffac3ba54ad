// The idempotency module on its own: its ways to create under a key, the
// two replay rules (spec 4.1's stored response, spec 4.2's existing resource),
// windows and the purge — on a real database, with a table of "widgets"
// made for the test as the resource.
import { sql, type QueryCreator } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.ts';
import type { Database } from '../../src/db/schema.ts';
import { DuplicateExternalIdError } from '../../src/errors.ts';
import {
  createAtomically,
  findPrior,
  inIdempotentTransaction,
  purgeExpiredRecords,
  recordCreated,
  type IdempotencyRule,
  type KeyedRequest,
} from '../../src/idempotency/idempotency-service.ts';
import { canonicalJson, requestFingerprint } from '../../src/idempotency/request-fingerprint.ts';
import { backends, openTestDatabase, type TestDatabase } from '../support/databases.ts';

const HOUR = 3_600_000;
const windowed: IdempotencyRule = {
  operation: 'widget.create',
  windowMs: 24 * HOUR,
  replay: 'stored-response',
  conflictMessage: 'widget key reused',
};
const permanent: IdempotencyRule = {
  operation: 'widget.order',
  windowMs: null,
  replay: 'current-resource',
  conflictMessage: 'widget external_id reused',
};

/** A widget insert as a resource; `name` is unique, so a clash on it is the resource's own error. */
function insertWidget(id: string, name: string) {
  return (creator: QueryCreator<Database>) =>
    (creator as unknown as QueryCreator<{ test_widgets: { id: string; name: string } }>)
      .insertInto('test_widgets')
      .values({ id, name });
}

describe('request fingerprints', () => {
  it('are the same whatever the key order, and differ when a value does', () => {
    expect(requestFingerprint({ a: 1, b: 'x', c: null })).toBe(requestFingerprint({ c: null, b: 'x', a: 1 }));
    expect(requestFingerprint({ a: 1, b: 'x', c: null })).not.toBe(requestFingerprint({ a: 1, b: 'x', c: 'y' }));
    expect(requestFingerprint({ amount: 1050n })).toBe(requestFingerprint({ amount: '1050' }));
    expect(canonicalJson({ z: [{ b: 1, a: 2 }], y: true })).toBe('{"y":true,"z":[{"a":2,"b":1}]}');
  });

  it('refuse an undefined field: a normalizer must say null', () => {
    expect(() => requestFingerprint({ method: undefined })).toThrow(/normalize absent fields to null/);
  });
});

describe.each(backends)('idempotency module on %s', (backend) => {
  let database: TestDatabase;
  const clock = new ManualClock(new Date('2026-11-01T10:00:00.000Z'));
  let shopCounter = 0;

  async function newShop(): Promise<string> {
    shopCounter++;
    const now = clock.now();
    const merchantId = `mer_idem_${shopCounter}`;
    await database.db
      .insertInto('merchants')
      .values({ id: merchantId, name: 'M', email: `m${shopCounter}@example.test`, created_at: now })
      .execute();
    const shopId = `shop_idem_${shopCounter}`;
    await database.db
      .insertInto('shops')
      .values({ id: shopId, merchant_id: merchantId, name: 'S', created_at: now })
      .execute();
    return shopId;
  }

  async function widgets(): Promise<string[]> {
    const result = await sql<{ id: string }>`select id from test_widgets order by id`.execute(database.db);
    return result.rows.map((row) => row.id);
  }

  async function records(shopId: string) {
    return database.db
      .selectFrom('idempotency_records')
      .selectAll()
      .where('shop_id', '=', shopId)
      .orderBy('key')
      .execute();
  }

  beforeAll(async () => {
    database = await openTestDatabase(backend);
    await sql`create table test_widgets (id text primary key, name text not null unique)`.execute(database.db);
  });
  afterAll(async () => database?.close());

  describe('createAtomically', () => {
    it('creates the resource and its record together, and replays the stored response byte for byte', async () => {
      const shopId = await newShop();
      const request: KeyedRequest = { shopId, key: 'k1', fingerprint: requestFingerprint({ name: 'a1' }) };
      const first = await createAtomically(
        database.db,
        clock,
        windowed,
        request,
        { resourceId: 'w-a1', response: { status: 201, body: '{"id":"w-a1"}' } },
        insertWidget('w-a1', 'a1'),
      );
      expect(first).toEqual({ kind: 'created' });
      const again = await createAtomically(
        database.db,
        clock,
        windowed,
        request,
        { resourceId: 'w-a1b', response: { status: 201, body: '{"id":"w-a1b"}' } },
        insertWidget('w-a1b', 'a1b'),
      );
      expect(again).toEqual({ kind: 'replay', response: { status: 201, body: '{"id":"w-a1"}' } });
      expect(await widgets()).toContain('w-a1');
      expect(await widgets()).not.toContain('w-a1b');
    });

    it('a different fingerprint under the key is 409 duplicate_external_id with the rule’s message, and creates nothing', async () => {
      const shopId = await newShop();
      await createAtomically(
        database.db,
        clock,
        windowed,
        { shopId, key: 'k', fingerprint: 'f1' },
        { resourceId: 'w-b1', response: { status: 201, body: '{}' } },
        insertWidget('w-b1', 'b1'),
      );
      const attempt = createAtomically(
        database.db,
        clock,
        windowed,
        { shopId, key: 'k', fingerprint: 'f2' },
        { resourceId: 'w-b2', response: { status: 201, body: '{}' } },
        insertWidget('w-b2', 'b2'),
      );
      await expect(attempt).rejects.toBeInstanceOf(DuplicateExternalIdError);
      await expect(attempt).rejects.toThrow('widget key reused');
      expect(await widgets()).not.toContain('w-b2');
    });

    it('a failing resource insert writes no record, so the key stays free', async () => {
      const shopId = await newShop();
      await createAtomically(
        database.db,
        clock,
        windowed,
        { shopId, key: 'first', fingerprint: 'f' },
        { resourceId: 'w-c1', response: { status: 201, body: '{}' } },
        insertWidget('w-c1', 'c1'),
      );
      const clash = createAtomically(
        database.db,
        clock,
        windowed,
        { shopId, key: 'second', fingerprint: 'f' },
        { resourceId: 'w-c2', response: { status: 201, body: '{}' } },
        insertWidget('w-c2', 'c1'),
      );
      await expect(clash).rejects.toMatchObject({ code: '23505' });
      expect((await records(shopId)).map((record) => record.key)).toEqual(['first']);
    });

    it('once the window is over the key is new: another request under it creates again', async () => {
      const shopId = await newShop();
      await createAtomically(
        database.db,
        clock,
        windowed,
        { shopId, key: 'k', fingerprint: 'f1' },
        { resourceId: 'w-d1', response: { status: 201, body: '1' } },
        insertWidget('w-d1', 'd1'),
      );
      clock.advance(24 * HOUR);
      const later = await createAtomically(
        database.db,
        clock,
        windowed,
        { shopId, key: 'k', fingerprint: 'f2' },
        { resourceId: 'w-d2', response: { status: 201, body: '2' } },
        insertWidget('w-d2', 'd2'),
      );
      expect(later).toEqual({ kind: 'created' });
      expect((await records(shopId)).map((record) => record.resource_id)).toEqual(['w-d2']);
    });

    it('a permanent (external_id) rule names the existing resource, even a year later', async () => {
      const shopId = await newShop();
      const request = { shopId, key: 'order-7', fingerprint: 'f' };
      await createAtomically(
        database.db,
        clock,
        permanent,
        request,
        { resourceId: 'w-e1' },
        insertWidget('w-e1', 'e1'),
      );
      clock.advance(365 * 24 * HOUR);
      expect(
        await createAtomically(
          database.db,
          clock,
          permanent,
          request,
          { resourceId: 'w-e2' },
          insertWidget('w-e2', 'e2'),
        ),
      ).toEqual({ kind: 'existing', resourceId: 'w-e1' });
    });

    it('keys of different operations and of different shops never meet', async () => {
      const shopA = await newShop();
      const shopB = await newShop();
      const created = (shopId: string, rule: IdempotencyRule, id: string) =>
        createAtomically(
          database.db,
          clock,
          rule,
          { shopId, key: 'same', fingerprint: id },
          { resourceId: id, response: { status: 201, body: id } },
          insertWidget(id, id),
        );
      expect(await created(shopA, windowed, 'w-f1')).toEqual({ kind: 'created' });
      expect(await created(shopA, permanent, 'w-f2')).toEqual({ kind: 'created' });
      expect(await created(shopB, windowed, 'w-f3')).toEqual({ kind: 'created' });
    });

    it('a stored-response rule refuses to record a create without its response', async () => {
      const shopId = await newShop();
      await expect(
        createAtomically(
          database.db,
          clock,
          windowed,
          { shopId, key: 'k', fingerprint: 'f' },
          { resourceId: 'w-g1' },
          insertWidget('w-g1', 'g1'),
        ),
      ).rejects.toThrow(/no response was given/);
      expect(await widgets()).not.toContain('w-g1');
    });
  });

  describe('findPrior + recordCreated in one transaction', () => {
    it('the first transaction creates and records; a repeat finds it; other parameters are 409', async () => {
      const shopId = await newShop();
      const request = { shopId, key: 'ext-1', fingerprint: 'f' };
      const create = () =>
        inIdempotentTransaction(database.db, async (tx) => {
          const prior = await findPrior(tx, clock, permanent, request);
          if (prior) return prior;
          await insertWidget('w-h1', 'h1')(tx).execute();
          await recordCreated(tx, clock, permanent, request, { resourceId: 'w-h1' });
          return { kind: 'created' as const };
        });
      expect(await create()).toEqual({ kind: 'created' });
      expect(await create()).toEqual({ kind: 'existing', resourceId: 'w-h1' });
      await expect(
        inIdempotentTransaction(database.db, (tx) =>
          findPrior(tx, clock, permanent, { ...request, fingerprint: 'other' }),
        ),
      ).rejects.toBeInstanceOf(DuplicateExternalIdError);
    });

    it('a transaction that fails after its work leaves neither the resource nor a record', async () => {
      const shopId = await newShop();
      const request = { shopId, key: 'ext-2', fingerprint: 'f' };
      await expect(
        inIdempotentTransaction(database.db, async (tx) => {
          await insertWidget('w-i1', 'i1')(tx).execute();
          await recordCreated(tx, clock, permanent, request, { resourceId: 'w-i1' });
          throw new Error('boom after the record');
        }),
      ).rejects.toThrow('boom after the record');
      expect(await records(shopId)).toEqual([]);
      expect(await widgets()).not.toContain('w-i1');
    });
  });

  it('the purge deletes windowed records past their window, never permanent ones', async () => {
    const shopId = await newShop();
    await createAtomically(
      database.db,
      clock,
      windowed,
      { shopId, key: 'old', fingerprint: 'f' },
      { resourceId: 'w-k1', response: { status: 201, body: '' } },
      insertWidget('w-k1', 'k1'),
    );
    await createAtomically(
      database.db,
      clock,
      permanent,
      { shopId, key: 'forever', fingerprint: 'f' },
      { resourceId: 'w-k2' },
      insertWidget('w-k2', 'k2'),
    );
    clock.advance(25 * HOUR);
    await createAtomically(
      database.db,
      clock,
      windowed,
      { shopId, key: 'fresh', fingerprint: 'f' },
      { resourceId: 'w-k3', response: { status: 201, body: '' } },
      insertWidget('w-k3', 'k3'),
    );
    let purged = 0;
    for (let deleted = -1; deleted !== 0;) purged += deleted = await purgeExpiredRecords(database.db, clock.now(), 2);
    expect(purged).toBeGreaterThanOrEqual(1);
    expect((await records(shopId)).map((record) => record.key)).toEqual(['forever', 'fresh']);
  });
});

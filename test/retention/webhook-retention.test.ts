// Webhook events age out in archived batches: an event goes with its delivery
// and attempts once it is past retention and its delivery has been final for as
// long; a delivery still retrying is never removed, and an event resent inside
// the retention stays retrievable and resendable.
import { sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { inTransaction } from '../../src/db/transaction.ts';
import { createDeliveryWorker } from '../../src/webhooks/delivery-worker.ts';
import { emit } from '../../src/webhooks/outbox.ts';
import { backends } from '../support/databases.ts';
import { startReceiver, type Receiver } from '../webhooks/receiver.ts';
import { createRetentionTestApp, type RetentionTestApp } from './retention-support.ts';

describe.each(backends)('webhook retention on %s', (backend) => {
  let testApp: RetentionTestApp;
  let receiver: Receiver;
  beforeEach(async () => {
    testApp = await createRetentionTestApp(backend, { auditMonths: 12, webhookDays: 30 });
    receiver = await startReceiver();
  });
  afterEach(async () => {
    await receiver.close();
    await testApp.close();
  });

  async function emitAt(at: string, shopId: string, destination: string | null): Promise<string> {
    testApp.clock.set(new Date(at));
    const event = await inTransaction(testApp.context.db, (tx) =>
      emit(tx, testApp.clock, { shopId, type: 'payment.paid', data: { at }, destination }),
    );
    return event.id;
  }

  async function drainAt(at: string) {
    testApp.clock.set(new Date(at));
    const worker = createDeliveryWorker(testApp.context, { concurrency: 2 });
    try {
      await worker.drain();
    } finally {
      await worker.stop();
    }
  }

  const call = (key: string, method: 'GET' | 'POST', url: string) =>
    testApp.app.inject({ method, url, headers: { authorization: `Bearer ${key}` } });

  it('archives settled events with their deliveries and attempts, keeping retrying and recently resent ones', async () => {
    const merchant = await testApp.createMerchant();
    receiver.handler = () => ({ status: 200 });
    const delivered = await emitAt('2026-01-10T10:00:00.000Z', merchant.shop_id, receiver.url);
    const unsent = await emitAt('2026-01-10T10:00:01.000Z', merchant.shop_id, null);
    const resent = await emitAt('2026-01-10T10:00:02.000Z', merchant.shop_id, receiver.url);
    await drainAt('2026-01-10T10:00:03.000Z');
    receiver.handler = () => ({ status: 500 });
    const retrying = await emitAt('2026-01-10T10:00:04.000Z', merchant.shop_id, receiver.url);
    await drainAt('2026-01-10T10:00:05.000Z');

    // Resent inside the retention (and delivered): its 30 days count from then. The other keeps failing.
    receiver.handler = (request) => ({ status: request.body.includes(retrying) ? 500 : 200 });
    testApp.clock.set(new Date('2026-02-05T00:00:00.000Z'));
    expect((await call(merchant.api_key, 'POST', `/v1/webhooks/events/${resent}/resend`)).statusCode).toBe(202);
    await drainAt('2026-02-05T00:00:01.000Z');

    const archivedIds = [delivered, unsent];
    const expected = {
      events: await testApp.rowsAsJson(
        sql`select * from webhook_events where id = any(${archivedIds}::text[]) order by created_at, id`,
      ),
      deliveries: await testApp.rowsAsJson(
        sql`select * from webhook_deliveries where event_id = any(${archivedIds}::text[]) order by created_at, id`,
      ),
      attempts: await testApp.rowsAsJson(
        sql`select * from webhook_attempts where event_id = any(${archivedIds}::text[]) order by started_at, id`,
      ),
    };
    expect([expected.events.length, expected.deliveries.length, expected.attempts.length]).toEqual([2, 1, 1]);

    testApp.clock.set(new Date('2026-02-20T00:00:00.000Z'));
    const report = await testApp.run();
    expect(report.ran && report.archived.map((file) => [file.fileName, file.rowCount])).toEqual([
      [`webhook_events-2026-01-${delivered}.jsonl.gz`, 2],
      [`webhook_deliveries-2026-01-${delivered}.jsonl.gz`, 1],
      [`webhook_attempts-2026-01-${delivered}.jsonl.gz`, 1],
    ]);
    expect(await testApp.archivedRows(`webhook_events-2026-01-${delivered}.jsonl.gz`)).toEqual(expected.events);
    expect(await testApp.archivedRows(`webhook_deliveries-2026-01-${delivered}.jsonl.gz`)).toEqual(expected.deliveries);
    expect(await testApp.archivedRows(`webhook_attempts-2026-01-${delivered}.jsonl.gz`)).toEqual(expected.attempts);

    expect((await call(merchant.api_key, 'GET', `/v1/webhooks/events/${delivered}`)).statusCode).toBe(404);
    expect((await call(merchant.api_key, 'GET', `/v1/webhooks/events/${unsent}`)).statusCode).toBe(404);
    // Still retrying: kept however old, with its attempts.
    const stillRetrying = await call(merchant.api_key, 'GET', `/v1/webhooks/events/${retrying}`);
    expect(stillRetrying.json()).toMatchObject({ id: retrying, status: 'pending', attempt_count: 2 });
    expect((await call(merchant.api_key, 'GET', `/v1/webhooks/events/${retrying}/attempts`)).json().data).toHaveLength(
      2,
    );
    // Resent 15 days ago: retrievable and resendable.
    expect((await call(merchant.api_key, 'GET', `/v1/webhooks/events/${resent}/attempts`)).json().data).toHaveLength(2);
    expect((await call(merchant.api_key, 'POST', `/v1/webhooks/events/${resent}/resend`)).json()).toMatchObject({
      id: resent,
      status: 'pending',
    });

    // A second run finds nothing more past retention.
    const again = await testApp.run();
    expect(again.ran && again.archived).toEqual([]);
  });

  it('a run stopped between the archive and the removal, run again, archives each row once', async () => {
    const merchant = await testApp.createMerchant();
    const ids = [
      await emitAt('2026-01-10T10:00:00.000Z', merchant.shop_id, null),
      await emitAt('2026-01-10T10:00:01.000Z', merchant.shop_id, null),
    ];
    const expected = await testApp.rowsAsJson(
      sql`select * from webhook_events where id = any(${ids}::text[]) order by created_at, id`,
    );
    testApp.clock.set(new Date('2026-03-01T00:00:00.000Z'));
    await expect(
      testApp.run({
        afterArchive: () => {
          throw new Error('stopped between the archive and the removal');
        },
      }),
    ).rejects.toThrow('stopped between the archive and the removal');
    const eventsFile = `webhook_events-2026-01-${ids[0]}.jsonl.gz`;
    expect(await testApp.archiveFiles()).toContain(eventsFile);
    expect(
      await testApp.rowsAsJson(
        sql`select * from webhook_events where id = any(${ids}::text[]) order by created_at, id`,
      ),
    ).toEqual(expected);

    const rerun = await testApp.run();
    expect(rerun.ran && rerun.discarded).toContain(eventsFile);
    expect(await testApp.archiveFiles()).toEqual(
      [
        eventsFile,
        `webhook_deliveries-2026-01-${ids[0]}.jsonl.gz`,
        `webhook_attempts-2026-01-${ids[0]}.jsonl.gz`,
      ].sort(),
    );
    expect(await testApp.archivedRows(eventsFile)).toEqual(expected);
    const records = await testApp.context.db
      .selectFrom('retention_archives')
      .select(['file_name', 'state', 'row_count'])
      .where('table_name', '=', 'webhook_events')
      .execute();
    expect(records).toEqual([{ file_name: eventsFile, state: 'archived', row_count: 2n }]);
    const left = await sql`select id from webhook_events where id = any(${ids}::text[])`.execute(testApp.context.db);
    expect(left.rows).toEqual([]);
  });
});

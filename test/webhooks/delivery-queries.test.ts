// The engine's two hot statements must cost in proportion to the batch, not to
// the table: right after a burst the table has no statistics yet, which is when
// a planner left to itself reads every due row on each claim and scans the whole
// table on each record. The per-transaction statistics views count what one
// statement read, on both backends.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/clock.ts';
import { inTransaction, type Executor } from '../../src/db/transaction.ts';
import { emit } from '../../src/webhooks/outbox.ts';
import { claimDueDeliveries, recordAttempts } from '../../src/webhooks/webhook-repository.ts';
import { newId } from '../../src/ids.ts';
import { backends } from '../support/databases.ts';
import { createTestApp, type TestApp } from '../support/app.ts';

const DUE = 3_000;
const BATCH = 10;

async function tableReads(tx: Executor) {
  const result = await sql<{ seq_scan: string; seq_tup_read: string; idx_tup_fetch: string }>`
    select seq_scan, seq_tup_read, coalesce(idx_tup_fetch, 0) as idx_tup_fetch
      from pg_stat_xact_user_tables where relname = 'webhook_deliveries'`.execute(tx);
  const row = result.rows[0]!;
  return { seqScans: Number(row.seq_scan), rowsFetched: Number(row.seq_tup_read) + Number(row.idx_tup_fetch) };
}

describe.each(backends)('delivery queries on %s', (backend) => {
  let testApp: TestApp;

  beforeAll(async () => {
    testApp = await createTestApp(backend);
    const merchant = await testApp.createMerchant();
    // A burst with no ANALYZE after it: the table's statistics still describe an empty table.
    await inTransaction(testApp.context.db, async (tx) => {
      for (let index = 0; index < DUE; index++) {
        await emit(tx, systemClock, {
          shopId: merchant.shop_id,
          type: 'payment.paid',
          data: { index },
          destination: 'https://merchant.example/hook',
        });
      }
    });
  });
  afterAll(async () => {
    await testApp.close();
  });

  it(`claiming ${BATCH} of ${DUE} due deliveries reads about ${BATCH} rows, and recording them reads them by key`, async () => {
    await inTransaction(testApp.context.db, async (tx) => {
      const now = new Date();
      const before = await tableReads(tx);
      const claimed = await claimDueDeliveries(tx, {
        now,
        lockedUntil: new Date(now.getTime() + 60_000),
        leaseToken: 'lease-1',
        limit: BATCH,
      });
      const afterClaim = await tableReads(tx);
      expect(claimed).toHaveLength(BATCH);
      expect(afterClaim.seqScans - before.seqScans).toBe(0);
      // The due rows, then each claimed row again by its key for the update: a few dozen, never thousands.
      expect(afterClaim.rowsFetched - before.rowsFetched).toBeLessThanOrEqual(4 * BATCH);

      const kept = await recordAttempts(
        tx,
        claimed.map((delivery) => ({
          attemptId: newId('attempt'),
          attemptNumber: 1,
          deliveryId: delivery.deliveryId,
          eventId: delivery.eventId,
          url: delivery.url,
          leaseToken: delivery.leaseToken,
          startedAt: now,
          durationMs: 3,
          outcome: 'succeeded' as const,
          statusCode: 200,
          error: null,
          responseBody: 'ok',
          status: 'delivered' as const,
          nextAttemptAt: null,
          now,
        })),
      );
      const afterRecord = await tableReads(tx);
      expect(kept.size).toBe(BATCH);
      expect(afterRecord.seqScans - afterClaim.seqScans).toBe(0);
      expect(afterRecord.rowsFetched - afterClaim.rowsFetched).toBeLessThanOrEqual(2 * BATCH);
    });
  });
});

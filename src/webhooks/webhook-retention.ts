// Webhook events age out by bounded batched deletes (docs/operations.md,
// "Retention and archive"): an event goes with its delivery and attempts once
// it is older than the retention and its delivery has been final (delivered or
// failed) for as long. A delivery still pending or retrying is never removed,
// and a resend inside the retention makes the event young again.
import { sql } from 'kysely';
import type { Db, Executor } from '../db/transaction.ts';
import {
  monthOf,
  RetentionRowsChangedError,
  type RetentionSource,
  type RetentionUnit,
} from '../retention/retention-source.ts';
import type { WebhookTables } from './webhook-tables.ts';

const DAY_MS = 86_400_000;
/** Events per unit: one transaction removes at most this many, with their deliveries and attempts. */
const BATCH_EVENTS = 1_000;

/** Webhook events, deliveries and attempts kept `daysKept` days (undefined: forever). */
export function webhookRetentionSource(daysKept: number | undefined): RetentionSource {
  return {
    name: 'webhook_events',
    kept: daysKept === undefined ? undefined : `${daysKept} days`,
    async nextUnit(db, now) {
      if (daysKept === undefined) return undefined;
      const cutoff = new Date(now.getTime() - daysKept * DAY_MS);
      const events = await settledEventsBefore(db, cutoff, BATCH_EVENTS);
      const first = events[0];
      if (first === undefined) return undefined;
      // One month per unit, so that archive files name the month of their rows.
      const period = monthOf(first.created_at);
      const ids = events.filter((event) => monthOf(event.created_at) === period).map((event) => event.id);
      return webhookUnit(db, period, ids, cutoff);
    },
    async describe(db) {
      const oldest = await db
        .selectFrom('webhook_events')
        .select('created_at')
        .orderBy('created_at')
        .limit(1)
        .executeTakeFirst();
      return oldest ? `oldest event ${oldest.created_at.toISOString()}` : 'no events';
    },
  };
}

/** Events created before `cutoff` whose delivery (if any) has been final since before it, oldest first. */
async function settledEventsBefore(
  db: Executor<WebhookTables>,
  cutoff: Date,
  limit: number,
): Promise<{ id: string; created_at: Date }[]> {
  return db
    .selectFrom('webhook_events as e')
    .leftJoin('webhook_deliveries as d', 'd.event_id', 'e.id')
    .select(['e.id', 'e.created_at'])
    .where('e.created_at', '<', cutoff)
    .where((eb) =>
      eb.or([eb('d.id', 'is', null), eb.and([eb('d.status', '<>', 'pending'), eb('d.updated_at', '<', cutoff)])]),
    )
    .orderBy('e.created_at')
    .orderBy('e.id')
    .limit(limit)
    .execute();
}

function webhookUnit(db: Db, period: string, eventIds: readonly string[], cutoff: Date): RetentionUnit {
  const ids = [...eventIds];
  return {
    period,
    label: ids[0] ?? '',
    parts: [
      {
        table: 'webhook_events',
        lines: () =>
          onePage(
            sql<{ line: string }>`
          select row_to_json(t)::text as line from webhook_events t where t.id = any(${ids}::text[]) order by t.created_at, t.id`.execute(
              db,
            ),
          ),
      },
      {
        table: 'webhook_deliveries',
        lines: () =>
          onePage(
            sql<{ line: string }>`
          select row_to_json(t)::text as line from webhook_deliveries t where t.event_id = any(${ids}::text[]) order by t.created_at, t.id`.execute(
              db,
            ),
          ),
      },
      {
        table: 'webhook_attempts',
        lines: () =>
          onePage(
            sql<{ line: string }>`
          select row_to_json(t)::text as line from webhook_attempts t where t.event_id = any(${ids}::text[]) order by t.started_at, t.id`.execute(
              db,
            ),
          ),
      },
    ],
    async remove(tx, archivedCounts) {
      // Locked first: a resend made meanwhile waits, then finds the event gone (404), or wins and stops this removal.
      const deliveries = await sql<{ settled: string; total: string }>`
        with locked as (select status, updated_at from webhook_deliveries where event_id = any(${ids}::text[]) for update)
        select count(*) filter (where status <> 'pending' and updated_at < ${cutoff})::text as settled, count(*)::text as total from locked`.execute(
        tx,
      );
      const settled = Number(deliveries.rows[0]?.settled ?? 0);
      const total = Number(deliveries.rows[0]?.total ?? 0);
      const archivedDeliveries = archivedCounts.get('webhook_deliveries') ?? -1;
      if (settled !== total || total !== archivedDeliveries)
        throw new RetentionRowsChangedError('webhook_deliveries', archivedDeliveries, settled);
      await expectRemoved(
        'webhook_attempts',
        archivedCounts,
        tx.deleteFrom('webhook_attempts').where('event_id', 'in', ids).executeTakeFirst(),
      );
      await expectRemoved(
        'webhook_deliveries',
        archivedCounts,
        tx.deleteFrom('webhook_deliveries').where('event_id', 'in', ids).executeTakeFirst(),
      );
      await expectRemoved(
        'webhook_events',
        archivedCounts,
        tx.deleteFrom('webhook_events').where('id', 'in', ids).executeTakeFirst(),
      );
    },
  };
}

async function* onePage(query: Promise<{ rows: { line: string }[] }>): AsyncIterable<readonly string[]> {
  yield (await query).rows.map((row) => row.line);
}

async function expectRemoved(
  table: string,
  archivedCounts: ReadonlyMap<string, number>,
  deletion: Promise<{ numDeletedRows: bigint }>,
): Promise<void> {
  const removed = Number((await deletion).numDeletedRows);
  const archived = archivedCounts.get(table) ?? -1;
  if (removed !== archived) throw new RetentionRowsChangedError(table, archived, removed);
}

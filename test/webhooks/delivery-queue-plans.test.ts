// The delivery worker's reads of the queue stay reads of the rows they are about on a
// year-old table. The table holds 20,000 delivered deliveries, ANALYZEd, so its statistics
// count almost no pending one; then a backlog of 3,000 pending arrives unseen by them (as
// between two autovacuum analyzes of a big table): 1,000 put off until later and 2,000 due,
// leased by another worker. The planner then takes the (status, shop_id, created_at) index
// for "pending" unless told otherwise, and reads the whole backlog on every call.
// - The due-time read (migration 0058's function) walks the due index in order.
// - The early claim of postponed rows and the postponement find their rows by key.
// Each is checked against the plan its statement gets (EXPLAIN ANALYZE: rows counted by
// the planner's run, never a duration), and the unpinned due-time read is shown to take the
// other index, so the test can fail.
import { randomUUID } from 'node:crypto';
import { CompiledQuery, type Kysely } from 'kysely';
import { describe, expect, it } from 'vitest';
import { claimPacedDeliveries, nextDeliveryDueAt, postponeDeliveries } from '../../src/webhooks/webhook-repository.ts';
import { backends } from '../support/databases.ts';
import {
  analyzedRunOf,
  databaseForPlans,
  QueryRecorder,
  rolledBack,
  rowsReadFrom,
  type AnalyzedNode,
  type PlanNode,
} from '../support/query-plans.ts';

const DELIVERED = 20_000;
const NOW = new Date('2026-11-01T10:00:00.000Z');
const LATER = new Date(NOW.getTime() + 30_000);
const LEASED_UNTIL = new Date(NOW.getTime() + 50_000);
const SHOP = 'shop_plan';

/** `count` events from number `from`, each with a delivery in `state` (columns after shop_id and url). */
function deliveriesSql(from: number, count: number, state: string): string[] {
  const range = `generate_series(${from}, ${from + count - 1}) as k`;
  return [
    `insert into webhook_events (id, shop_id, type, payload, destination_url, created_at)
       select 'evt_plan' || lpad(k::text, 6, '0'), '${SHOP}', 'payment.paid', '{}', 'http://receiver.test/hook',
              timestamptz '2026-01-01' + k * interval '20 minutes'
         from ${range}`,
    `insert into webhook_deliveries (id, event_id, shop_id, url, status, attempt_count, max_attempts, next_attempt_at,
                                     locked_until, lease_token, last_attempt_at, created_at, updated_at)
       select 'dlv_plan' || lpad(k::text, 6, '0'), 'evt_plan' || lpad(k::text, 6, '0'), '${SHOP}', 'http://receiver.test/hook',
              ${state}, timestamptz '2026-01-01' + k * interval '20 minutes', timestamptz '2026-01-01' + k * interval '20 minutes'
         from ${range}`,
  ];
}

const deliveryId = (k: number) => `dlv_plan${String(k).padStart(6, '0')}`;
const BACKLOG_FROM = DELIVERED + 1;
const PUT_OFF = 1_000;
const LEASED = 2_000;

/** The backlog the statistics have not seen: put off until LATER, then due and leased by another worker. */
async function addBacklog(trx: Pick<Kysely<unknown>, 'executeQuery'>): Promise<void> {
  const statements = [
    ...deliveriesSql(BACKLOG_FROM, PUT_OFF, `'pending', 0, 8, timestamptz '${LATER.toISOString()}', null, null, null`),
    ...deliveriesSql(
      BACKLOG_FROM + PUT_OFF,
      LEASED,
      `'pending', 0, 8, timestamptz '${NOW.toISOString()}' - interval '1 second', timestamptz '${LEASED_UNTIL.toISOString()}', 'other-worker', null`,
    ),
  ];
  for (const statement of statements) await trx.executeQuery(CompiledQuery.raw(statement));
}

/** The indexes a plan reads `table` through. */
function indexesOn(node: PlanNode, table: string): string[] {
  const own = node['Relation Name'] === table && node['Index Name'] ? [node['Index Name']] : [];
  return [...own, ...(node.Plans ?? []).flatMap((child) => indexesOn(child, table))];
}

/**
 * A stored SQL function's body as a statement of its own, with `p_now` as $1; its pinned settings are
 * applied to the transaction unless `pinned` is false.
 */
async function functionBody(
  trx: Pick<Kysely<unknown>, 'executeQuery'>,
  name: string,
  { pinned }: { pinned: boolean },
): Promise<string> {
  const { rows } = await trx.executeQuery<{ prosrc: string; proconfig: string[] | string | null }>(
    CompiledQuery.raw(`select prosrc, proconfig from pg_proc where proname = $1`, [name]),
  );
  const row = rows[0]!;
  const settings = typeof row.proconfig === 'string' ? row.proconfig.replace(/[{}]/g, '').split(',') : row.proconfig;
  for (const setting of pinned ? (settings ?? []) : []) {
    const [key, value] = setting.split('=');
    await trx.executeQuery(CompiledQuery.raw(`set local ${key} = ${value}`));
  }
  return row.prosrc.replace(/\bp_now\b/g, '$1::timestamptz');
}

async function explainAnalyzed(
  trx: Pick<Kysely<unknown>, 'executeQuery'>,
  statement: string,
  parameters: unknown[],
): Promise<AnalyzedNode> {
  return analyzedRunOf(trx, CompiledQuery.raw(statement, parameters));
}

for (const backend of backends) {
  describe(`the delivery worker's reads of a backlog on a year-old table on ${backend}`, () => {
    const recorder = new QueryRecorder();
    const planned = databaseForPlans(backend, () => [
      `insert into merchants (id, name, email, created_at) values ('mer_plan', 'Plan', 'plan@example.com', now())`,
      `insert into shops (id, merchant_id, name, created_at) values ('${SHOP}', 'mer_plan', 'Plan', now())`,
      `insert into webhook_endpoints (shop_id, webhook_url, webhook_secret) values ('${SHOP}', 'http://receiver.test/hook', 'whsec_plan')`,
      ...deliveriesSql(1, DELIVERED, `'delivered', 1, 8, null, null, null, timestamptz '2026-01-01'`),
      'analyze',
    ]);

    it('the due-time read walks the due index in order, and answers the earliest of the retries ahead and the leases', async () => {
      const found = await rolledBack(planned.database.db, async (trx) => {
        await addBacklog(trx);
        const due = await nextDeliveryDueAt(trx, NOW);
        const body = await functionBody(trx, 'webhook_deliveries_next_due_at', { pinned: true });
        const run = await explainAnalyzed(trx, body, [NOW]);
        return { due, indexes: indexesOn(run, 'webhook_deliveries') };
      });
      expect(found.due).toEqual(LATER);
      expect(new Set(found.indexes)).toEqual(new Set(['webhook_deliveries_due_idx']));
    });

    it('catches the unpinned read: the same statement without the function’s settings takes the (status, shop) index', async () => {
      const indexes = await rolledBack(planned.database.db, async (trx) => {
        await addBacklog(trx);
        const body = await functionBody(trx, 'webhook_deliveries_next_due_at', { pinned: false });
        return indexesOn(await explainAnalyzed(trx, body, [NOW]), 'webhook_deliveries');
      });
      expect(indexes).toContain('webhook_deliveries_status_shop_idx');
    });

    it('the early claim and the postponement read their rows by key, not the backlog', async () => {
      const ids = Array.from({ length: 40 }, (_, index) => deliveryId(BACKLOG_FROM + index));
      const read = await rolledBack(planned.database.db, async (trx) => {
        await addBacklog(trx);
        const db = trx.withPlugin(recorder);
        const token = randomUUID();
        const queries = await recorder.during(async () => {
          const claimed = await claimPacedDeliveries(db, {
            now: NOW,
            lockedUntil: LEASED_UNTIL,
            leaseToken: token,
            postponements: ids.map((id) => ({ id, untilMs: LATER.getTime() })),
          });
          expect(claimed).toHaveLength(ids.length);
          await postponeDeliveries(
            db,
            ids.map((id) => ({ id, leaseToken: token, until: LATER })),
            NOW,
          );
        });
        expect(queries).toHaveLength(2);
        const runs = [];
        for (const query of queries) runs.push(await analyzedRunOf(trx, query));
        return runs.map((run) => ({
          rows: rowsReadFrom(run, 'webhook_deliveries'),
          indexes: new Set(indexesOn(run, 'webhook_deliveries')),
        }));
      });
      for (const { rows, indexes } of read) {
        // Each of the 40 rows found by key, with room for a re-read by the update: never the 3,000 of the backlog.
        expect(rows).toBeLessThanOrEqual(3 * ids.length);
        expect(indexes).toEqual(new Set(['webhook_deliveries_pkey']));
      }
    });
  });
}

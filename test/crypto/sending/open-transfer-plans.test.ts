// The reads of transfers not final yet stay reads of those few rows however many
// transfers and attempts a year leaves behind: on a table of 20,000 final transfers
// (each with its landed attempt) and a handful still open, ANALYZEd, every statement
// the executor, custody and the energy reservations run for them is captured from the
// real query builder and EXPLAINed; none may read the transfers or attempts by a
// sequential scan.
// Without migration 0056's indexes the same reads do (checked, so the test can fail).
import { CompiledQuery } from 'kysely';
import { describe, expect, it } from 'vitest';
import { reservedEnergy } from '../../../src/crypto/energy/energy-reservations.ts';
import { openHotWalletUsdt } from '../../../src/crypto/sending/outflow-repository.ts';
import {
  countInFlight,
  hasOpenTransfers,
  inFlight,
  lowestPendingReference,
  queuedUnsigned,
  sumHotWalletUsdtInFlight,
} from '../../../src/crypto/sending/sending-repository.ts';
import { backends } from '../../support/databases.ts';
import {
  analyzedRunOf,
  databaseForPlans,
  QueryRecorder,
  rolledBack,
  rowsReadFrom,
  wholeReadsOfQueries,
  wholeReadsWithout,
} from '../../support/query-plans.ts';

const CHAIN = 'tron-sandbox' as const;
const FINAL_TRANSFERS = 20_000;
const NOW = new Date('2026-11-01T10:00:00.000Z');
/** A signed TRC20 transfer's size as hex (≈ 300 bytes), so the attempts' table is as wide as a real one. */
const SIGNED_HEX = `repeat(md5(k::text), 19)`;

const transferColumns = `id, chain, purpose, owner_id, asset, from_kind, to_address, amount, status, tx_id, attempts,
  fee_sun, block_number, created_at, updated_at, submitted_at, final_at`;

/** `count` transfers numbered from `from`, in `status`, with a txID or without (their attempts are attemptsSql's). */
function transfersSql(from: number, count: number, status: string, withTx: boolean): string {
  const final = status === 'confirmed';
  return `insert into crypto_outgoing_transfers (${transferColumns})
    select 'otx_plan' || k, '${CHAIN}', 'payout', 'po_plan' || k, 'USDT', 'hot_wallet', 'T' || lpad(k::text, 33, 'x'),
           1000000, '${status}', ${withTx ? `md5(k::text) || md5('b' || k)` : 'null'}, ${withTx ? 1 : 0},
           ${final ? '13000000' : '0'}, ${final ? 'k' : 'null'}, timestamptz '2026-01-01' + k * interval '1 minute',
           timestamptz '2026-01-01' + k * interval '1 minute', ${withTx ? "timestamptz '2026-01-01' + k * interval '1 minute'" : 'null'},
           ${final ? "timestamptz '2026-01-01' + k * interval '1 minute'" : 'null'}
      from generate_series(${from}, ${from + count - 1}) as k`;
}

function attemptsSql(from: number, count: number, status: string): string {
  return `insert into crypto_outgoing_attempts (transfer_id, attempt, tx_id, signed_hex, expiration, ref_block_number, fee_limit_sun,
                                                status, broadcasts, last_broadcast, signed_at, last_broadcast_at)
    select 'otx_plan' || k, 1, md5(k::text) || md5('b' || k), ${SIGNED_HEX}, timestamptz '2026-01-01' + k * interval '1 minute',
           k, 100000000, '${status}', 1, 'accepted', timestamptz '2026-01-01' + k * interval '1 minute',
           timestamptz '2026-01-01' + k * interval '1 minute'
      from generate_series(${from}, ${from + count - 1}) as k`;
}

for (const backend of backends) {
  describe(`the reads of transfers not final yet on ${backend}`, () => {
    const recorder = new QueryRecorder();
    const planned = databaseForPlans(backend, () => {
      const open = FINAL_TRANSFERS + 1;
      return [
        transfersSql(1, FINAL_TRANSFERS, 'confirmed', true),
        attemptsSql(1, FINAL_TRANSFERS, 'landed'),
        transfersSql(open, 5, 'queued', false),
        transfersSql(open + 5, 5, 'submitted', true),
        attemptsSql(open + 5, 5, 'pending'),
        `insert into crypto_energy_reservations (transfer_id, chain, energy, created_at)
           select 'otx_plan' || k, '${CHAIN}', 65000, timestamptz '2026-01-01' from generate_series(${open}, ${open + 9}) as k`,
        'analyze',
      ];
    });

    /** Every statement the executor, custody and the reservations run for open transfers, captured with its parameters. */
    async function openTransferReads(): Promise<CompiledQuery[]> {
      const db = planned.database.db.withPlugin(recorder);
      return recorder.during(async () => {
        expect(await inFlight(db, CHAIN)).toHaveLength(5);
        expect(await countInFlight(db, CHAIN)).toBe(5);
        expect(await hasOpenTransfers(db, CHAIN)).toEqual({ queuedUnsigned: true, inFlight: true });
        expect(await lowestPendingReference(db, CHAIN)).toBe(FINAL_TRANSFERS + 6);
        expect(await queuedUnsigned(db, CHAIN, ['payout'], 250, NOW)).toHaveLength(5);
        expect(await openHotWalletUsdt(db, CHAIN)).toBe(10_000_000n);
        expect(await sumHotWalletUsdtInFlight(db, CHAIN)).toBe(5_000_000n);
        expect(await reservedEnergy(db, CHAIN, NOW)).toBe(650_000n);
      });
    }

    it('loads the transfers and their attempts as large tables', () => {
      expect(planned.large).toContain('crypto_outgoing_transfers');
      expect(planned.large).toContain('crypto_outgoing_attempts');
    });

    it('reads the open transfers and pending attempts through indexes, never the whole tables', async () => {
      const queries = await openTransferReads();
      expect(queries).toHaveLength(9);
      const reads = await wholeReadsOfQueries(planned.database.db, queries, planned.large);
      expect(reads.map(({ read, sql }) => `${read} in: ${sql}`)).toEqual([]);
    });

    it('reads each transfer in flight and its attempt a bounded number of times even when the statistics saw none in flight', async () => {
      // ANALYZE ran with 5 in flight; 1,000 more are signed since, as between two autovacuum analyzes of a big table.
      const more = 1_000;
      const from = FINAL_TRANSFERS + 1_000;
      const read = await rolledBack(planned.database.db, async (trx) => {
        await trx.executeQuery(CompiledQuery.raw(transfersSql(from, more, 'submitted', true)));
        await trx.executeQuery(CompiledQuery.raw(attemptsSql(from, more, 'pending')));
        const queries = await recorder.during(async () => {
          expect(await inFlight(trx.withPlugin(recorder), CHAIN)).toHaveLength(5 + more);
        });
        let rows = 0;
        for (const query of queries) {
          const run = await analyzedRunOf(trx, query);
          rows += rowsReadFrom(run, 'crypto_outgoing_attempts') + rowsReadFrom(run, 'crypto_outgoing_transfers');
        }
        return rows;
      });
      // One read of each transfer and of its attempt, with room for an index's look-ahead: never one per pair.
      expect(read).toBeLessThanOrEqual(4 * (5 + more));
    });

    it('catches the missing indexes: without them the in-flight reads scan the transfers and attempts whole', async () => {
      const queries = await openTransferReads();
      const reads = await wholeReadsWithout(
        planned.database.db,
        ['crypto_outgoing_transfers_open_idx', 'crypto_outgoing_attempts_pending_idx'],
        queries,
        planned.large,
      );
      expect(reads).toContain('Seq Scan crypto_outgoing_transfers');
      expect(reads).toContain('Seq Scan crypto_outgoing_attempts');
    });
  });
}

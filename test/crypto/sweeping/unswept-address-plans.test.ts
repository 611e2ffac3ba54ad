// The sweeper's candidates and custody reconciliation's addresses stay reads of
// the few addresses still holding USDT however many a year has swept: on 20,000
// deposit addresses swept clean (each with its completed sweep) and a handful not,
// ANALYZEd, every statement the sweeper and custody run for them is captured from
// the real query builder and EXPLAINed (none may read the addresses or sweeps by a
// sequential scan), and run with EXPLAIN ANALYZE (the rows they read are bounded by
// the addresses holding USDT, not by the addresses swept).
// Without migration 0057's index the same reads scan the addresses (checked, so the
// test can fail).
import type { CompiledQuery } from 'kysely';
import { describe, expect, it } from 'vitest';
import {
  addressesHoldingUsdt,
  findSweepCandidates,
  unsweptFinalMicro,
} from '../../../src/crypto/sweeping/sweeping-repository.ts';
import { backends } from '../../support/databases.ts';
import * as plans from '../../support/query-plans.ts';

const SWEPT_ADDRESSES = 20_000;
/** Addresses past the swept ones: final USDT over the threshold, under it, and one swept clean with a sweep in flight. */
const OVER = SWEPT_ADDRESSES + 1;
const UNDER = SWEPT_ADDRESSES + 2;
const IN_FLIGHT = SWEPT_ADDRESSES + 3;
const NOW = new Date('2026-11-01T10:00:00.000Z');
const THRESHOLD_MICRO = 50_000_000n;
const RETRY = { maxConsecutiveFailures: 3, firstRetryDelaySeconds: 600 };

const address = (k: number | string) => `'T' || lpad((${k})::text, 33, 'x')`;
const addressOf = (k: number) => `T${String(k).padStart(33, 'x')}`;

/** Addresses `from`…`to` of the shop, each with `final` micro-USDT of final deposits and `swept` of completed sweeps. */
function addressesSql(from: number, to: number, final: bigint, swept: bigint): string {
  return `insert into crypto_addresses (address, key_id, derivation_index, shop_id, purpose, created_at, final_usdt_micro, swept_usdt_micro)
    select ${address('k')}, 'sandbox', k, 'shop_plans', 'invoice', timestamptz '2026-01-01' + k * interval '1 minute', ${final}, ${swept}
      from generate_series(${from}, ${to}) as k`;
}

/** A sweep of each address `from`…`to` in `status`, with its USDT transfer (completed: confirmed; sweeping: submitted). */
function sweepsSql(from: number, to: number, status: 'completed' | 'sweeping'): string[] {
  const final = status === 'completed';
  return [
    `insert into crypto_outgoing_transfers (id, chain, purpose, owner_id, asset, from_kind, from_address, from_derivation_index, to_address,
                                            amount, status, tx_id, attempts, fee_sun, block_number, created_at, updated_at, submitted_at, final_at)
      select 'otx_swp' || k, 'tron-sandbox', 'sweep', 'swp_plan' || k, 'USDT', 'deposit_address', ${address('k')}, k, ${address(0)},
             60000000, '${final ? 'confirmed' : 'submitted'}', md5(k::text) || md5('b' || k), 1, ${final ? 3534500 : 0}, ${final ? 'k' : 'null'},
             timestamptz '2026-01-01' + k * interval '1 minute', timestamptz '2026-01-01' + k * interval '1 minute',
             timestamptz '2026-01-01' + k * interval '1 minute', ${final ? "timestamptz '2026-01-01' + k * interval '1 minute'" : 'null'}
        from generate_series(${from}, ${to}) as k`,
    `insert into crypto_sweeps (id, chain, address, status, unswept_final_micro, energy, bandwidth, estimated_fee_sun, trx_before_sun,
                                activated_before, topup_sun, amount_micro, sweep_transfer_id, sweep_fee_sun, tx_hash, created_at, updated_at, final_at)
      select 'swp_plan' || k, 'tron-sandbox', ${address('k')}, '${status}', 60000000, 31895, 345, 3534500, 3534500,
             true, 0, 60000000, 'otx_swp' || k, ${final ? 3534500 : 'null'}, md5(k::text) || md5('b' || k),
             timestamptz '2026-01-01' + k * interval '1 minute', timestamptz '2026-01-01' + k * interval '1 minute',
             ${final ? "timestamptz '2026-01-01' + k * interval '1 minute'" : 'null'}
        from generate_series(${from}, ${to}) as k`,
  ];
}

for (const backend of backends) {
  describe(`the reads of addresses holding USDT on ${backend}`, () => {
    const recorder = new plans.QueryRecorder();
    const planned = plans.databaseForPlans(backend, () => [
      `insert into merchants (id, name, email, created_at) values ('mer_plans', 'Plans', 'plans@example.test', now())`,
      `insert into shops (id, merchant_id, name, created_at) values ('shop_plans', 'mer_plans', 'Plans', now())`,
      addressesSql(1, SWEPT_ADDRESSES, 60_000_000n, 60_000_000n),
      ...sweepsSql(1, SWEPT_ADDRESSES, 'completed'),
      addressesSql(OVER, OVER, 80_000_000n, 0n),
      addressesSql(UNDER, UNDER, 20_000_000n, 0n),
      addressesSql(IN_FLIGHT, IN_FLIGHT, 60_000_000n, 0n),
      ...sweepsSql(IN_FLIGHT, IN_FLIGHT, 'sweeping'),
      'analyze',
    ]);

    /** Every statement the sweeper and custody run to find the addresses holding USDT, captured with its parameters. */
    async function holdingReads(): Promise<CompiledQuery[]> {
      const db = planned.database.db.withPlugin(recorder);
      return recorder.during(async () => {
        const candidates = await findSweepCandidates(db, {
          keyId: 'sandbox',
          thresholdMicro: THRESHOLD_MICRO,
          now: NOW,
          limit: 50,
          retry: RETRY,
        });
        expect(candidates.map((candidate) => [candidate.address, candidate.unswept_final_micro])).toEqual([
          [addressOf(OVER), 80_000_000n],
        ]);
        expect(await addressesHoldingUsdt(db, { keyId: 'sandbox', after: undefined, limit: 500 })).toEqual(
          [OVER, UNDER, IN_FLIGHT].map(addressOf),
        );
        expect(await addressesHoldingUsdt(db, { keyId: 'sandbox', after: addressOf(OVER), limit: 1 })).toEqual([
          addressOf(UNDER),
        ]);
        expect(await addressesHoldingUsdt(db, { keyId: 'live', after: undefined, limit: 500 })).toEqual([]);
        expect(await unsweptFinalMicro(db, addressOf(UNDER))).toBe(20_000_000n);
        expect(await unsweptFinalMicro(db, addressOf(1))).toBe(0n);
      });
    }

    it('reads the addresses holding USDT through indexes, never the whole tables (both planned.large)', async () => {
      expect(
        [...planned.large].filter((table) => table === 'crypto_addresses' || table === 'crypto_sweeps').sort(),
      ).toEqual(['crypto_addresses', 'crypto_sweeps']);
      const reads = await plans.wholeReadsOfQueries(planned.database.db, await holdingReads(), planned.large);
      expect(reads.map(({ read, sql }) => `${read} in: ${sql}`)).toEqual([]);
    });

    it('reads a bounded number of rows per address holding USDT, none per address swept clean', async () => {
      const queries = await holdingReads();
      expect(queries).toHaveLength(6);
      let rows = 0;
      for (const query of queries) {
        const run = await plans.analyzedRunOf(planned.database.db, query);
        rows += plans.rowsReadFrom(run, 'crypto_addresses') + plans.rowsReadFrom(run, 'crypto_sweeps');
      }
      // Six reads of at most three addresses each, with their sweeps: a few dozen rows, not 20,000.
      expect(rows).toBeLessThanOrEqual(60);
    });

    it('catches the missing index: without it the reads scan the addresses whole', async () => {
      const queries = await holdingReads();
      const reads = await plans.wholeReadsWithout(
        planned.database.db,
        ['crypto_addresses_unswept_idx'],
        queries,
        planned.large,
      );
      expect(reads).toContain('Seq Scan crypto_addresses');
    });
  });
}

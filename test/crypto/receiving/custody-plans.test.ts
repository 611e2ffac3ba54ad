// Custody reconciliation's read of the deposits credited above the solidified block
// stays a read of those few newest deposits however many a year has credited: on
// 20,000 credited deposits, ANALYZEd, the statement is captured from the real query
// builder and EXPLAINed (no sequential scan of the deposits), and run with EXPLAIN
// ANALYZE (the rows it reads are the ones above the block).
// Without migration 0059's index the same read scans the deposits (checked, so the
// test can fail).
import type { CompiledQuery } from 'kysely';
import { describe, expect, it } from 'vitest';
import { usdtCreditedAboveBlock } from '../../../src/crypto/receiving/custody-service.ts';
import { backends } from '../../support/databases.ts';
import * as plans from '../../support/query-plans.ts';

const CHAIN = 'tron-sandbox' as const;
const CREDITED = 20_000;
/** Deposits in blocks above this one: the five newest (each deposit k is in block k). */
const SOLIDIFIED_BLOCK = CREDITED - 5;
const ADDRESS = `T${'p'.repeat(33)}`;

/** `count` deposits of 1 USDT in `status` to one wallet, deposit k in block k, from `from`. */
function depositsSql(from: number, count: number, status = 'credited'): string {
  return `insert into crypto_deposits (id, chain, shop_id, address, wallet_id, tx_id, log_index, block_number, block_id, from_address,
                                       amount_micro, status, seen_at, final_at)
    select 'dep_plan' || k, '${CHAIN}', 'shop_plans', '${ADDRESS}', 'wal_plans', md5(k::text) || md5('t' || k), 0, k,
           md5('b' || k) || md5('c' || k), 'T' || lpad(k::text, 33, 'f'), 1000000, '${status}',
           timestamptz '2026-01-01' + k * interval '1 minute',
           ${status === 'credited' ? "timestamptz '2026-01-01' + k * interval '1 minute'" : 'null'}
      from generate_series(${from}, ${from + count - 1}) as k`;
}

for (const backend of backends) {
  describe(`custody's read of deposits credited above a block on ${backend}`, () => {
    const recorder = new plans.QueryRecorder();
    const planned = plans.databaseForPlans(backend, () => [
      `insert into merchants (id, name, email, created_at) values ('mer_plans', 'Plans', 'plans@example.test', now())`,
      `insert into shops (id, merchant_id, name, created_at) values ('shop_plans', 'mer_plans', 'Plans', now())`,
      `insert into crypto_addresses (address, key_id, derivation_index, shop_id, purpose, created_at)
         values ('${ADDRESS}', 'sandbox', 1, 'shop_plans', 'wallet', now())`,
      `insert into crypto_wallets (id, shop_id, client_id, network, network_mode, address, status, created_at, updated_at)
         values ('wal_plans', 'shop_plans', 'client-plans', 'TRC20', 'testnet', '${ADDRESS}', 'active', now(), now())`,
      depositsSql(1, CREDITED),
      // Newer still, not final: not credited, so not counted.
      depositsSql(CREDITED + 1, 3, 'confirming'),
      'analyze',
    ]);

    async function creditedAboveRead(): Promise<CompiledQuery[]> {
      const db = planned.database.db.withPlugin(recorder);
      return recorder.during(async () => {
        expect(await usdtCreditedAboveBlock(db, CHAIN, SOLIDIFIED_BLOCK)).toBe(5_000_000n);
      });
    }

    it('reads through an index, never the whole deposits table', async () => {
      expect(planned.large).toContain('crypto_deposits');
      const queries = await creditedAboveRead();
      expect(queries).toHaveLength(1);
      const reads = await plans.wholeReadsOfQueries(planned.database.db, queries, planned.large);
      expect(reads.map(({ read, sql }) => `${read} in: ${sql}`)).toEqual([]);
    });

    it('reads the deposits above the block, not the year credited before it', async () => {
      const [query] = await creditedAboveRead();
      const run = await plans.analyzedRunOf(planned.database.db, query!);
      expect(plans.rowsReadFrom(run, 'crypto_deposits')).toBe(5);
    });

    it('catches the missing index: without it the read scans the deposits whole', async () => {
      const queries = await creditedAboveRead();
      const reads = await plans.wholeReadsWithout(
        planned.database.db,
        ['crypto_deposits_credited_block_idx'],
        queries,
        planned.large,
      );
      expect(reads).toContain('Seq Scan crypto_deposits');
    });
  });
}

// A crypto receiving setup for service and watcher tests: a fresh database, a
// sandbox shop, the in-process simulated chain on its own manual clock (served
// over loopback HTTP and read by the production node client), and a chain
// watcher. Nothing of ours is faked; the chain is the only edge.
import { sql } from 'kysely';
import { expect } from 'vitest';
import type { ManualClock } from '../../../src/clock.ts';
import type { AppContext } from '../../../src/context.ts';
import type { DatabaseBackend } from '../../../src/db/database.ts';
import { createCryptoChain, type ChainAccess, type CryptoChain } from '../../../src/crypto/chain/crypto-chain.ts';
import {
  createChainWatcher,
  type ChainWatcher,
  type ChainWatcherOptions,
} from '../../../src/crypto/receiving/chain-watcher.ts';
import type { SimulatedChainServer } from '../../../src/crypto/simchain/chain-server.ts';
import { checkLedgerInvariants } from '../../../src/ledger/ledger-check.ts';
import { createMerchant, type CreatedMerchant } from '../../../src/merchants/merchant-service.ts';
import { createTestContext } from '../../support/app.ts';
import { testCryptoDeps, type TestCryptoDeps } from '../crypto-deps-support.ts';
import type { TestDatabase } from '../../support/databases.ts';

export interface ReceivingSetup {
  readonly context: AppContext;
  readonly clock: ManualClock;
  readonly database: TestDatabase;
  readonly deps: TestCryptoDeps;
  readonly chain: CryptoChain;
  readonly sandbox: SimulatedChainServer;
  readonly access: ChainAccess;
  readonly merchant: CreatedMerchant;
  readonly shop: { shopId: string; mode: 'sandbox' };
  /** A new watcher (its own lease token). */
  watcher(options?: Partial<ChainWatcherOptions>): ChainWatcher;
  /** The watcher of the setup, for tests that run one watcher throughout. */
  readonly defaultWatcher: ChainWatcher;
  close(): Promise<void>;
}

let counter = 0;

export async function openReceivingSetup(backend: DatabaseBackend): Promise<ReceivingSetup> {
  const { context, clock, database } = await createTestContext(backend);
  const chain = createCryptoChain({
    config: context.config,
    dataDir: undefined,
    logger: context.logger,
    sandboxClock: 'manual',
  });
  const deps = testCryptoDeps(context, chain);
  const access = await chain.forMode('sandbox');
  const sandbox = await chain.sandboxChain();
  counter += 1;
  const merchant = await createMerchant(context, {
    name: `Crypto shop ${counter}`,
    email: `crypto-${process.pid}-${counter}@example.test`,
    mode: 'sandbox',
  });
  const watcher = (options: Partial<ChainWatcherOptions> = {}) =>
    createChainWatcher({ db: context.db, clock, logger: context.logger, access, ...options });
  return {
    context,
    clock,
    database,
    deps,
    chain,
    sandbox,
    access,
    merchant,
    shop: { shopId: merchant.shop_id, mode: 'sandbox' },
    watcher,
    defaultWatcher: watcher(),
    async close() {
      await deps.close();
      await database.close();
    },
  };
}

/** The merchant's USDT main balance in the sandbox book (micro-USDT), straight from the ledger's rows. */
export async function usdtMainBalance(setup: ReceivingSetup): Promise<bigint> {
  const row = await setup.context.db
    .selectFrom('ledger_accounts')
    .select(['credits_posted', 'debits_posted'])
    .where('merchant_id', '=', setup.merchant.merchant_id)
    .where('book', '=', 'sandbox')
    .where('currency', '=', 'USDT')
    .where('kind', '=', 'main')
    .executeTakeFirst();
  return row ? row.credits_posted - row.debits_posted : 0n;
}

/** How many ledger transfers credited this deposit. */
export async function creditsOfDeposit(setup: ReceivingSetup, depositId: string): Promise<number> {
  const rows = await setup.context.db
    .selectFrom('ledger_transfers')
    .select('id')
    .where('idempotency_key', '=', `crypto-deposit:${depositId}`)
    .execute();
  return rows.length;
}

export async function eventTypes(setup: ReceivingSetup): Promise<string[]> {
  const rows = await setup.context.db
    .selectFrom('webhook_events')
    .select(['type', 'destination_url'])
    .where('shop_id', '=', setup.shop.shopId)
    .orderBy(sql`created_at`)
    .orderBy('id')
    .execute();
  return rows.map((row) => row.type);
}

/** The ledger's invariants hold, and so do the deposit addresses' running USDT totals. */
export async function expectLedgerSound(setup: ReceivingSetup): Promise<void> {
  const report = await checkLedgerInvariants(setup.context.db);
  expect(report.violations).toEqual([]);
  expect(report.ok).toBe(true);
  expect(await addressTotalsOffTheirSums(setup.context.db)).toEqual([]);
}

/**
 * Deposit addresses whose running totals (migration 0057) differ from their final deposits' sum or
 * their completed sweeps' sum, recomputed from the rows; empty when every total is true.
 */
export async function addressTotalsOffTheirSums(db: AppContext['db']): Promise<unknown[]> {
  const result = await sql<{ address: string }>`
    select a.address, a.final_usdt_micro::text as total_final, coalesce(f.sum, 0)::text as sum_final,
           a.swept_usdt_micro::text as total_swept, coalesce(s.sum, 0)::text as sum_swept
      from crypto_addresses a
      left join (select address, sum(amount_micro) as sum from crypto_deposits
                  where status in ('credited', 'held') group by address) f on f.address = a.address
      left join (select address, sum(amount_micro) as sum from crypto_sweeps
                  where status = 'completed' group by address) s on s.address = a.address
     where a.final_usdt_micro <> coalesce(f.sum, 0) or a.swept_usdt_micro <> coalesce(s.sum, 0)`.execute(db);
  return result.rows;
}

// bench:growth's loader (bench/growth-loader.ts) at a small scale: several shops'
// rows in one database, and the gateway's own checks hold over them. On PGlite the
// statements run with every trigger on (foreign keys checked row by row); on
// PostgreSQL through loadGrowthData itself (secondary indexes dropped and rebuilt,
// foreign-key triggers off), which must give back the migrations' indexes exactly.
// Every loaded address is a TRON address by our own parser; all but the newest
// deposits are swept, and with the chain holding what the history leaves there
// (bench/growth-sweeps.ts) the custody check balances, reading the unswept addresses.
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { HISTORY_BLOCKS } from '../../bench/cabinet-loader.ts';
import { growthLoadStatements, growthShopLoads, loadGrowthData } from '../../bench/growth-loader.ts';
import { loadedCustody, type GrowthSweeps } from '../../bench/growth-sweeps.ts';
import { ManualClock } from '../../src/clock.ts';
import { reconcileBook } from '../../src/crypto/custody/reconciliation-service.ts';
import { usdtText } from '../../src/crypto/receiving/receiving-views.ts';
import { parseTronAddress, tronAddress } from '../../src/crypto/tron/address.ts';
import { throwawayKeyring } from '../../src/kms/keyring.ts';
import { checkLedgerInvariants } from '../../src/ledger/ledger-check.ts';
import { createMerchant } from '../../src/merchants/merchant-service.ts';
import { addressTotalsOffTheirSums, openReceivingSetup } from '../crypto/receiving/receiving-service-support.ts';
import { backends, openTestDatabase, type TestDatabase } from '../support/databases.ts';

/** 2,000 payments, 200 deposits and 200 payouts over three shops. */
const SCALE = 0.0002;
/** Deposits of the last 60 days stay unswept: a few dozen at this scale (bench:growth leaves a day's). */
const UNSWEPT_SECONDS = 60 * 86_400;
/** A hot wallet for the loads that never reach a chain. */
const ANY_HOT_WALLET = 'TUEZSdKsoDHQMeZwihtdoBiN46zxhGWYdH';

async function createShops(database: TestDatabase, count: number) {
  const deps = { db: database.db, clock: new ManualClock(), keyring: throwawayKeyring() };
  const shops = [];
  for (let index = 0; index < count; index += 1) {
    const merchant = await createMerchant(deps, {
      name: `Growth shop ${index}`,
      email: `growth-${index}@example.test`,
      mode: 'sandbox',
    });
    shops.push({ merchantId: merchant.merchant_id, shopId: merchant.shop_id });
  }
  return shops;
}

const countOf = async (database: TestDatabase, table: string) =>
  Number(
    (await sql<{ n: string }>`select count(*)::text as n from ${sql.table(table)}`.execute(database.db)).rows[0]!.n,
  );

const indexDefinitions = async (database: TestDatabase) =>
  (
    await sql<{
      def: string;
    }>`select indexdef as def from pg_indexes where schemaname = current_schema() order by indexname`.execute(
      database.db,
    )
  ).rows.map((row) => row.def);

/** Every constraint with its definition and whether it was checked on every row (a foreign key made again must be). */
const constraintDefinitions = async (database: TestDatabase) =>
  (
    await sql<{ def: string }>`
      select c.relname || '.' || k.conname || ': ' || pg_get_constraintdef(k.oid) || (case when k.convalidated then '' else ' NOT VALID' end) as def
        from pg_constraint k join pg_class c on c.oid = k.conrelid
       where c.relnamespace = current_schema()::regnamespace
       order by 1`.execute(database.db)
  ).rows.map((row) => row.def);

/** The load as bench:growth runs it on PostgreSQL; on PGlite (one connection) its statements in order. */
async function load(
  backend: string,
  database: TestDatabase,
  loads: ReturnType<typeof growthShopLoads>,
  hotWallet = ANY_HOT_WALLET,
) {
  const sweeps: GrowthSweeps = { hotWallet, unsweptSeconds: UNSWEPT_SECONDS };
  if (backend === 'postgres') {
    await loadGrowthData(database.url!, loads, sweeps, () => undefined);
  } else {
    for (const statement of growthLoadStatements(loads, sweeps, new Date().toISOString()))
      await sql.raw(statement.sql).execute(database.db);
  }
}

/** Every address-shaped column the loader writes: table, column, and whether each value occurs once. */
const ADDRESS_COLUMNS = [
  ['crypto_addresses', 'address', true],
  ['crypto_invoices', 'address', true],
  ['crypto_wallets', 'address', true],
  ['crypto_deposits', 'address', false],
  ['crypto_deposits', 'from_address', false],
  ['crypto_outgoing_transfers', 'from_address', false],
  ['crypto_outgoing_transfers', 'to_address', false],
  ['crypto_payouts', 'recipient_address', true],
  ['crypto_sweeps', 'address', false],
] as const;

describe('growthShopLoads', () => {
  it('gives the big shop half of every count and the small shops the rest, adding up to the scale', () => {
    const shops = Array.from({ length: 5 }, (_, index) => ({ merchantId: `m${index}`, shopId: `s${index}` }));
    const loads = growthShopLoads(shops, 0.001);
    expect(loads.map((load) => load.payments)).toEqual([5_000, 1_250, 1_250, 1_250, 1_250]);
    expect(loads.reduce((sum, load) => sum + load.deposits, 0)).toBe(1_000);
    expect(loads.reduce((sum, load) => sum + load.payouts, 0)).toBe(1_000);
    expect(loads.map((load) => load.place?.serial)).toEqual([0, 1, 2, 3, 4]);
    // Each shop's addresses are derived after the previous shops' ones.
    expect(loads[1]!.place!.invoicesBefore).toBe(
      loads[0]!.deposits - loads[0]!.walletDeposits + loads[0]!.expiredInvoices,
    );
  });
});

describe.each(backends)('the growth load on %s', (backend) => {
  it('loads several shops whose ledger passes its invariants and whose rows keep every constraint', async () => {
    const database = await openTestDatabase(backend);
    try {
      const shops = await createShops(database, 3);
      const loads = growthShopLoads(shops, SCALE);
      const indexesBefore = await indexDefinitions(database);
      const constraintsBefore = await constraintDefinitions(database);
      await load(backend, database, loads);
      expect(await indexDefinitions(database)).toEqual(indexesBefore);
      expect(await constraintDefinitions(database)).toEqual(constraintsBefore);
      expect(await countOf(database, 'payments')).toBe(2_000);
      expect(await countOf(database, 'crypto_deposits')).toBe(200);
      expect(await countOf(database, 'crypto_payouts')).toBe(200);
      const events = await countOf(database, 'webhook_events');
      expect(await countOf(database, 'webhook_deliveries')).toBe(events);
      expect(await countOf(database, 'webhook_attempts')).toBe(events);
      // Every transfer with a txID has its one signed attempt, landed, as the executor leaves it.
      const attempts = await sql<{ signed: string; landed: string }>`
        select (select count(*) from crypto_outgoing_transfers where tx_id is not null)::text as signed,
               (select count(*) from crypto_outgoing_attempts a join crypto_outgoing_transfers t on t.id = a.transfer_id and t.tx_id = a.tx_id
                 where a.status = 'landed' and a.attempt = 1)::text as landed`.execute(database.db);
      expect(Number(attempts.rows[0]!.signed)).toBeGreaterThan(100);
      expect(attempts.rows[0]!.landed).toBe(attempts.rows[0]!.signed);
      const perShop = await sql<{ shop_id: string; n: string }>`
        select shop_id, count(*)::text as n from payments group by shop_id order by count(*) desc`.execute(database.db);
      expect(perShop.rows.map((row) => Number(row.n))).toEqual([1_000, 500, 500]);
      // Each deposit address's running totals are its final deposits' and completed sweeps' sums, as the gateway keeps them.
      expect(await addressTotalsOffTheirSums(database.db)).toEqual([]);
      const totals = await sql<{ swept: string; unswept: string }>`
        select count(*) filter (where swept_usdt_micro > 0)::text as swept,
               count(*) filter (where unswept_usdt_micro > 0)::text as unswept from crypto_addresses`.execute(
        database.db,
      );
      expect(Number(totals.rows[0]!.swept)).toBeGreaterThan(100);
      expect(Number(totals.rows[0]!.unswept)).toBeGreaterThan(0);
      // Nothing of the history is dated after the load: an invoice that expired did so before it began.
      const future = await sql<{ n: string }>`
        select (select count(*) from webhook_events where created_at > now())
             + (select count(*) from crypto_invoices where updated_at > now())
             + (select count(*) from crypto_payouts where updated_at > now())
             + (select count(*) from payments where coalesce(paid_at, failed_at, expired_at) > now()) as n`.execute(
        database.db,
      );
      expect(Number(future.rows[0]!.n)).toBe(0);
      const report = await checkLedgerInvariants(database.db);
      expect(report.violations).toEqual([]);
      expect(report.ok).toBe(true);
      expect(report.transfersChecked).toBeGreaterThan(1_500);
    } finally {
      await database.close();
    }
  }, 300_000);
});

describe.each(backends)('the addresses of the growth load on %s', (backend) => {
  it('are TRON addresses by our own parser, each made once where it names one row', async () => {
    const setup = await openReceivingSetup(backend);
    try {
      const shops = [
        { merchantId: setup.merchant.merchant_id, shopId: setup.merchant.shop_id },
        ...(await createShops(setup.database, 2)),
      ];
      await load(backend, setup.database, growthShopLoads(shops, SCALE));
      // The temporary function that made them is gone with the load.
      const functions = await sql<{ n: string }>`
        select count(*)::text as n from pg_proc where proname = 'bench_tron_address'`.execute(setup.database.db);
      expect(Number(functions.rows[0]!.n)).toBe(0);
      for (const [table, column, unique] of ADDRESS_COLUMNS) {
        const { rows } = await sql<{ address: string }>`
          select ${sql.ref(column)} as address from ${sql.table(table)} where ${sql.ref(column)} is not null`.execute(
          setup.database.db,
        );
        expect(rows.length, `${table}.${column}`).toBeGreaterThan(0);
        const refused = rows.filter((row) => !parseTronAddress(row.address).ok).map((row) => row.address);
        expect(refused, `${table}.${column}`).toEqual([]);
        if (unique) expect(new Set(rows.map((row) => row.address)).size, `${table}.${column}`).toBe(rows.length);
      }
    } finally {
      await setup.close();
    }
  }, 300_000);
});

describe.each(backends)('the custody check on the growth load on %s', (backend) => {
  it('balances because the chain holds what the ledger says, and finds USDT taken off an unswept address', async () => {
    const setup = await openReceivingSetup(backend);
    try {
      const shops = [
        { merchantId: setup.merchant.merchant_id, shopId: setup.merchant.shop_id },
        ...(await createShops(setup.database, 2)),
      ];
      await load(backend, setup.database, growthShopLoads(shops, SCALE), setup.access.addressKey.hotWalletAddress);
      const custody = await loadedCustody((text) => sql.raw(text).execute(setup.database.db));
      // Most deposits swept, a few dozen addresses not yet.
      expect(custody.unswept.length).toBeGreaterThan(5);
      expect(await countOf(setup.database, 'crypto_sweeps')).toBeGreaterThan(100);
      expect(custody.hotWalletMicro).toBeGreaterThan(0n);
      const chain = setup.sandbox.chain;
      chain.faucet(setup.access.addressKey.hotWalletAddress, { usdt: custody.hotWalletMicro });
      for (const { address, micro } of custody.unswept) chain.faucet(tronAddress(address), { usdt: micro });
      chain.mine(HISTORY_BLOCKS + chain.parameters.solidityDepth);
      // Held deposits (blocked wallets) are on chain and not in the ledger: the only difference.
      const held = await sql<{ micro: string }>`
        select coalesce(sum(amount_micro), 0)::text as micro from crypto_deposits where status = 'held'`.execute(
        setup.database.db,
      );
      const heldMicro = BigInt(held.rows[0]!.micro);
      const deps = { ...setup.context, chain: setup.chain };

      const balanced = await reconcileBook(deps, 'sandbox');
      expect(balanced?.error).toBeNull();
      expect(balanced?.outcome).toBe('balanced');
      expect(balanced?.on_chain?.addresses_read).toBe(custody.unswept.length);
      expect(balanced?.ledger?.deposits_above_block).toBe(usdtText(0n));
      expect(balanced?.difference).toBe(usdtText(heldMicro));

      const [taken] = custody.unswept;
      expect(taken!.micro).toBeGreaterThan(heldMicro);
      chain.state.addUsdt(tronAddress(taken!.address), -taken!.micro);
      const short = await reconcileBook(deps, 'sandbox');
      expect(short?.outcome).toBe('shortfall');
      expect(short?.difference).toBe(usdtText(heldMicro - taken!.micro));
      expect(short?.shortfall).toBe(usdtText(taken!.micro - heldMicro));
    } finally {
      await setup.close();
    }
  }, 300_000);
});

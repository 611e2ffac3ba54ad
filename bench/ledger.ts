// `npm run bench:ledger`: concurrent ledger transfers on PostgreSQL, spread over
// 1,000 accounts and all from one hot account, each measured against a
// direct-SQL baseline run in the same process at the same concurrency: one
// autocommit statement per transfer doing the minimal equivalent writes (both
// account rows with the no-overdraft check, the transfer row, the two history
// rows). Targets: ratio >= 0.5 spread, >= 0.3 hot. Uses a fresh database on
// BENCH_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/postgres), dropped after.
//   BENCH_TRANSFERS (default 5000 per run), BENCH_CONCURRENCY (default 20).
import { performance } from 'node:perf_hooks';
import { sql } from 'kysely';
import pg from 'pg';
import { createBenchDatabase } from './bench-database.ts';
import { systemClock } from '../src/clock.ts';
import { openDatabase } from '../src/db/database.ts';
import { migrate } from '../src/db/migrate.ts';
import { inTransaction, type Db } from '../src/db/transaction.ts';
import { newId } from '../src/ids.ts';
import { ensureAccounts, merchantAccountKey, systemAccountKey } from '../src/ledger/ledger-accounts.ts';
import { checkLedgerInvariants } from '../src/ledger/ledger-invariants.ts';
import { transfer } from '../src/ledger/ledger-service.ts';
import { creditPaymentPaid } from '../src/payments/payment-credit.ts';

const TRANSFERS = Number(process.env.BENCH_TRANSFERS ?? 5_000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 20);
const ACCOUNTS = 1_000;
const FUNDING = 1_000_000_000_000n;

/** 500 merchants with a RUB main and payout account each, every account well funded from settlement. */
async function openAccounts(db: Db): Promise<string[]> {
  const now = new Date();
  const merchantIds = Array.from({ length: ACCOUNTS / 2 }, () => newId('merchant'));
  await db
    .insertInto('merchants')
    .values(merchantIds.map((id, index) => ({ id, name: `Bench ${index}`, email: `bench-${index}-${id}@example.test`, created_at: now })))
    .execute();
  const ids: string[] = [];
  for (let start = 0; start < merchantIds.length; start += 50) {
    const batch = merchantIds.slice(start, start + 50);
    const accounts = await inTransaction(db, (tx) =>
      ensureAccounts(tx, systemClock, [
        systemAccountKey('sandbox', 'settlement', 'RUB'),
        ...batch.flatMap((id) => [merchantAccountKey('sandbox', id, 'RUB', 'main'), merchantAccountKey('sandbox', id, 'RUB', 'payout')]),
      ]),
    );
    const [settlement, ...merchantAccounts] = accounts;
    for (const account of merchantAccounts) {
      await inTransaction(db, (tx) =>
        transfer(tx, systemClock, {
          id: `bench-funding:${account.id}`,
          debitAccountId: settlement!.id,
          creditAccountId: account.id,
          amount: FUNDING,
          type: 'deposit',
          reference: { type: 'bench', id: 'funding' },
        }),
      );
      ids.push(account.id);
    }
  }
  return ids;
}

type Pick = () => { from: string; to: string };

function spread(ids: readonly string[]): Pick {
  return () => {
    const from = Math.floor(Math.random() * ids.length);
    const to = (from + 1 + Math.floor(Math.random() * (ids.length - 1))) % ids.length;
    return { from: ids[from]!, to: ids[to]! };
  };
}

function hot(ids: readonly string[]): Pick {
  return () => ({ from: ids[0]!, to: ids[1 + Math.floor(Math.random() * (ids.length - 1))]! });
}

/** Runs `count` operations with `concurrency` workers; returns operations per second. */
async function measure(count: number, concurrency: number, operation: (index: number) => Promise<void>): Promise<number> {
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (let index = next++; index < count; index = next++) await operation(index);
    }),
  );
  return count / ((performance.now() - started) / 1000);
}

/**
 * A paid payment's credit (settlement → merchant, settlement → fees) for a random
 * merchant, with the gateway's two accounts spread over `shards` shards; 1 is how
 * every payment credit ran before migration 0009 (one pair of rows for all).
 */
function paymentCreditRun(db: Db, label: string, merchantIds: readonly string[], shards: number) {
  return (index: number) =>
    inTransaction(db, (tx) =>
      creditPaymentPaid(
        tx,
        systemClock,
        {
          paymentId: `bench-${label}-${index}-${newId('event')}`,
          merchantId: merchantIds[Math.floor(Math.random() * merchantIds.length)]!,
          book: 'sandbox',
          amountKopecks: 100_000n,
          feeKopecks: 3_500n,
        },
        shards,
      ),
    ).then(() => undefined);
}

function ledgerRun(db: Db, label: string, pick: Pick) {
  return (index: number) => {
    const { from, to } = pick();
    return inTransaction(db, (tx) =>
      transfer(tx, systemClock, {
        id: `bench:${label}:${index}`,
        debitAccountId: from,
        creditAccountId: to,
        amount: BigInt(1 + Math.floor(Math.random() * 10_000)),
        type: 'transfer',
        reference: { type: 'bench', id: label },
      }),
    ).then(() => undefined);
  };
}

// The minimal equivalent writes in one statement: both account rows (locked in id order first, as
// the ledger does, or two opposite transfers deadlock; the table's no-overdraft CHECK refuses an
// overdraft), the transfer, the two history rows.
const BASELINE_STATEMENT = `
  with locked as (
    select id from ledger_accounts where id in ($1, $2) order by id for update
  ), moved as (
    update ledger_accounts a set
      debits_posted = a.debits_posted + case when a.id = $1 then $3::int8 else 0 end,
      credits_posted = a.credits_posted + case when a.id = $2 then $3::int8 else 0 end
    from locked l where a.id = l.id
    returning a.id, a.credits_posted - a.debits_posted - a.debits_pending as available
  ), inserted as (
    insert into ledger_transfers (id, idempotency_key, debit_account_id, credit_account_id, amount, currency, type,
      reference_type, reference_id, status, pending_id, chain_id, created_at)
    values ($4, $5, $1, $2, $3::int8, 'RUB', 'transfer', 'bench', 'baseline', 'posted', null, $4, $6)
    returning id
  )
  insert into ledger_operations (id, account_id, transfer_id, origin_id, amount, balance_after, created_at)
  select case when m.id = $1 then $7 else $8 end, m.id, i.id, i.id, case when m.id = $1 then -$3::int8 else $3::int8 end, m.available, $6
  from moved m cross join inserted i`;

/** `transactional`: BEGIN; the statement; COMMIT — the shape every ledger call has, inside its caller's transaction. */
function baselineRun(pool: pg.Pool, label: string, pick: Pick, transactional: boolean) {
  return async (index: number) => {
    const { from, to } = pick();
    const transferId = newId('transfer');
    const parameters = [
      from,
      to,
      String(1 + Math.floor(Math.random() * 10_000)),
      transferId,
      `baseline:${transactional ? 'tx' : 'auto'}:${label}:${index}`,
      new Date().toISOString(),
      newId('operation'),
      newId('operation'),
    ];
    if (!transactional) {
      await pool.query(BASELINE_STATEMENT, parameters);
      return;
    }
    const client = await pool.connect();
    try {
      await client.query('begin');
      await client.query(BASELINE_STATEMENT, parameters);
      await client.query('commit');
    } catch (error) {
      await client.query('rollback').catch(() => undefined);
      throw error;
    } finally {
      client.release();
    }
  };
}

async function main(): Promise<void> {
  const database = await createBenchDatabase('ledger');
  const handle = await openDatabase({ url: database.url, poolSize: CONCURRENCY });
  const pool = new pg.Pool({ connectionString: database.url, max: CONCURRENCY });
  try {
    await migrate(handle);
    const ids = await openAccounts(handle.db);
    process.stdout.write(`ledger bench: ${TRANSFERS} transfers per run, ${CONCURRENCY} concurrent, ${ids.length} accounts, PostgreSQL\n`);
    // Warm both paths (connections, plans) before measuring.
    await measure(200, CONCURRENCY, ledgerRun(handle.db, 'warm', spread(ids)));
    await measure(200, CONCURRENCY, baselineRun(pool, 'warm', spread(ids), false));
    await measure(200, CONCURRENCY, baselineRun(pool, 'warm-tx', spread(ids), true));

    const results: { scenario: string; ledger: number; autocommit: number; transactional: number; target: number }[] = [];
    for (const [scenario, pick, target] of [
      ['spread over 1,000 accounts', spread(ids), 0.5],
      ['one hot account', hot(ids), 0.3],
    ] as const) {
      // Interleaved in slices so that load from elsewhere on the machine hits all three alike.
      let ledger = 0;
      let autocommit = 0;
      let transactional = 0;
      const slices = 5;
      for (let slice = 0; slice < slices; slice++) {
        const size = Math.ceil(TRANSFERS / slices);
        ledger += (await measure(size, CONCURRENCY, ledgerRun(handle.db, `${scenario}:${slice}`, pick))) / slices;
        autocommit += (await measure(size, CONCURRENCY, baselineRun(pool, `${scenario}:${slice}`, pick, false))) / slices;
        transactional += (await measure(size, CONCURRENCY, baselineRun(pool, `${scenario}:${slice}`, pick, true))) / slices;
      }
      results.push({ scenario, ledger, autocommit, transactional, target });
    }
    // Payment credits: the gateway's settlement and fees rows sharded (now) against one pair of
    // rows for every payment (before), interleaved in slices in the same run.
    const merchantIds = (await sql<{ merchant_id: string }>`select distinct merchant_id from ledger_accounts where merchant_id is not null`.execute(handle.db)).rows.map((row) => row.merchant_id);
    await measure(200, CONCURRENCY, paymentCreditRun(handle.db, 'warm', merchantIds, 16));
    let sharded = 0;
    let unsharded = 0;
    for (let slice = 0; slice < 5; slice++) {
      const size = Math.ceil(TRANSFERS / 5);
      sharded += (await measure(size, CONCURRENCY, paymentCreditRun(handle.db, `sharded-${slice}`, merchantIds, 16))) / 5;
      unsharded += (await measure(size, CONCURRENCY, paymentCreditRun(handle.db, `unsharded-${slice}`, merchantIds, 1))) / 5;
    }

    let pass = true;
    const rate = (value: number) => value.toFixed(0).padStart(6);
    for (const { scenario, ledger, autocommit, transactional, target } of results) {
      pass &&= ledger / transactional >= target;
      process.stdout.write(
        `${scenario}: ledger ${rate(ledger)} transfers/s\n` +
          `  direct SQL, BEGIN + one statement + COMMIT ${rate(transactional)}/s  ratio ${(ledger / transactional).toFixed(2)} (target >= ${target})\n` +
          `  direct SQL, one autocommit statement       ${rate(autocommit)}/s  ratio ${(ledger / autocommit).toFixed(2)}\n`,
      );
    }
    process.stdout.write(
      `payment credits (2 linked transfers each, random merchants): gateway accounts in 16 shards ${rate(sharded)}/s, ` +
        `one pair of rows (before) ${rate(unsharded)}/s, ratio ${(sharded / unsharded).toFixed(2)}\n`,
    );
    const report = await checkLedgerInvariants(handle.db);
    const count = await sql<{ count: string }>`select count(*)::text as count from ledger_transfers`.execute(handle.db);
    process.stdout.write(`invariants after the run: ${report.ok ? 'all hold' : report.violations.join('; ')} (${count.rows[0]!.count} transfers)\n`);
    process.exitCode = pass && report.ok ? 0 : 1;
  } finally {
    await pool.end();
    await handle.close();
    await database.drop();
  }
}

await main();

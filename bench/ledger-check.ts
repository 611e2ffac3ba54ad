// `npm run bench:ledger-check`: `paygate ledger check` at scale. Loads a ledger of
// BENCH_LEDGER_ENTRIES history entries (default 5,000,000: half as many posted
// transfers from 16 settlement shards to BENCH_LEDGER_MERCHANTS merchant accounts,
// in time order, with running balances and account totals that add up) straight
// by SQL generate_series, as bench/growth-loader.ts loads the growth bench's ledger,
// then runs the batched check on a pool whose statement timeout is the CLI's
// (PAYGATE_DB_STATEMENT_TIMEOUT_MS, 30 s by default) and prints its time and
// the longest single batch. Exit code 1 when the check fails or finds a violation.
//
// BENCH_LEDGER_DATABASE_URL: load into (and keep) this database, or reuse it when it
// already holds the ledger (to time the check again, or time another build's
// `paygate ledger check` against it); without it a fresh database on
// BENCH_DATABASE_URL is used and dropped after. BENCH_LEDGER_BATCH_ROWS: rows per
// statement (default the CLI's).
import { performance } from 'node:perf_hooks';
import { sql } from 'kysely';
import { createBenchDatabase } from './bench-database.ts';
import { envNumber } from './verdict.ts';
import { openDatabase, type DatabaseHandle } from '../src/db/database.ts';
import { migrate } from '../src/db/migrate.ts';
import { checkLedgerInvariants, DEFAULT_BATCH_ROWS, type CheckProgress } from '../src/ledger/ledger-check.ts';

const ENTRIES = envNumber('BENCH_LEDGER_ENTRIES', 5_000_000);
const MERCHANTS = envNumber('BENCH_LEDGER_MERCHANTS', 2_000);
const BATCH_ROWS = envNumber('BENCH_LEDGER_BATCH_ROWS', DEFAULT_BATCH_ROWS);
const STATEMENT_TIMEOUT_MS = envNumber('PAYGATE_DB_STATEMENT_TIMEOUT_MS', 30_000);
const SHARDS = 16;

/** The load, one statement a step: merchants, accounts, transfers, history, totals. */
function loadStatements(transfers: number): Array<{ label: string; sql: string }> {
  return [
    {
      label: 'merchants',
      sql: `insert into merchants (id, name, email, created_at)
            select 'mer_bench' || m, 'Bench ' || m, 'bench' || m || '@example.test', now() - interval '400 days'
              from generate_series(1, ${MERCHANTS}) as m`,
    },
    {
      label: 'accounts',
      sql: `insert into ledger_accounts (id, merchant_id, currency, kind, debits_must_not_exceed_credits, created_at, shard, book)
            select 'acc_bench_main_' || m, 'mer_bench' || m, 'RUB', 'main', true, now() - interval '400 days', 0, 'sandbox'
              from generate_series(1, ${MERCHANTS}) as m
            union all
            select 'acc_bench_settlement_' || s, null, 'RUB', 'settlement', false, now() - interval '400 days', s, 'sandbox'
              from generate_series(0, ${SHARDS - 1}) as s`,
    },
    {
      label: 'transfers',
      sql: `insert into ledger_transfers (id, idempotency_key, debit_account_id, credit_account_id, amount, currency, type,
                                          reference_type, reference_id, status, pending_id, chain_id, created_at)
            select 'trf_bench' || lpad(i::text, 10, '0'), 'bench:' || i, 'acc_bench_settlement_' || (i % ${SHARDS}),
                   'acc_bench_main_' || (1 + i % ${MERCHANTS}), 100 + (i::int8 * 7919) % 100000, 'RUB', 'payment',
                   'payment', 'bench-' || i, 'posted', null, 'trf_bench' || lpad(i::text, 10, '0'),
                   now() - make_interval(secs => (${transfers} - i) * 6)
              from generate_series(1, ${transfers}) as i`,
    },
    {
      label: 'history',
      sql: `insert into ledger_operations (id, account_id, transfer_id, origin_id, amount, balance_after, created_at, type)
            select 'op_' || e.transfer_id || ':' || e.side, e.account_id, e.transfer_id, e.transfer_id, e.amount,
                   sum(e.amount) over (partition by e.account_id order by e.created_at, e.transfer_id rows unbounded preceding),
                   e.created_at, 'payment'
              from (select id as transfer_id, debit_account_id as account_id, -amount as amount, created_at, 0 as side from ledger_transfers
                    union all
                    select id, credit_account_id, amount, created_at, 1 from ledger_transfers) as e
             order by e.created_at, e.transfer_id, e.side`,
    },
    {
      label: 'account totals',
      sql: `update ledger_accounts a set debits_posted = d.debits, credits_posted = d.credits
              from (select account_id, sum(debits) as debits, sum(credits) as credits
                      from (select debit_account_id as account_id, amount as debits, 0::int8 as credits from ledger_transfers
                            union all select credit_account_id, 0, amount from ledger_transfers) as sides
                     group by account_id) as d
             where a.id = d.account_id`,
    },
    { label: 'analyze', sql: 'analyze' },
  ];
}

async function loadLedger(handle: DatabaseHandle): Promise<void> {
  await migrate(handle);
  const existing = await sql<{ n: string }>`select count(*)::text as n from ledger_operations`.execute(handle.db);
  if (Number(existing.rows[0]!.n) > 0) {
    console.log(`reusing the ledger already loaded: ${existing.rows[0]!.n} history entries`);
    return;
  }
  await handle.withScriptSession(async (session) => {
    await session.run('set statement_timeout = 0');
    for (const step of loadStatements(Math.ceil(ENTRIES / 2))) {
      const started = performance.now();
      await session.run(step.sql);
      console.log(`loaded ${step.label} in ${((performance.now() - started) / 1000).toFixed(1)} s`);
    }
  });
}

/** Runs the check, timing it whole and batch by batch. */
async function timeCheck(handle: DatabaseHandle): Promise<boolean> {
  let lastAt = performance.now();
  let longestBatchMs = 0;
  let batches = 0;
  const onProgress = (progress: CheckProgress) => {
    const now = performance.now();
    longestBatchMs = Math.max(longestBatchMs, now - lastAt);
    lastAt = now;
    batches += 1;
    if (batches % 10 === 0) console.log(`  ${progress.phase}: ${progress.rowsRead} rows read`);
  };
  const started = performance.now();
  lastAt = started;
  const report = await checkLedgerInvariants(handle.db, { batchRows: BATCH_ROWS, onProgress });
  const seconds = (performance.now() - started) / 1000;
  console.log(
    `ledger check: ${report.ok ? 'ok' : 'FAILED'} — ${report.accountsChecked} accounts, ${report.transfersChecked} transfers, ` +
      `${seconds.toFixed(1)} s, ${batches} batches of ${BATCH_ROWS} rows, longest batch ${(longestBatchMs / 1000).toFixed(2)} s ` +
      `(statement timeout ${STATEMENT_TIMEOUT_MS / 1000} s)`,
  );
  for (const violation of report.violations) console.log(`  ${violation}`);
  return report.ok;
}

const given = process.env.BENCH_LEDGER_DATABASE_URL;
const bench = given ? { url: given, drop: async () => {} } : await createBenchDatabase('ledger_check');
const handle = await openDatabase({
  url: bench.url,
  poolSize: 2,
  timeouts: { statementMs: STATEMENT_TIMEOUT_MS, lockMs: 10_000, idleInTransactionMs: 60_000 },
});
let ok = false;
try {
  await loadLedger(handle);
  ok = await timeCheck(handle);
} finally {
  await handle.close();
  await bench.drop();
}
process.exitCode = ok ? 0 : 1;

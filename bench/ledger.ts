// `npm run bench:ledger`: the ledger's transfer() on PostgreSQL against its
// anchor, pgbench running the bare transfer (BEGIN; UPDATE debit account; UPDATE
// credit account; INSERT transfer row; COMMIT; prepared statements) on tables
// shaped like the ledger's in the same benchmark database, at the same number of
// clients — spread over 1,000 accounts (a random pair) and all from one hot
// account. Phases alternate pgbench / ledger / pgbench / ledger after a warm-up of
// each, so load from elsewhere on the machine falls on both alike.
// Target: ratio ledger/pgbench >= 0.5 in both scenarios (PASS/MISS printed). The
// exit code is non-zero only on errors, including a broken ledger invariant.
// Uses a fresh database on BENCH_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/postgres), dropped after.
//   BENCH_DURATION_S (default 10) seconds per phase, BENCH_WARMUP_S (3), BENCH_PAIRS (2),
//   BENCH_CONCURRENCY (20) clients on both sides, BENCH_PGBENCH (/usr/bin/pgbench),
//   BENCH_LEDGER_CREDITS=1 adds the payment-credit comparison (system accounts in 16 shards against one pair of rows).
import { performance } from 'node:perf_hooks';
import { sql } from 'kysely';
import { createBenchDatabase } from './bench-database.ts';
import { ANCHOR_ACCOUNTS, createAnchorTables, runPgbench, type TransferSpread } from './pgbench-anchor.ts';
import { envNumber, verdict } from './verdict.ts';
import { systemClock } from '../src/clock.ts';
import { openDatabase } from '../src/db/database.ts';
import { migrate } from '../src/db/migrate.ts';
import { inTransaction, type Db } from '../src/db/transaction.ts';
import { newId } from '../src/ids.ts';
import { ensureAccounts, merchantAccountKey, systemAccountKey } from '../src/ledger/ledger-accounts.ts';
import { checkLedgerInvariants } from '../src/ledger/ledger-check.ts';
import { transfer } from '../src/ledger/ledger-service.ts';
import { creditPaymentPaid } from '../src/payments/payment-credit.ts';

const DURATION_S = envNumber('BENCH_DURATION_S', 10);
const WARMUP_S = envNumber('BENCH_WARMUP_S', 3);
const PAIRS = envNumber('BENCH_PAIRS', 2);
const CONCURRENCY = envNumber('BENCH_CONCURRENCY', 20);
const ACCOUNTS = ANCHOR_ACCOUNTS;
const FUNDING = 1_000_000_000_000n;

/** 500 merchants with a RUB main and payout account each, every account well funded from settlement. */
async function openAccounts(db: Db): Promise<string[]> {
  const now = new Date();
  const merchantIds = Array.from({ length: ACCOUNTS / 2 }, () => newId('merchant'));
  await db
    .insertInto('merchants')
    .values(
      merchantIds.map((id, index) => ({
        id,
        name: `Bench ${index}`,
        email: `bench-${index}-${id}@example.test`,
        created_at: now,
      })),
    )
    .execute();
  const ids: string[] = [];
  for (let start = 0; start < merchantIds.length; start += 50) {
    const batch = merchantIds.slice(start, start + 50);
    const accounts = await inTransaction(db, (tx) =>
      ensureAccounts(tx, systemClock, [
        systemAccountKey('sandbox', 'settlement', 'RUB'),
        ...batch.flatMap((id) => [
          merchantAccountKey('sandbox', id, 'RUB', 'main'),
          merchantAccountKey('sandbox', id, 'RUB', 'payout'),
        ]),
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

/** Runs `operation` with `concurrency` workers for `seconds`; returns completed operations per second. */
async function measureFor(
  seconds: number,
  concurrency: number,
  operation: (index: number) => Promise<void>,
): Promise<number> {
  let next = 0;
  const started = performance.now();
  const deadline = started + seconds * 1000;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < deadline) await operation(next++);
    }),
  );
  return next / ((performance.now() - started) / 1000);
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

interface ScenarioOutcome {
  readonly scenario: string;
  readonly ledger: readonly number[];
  readonly pgbench: readonly number[];
  readonly failed: number;
}

const mean = (values: readonly number[]) => values.reduce((sum, value) => sum + value, 0) / values.length;
const rate = (value: number) => value.toFixed(0).padStart(6);

async function scenario(
  db: Db,
  url: string,
  name: string,
  spread: TransferSpread,
  pick: Pick,
): Promise<ScenarioOutcome> {
  const out = (text: string) => process.stdout.write(text);
  out(
    `\n${name}: ${CONCURRENCY} clients each side, ${DURATION_S} s phases, ${PAIRS} pairs after ${WARMUP_S} s warm-up each\n`,
  );
  const line = (phase: string, side: string, value: number) =>
    out(`  ${phase.padEnd(7)} ${side.padEnd(8)} ${rate(value)} transfers/s\n`);
  line('warm-up', 'pgbench', (await runPgbench(url, spread, CONCURRENCY, WARMUP_S)).transactionsPerSecond);
  line('warm-up', 'ledger', await measureFor(WARMUP_S, CONCURRENCY, ledgerRun(db, `${spread}:warm`, pick)));
  const ledger: number[] = [];
  const pgbench: number[] = [];
  let failed = 0;
  for (let pair = 1; pair <= PAIRS; pair++) {
    const anchor = await runPgbench(url, spread, CONCURRENCY, DURATION_S);
    failed += anchor.failed;
    pgbench.push(anchor.transactionsPerSecond);
    line(String(pair), 'pgbench', anchor.transactionsPerSecond);
    ledger.push(await measureFor(DURATION_S, CONCURRENCY, ledgerRun(db, `${spread}:${pair}`, pick)));
    line(String(pair), 'ledger', ledger.at(-1)!);
  }
  const ratio = mean(ledger) / mean(pgbench);
  const minRatio = Math.min(...ledger.map((value, index) => value / pgbench[index]!));
  out(
    `  mean: pgbench ${mean(pgbench).toFixed(0)}/s, ledger ${mean(ledger).toFixed(0)}/s` +
      (failed ? ` (pgbench: ${failed} transactions failed after retries)` : '') +
      `\n  ratio ledger/pgbench ${ratio.toFixed(2)} (min ${minRatio.toFixed(2)})   target >= 0.5   ${verdict(ratio >= 0.5)}\n`,
  );
  return { scenario: name, ledger, pgbench, failed };
}

/** Payment credits with the gateway's accounts in 16 shards against one pair of rows for every payment (before migration 0009). */
async function paymentCredits(db: Db): Promise<void> {
  const merchantIds = (
    await sql<{
      merchant_id: string;
    }>`select distinct merchant_id from ledger_accounts where merchant_id is not null`.execute(db)
  ).rows.map((row) => row.merchant_id);
  await measureFor(WARMUP_S, CONCURRENCY, paymentCreditRun(db, 'warm', merchantIds, 16));
  const sharded: number[] = [];
  const unsharded: number[] = [];
  for (let pair = 1; pair <= PAIRS; pair++) {
    sharded.push(await measureFor(DURATION_S, CONCURRENCY, paymentCreditRun(db, `sharded-${pair}`, merchantIds, 16)));
    unsharded.push(
      await measureFor(DURATION_S, CONCURRENCY, paymentCreditRun(db, `unsharded-${pair}`, merchantIds, 1)),
    );
  }
  process.stdout.write(
    `\npayment credits (2 linked transfers each, random merchants): gateway accounts in 16 shards ${rate(mean(sharded))}/s, ` +
      `one pair of rows (before) ${rate(mean(unsharded))}/s, ratio ${(mean(sharded) / mean(unsharded)).toFixed(2)}\n`,
  );
}

async function main(): Promise<void> {
  const database = await createBenchDatabase('ledger');
  const handle = await openDatabase({ url: database.url, poolSize: CONCURRENCY });
  try {
    await migrate(handle);
    const ids = await openAccounts(handle.db);
    await createAnchorTables(database.url);
    process.stdout.write(
      `ledger bench on PostgreSQL: transfer() in this process (pool ${CONCURRENCY}) against pgbench, ${ids.length} accounts each\n`,
    );
    const outcomes = [
      await scenario(handle.db, database.url, 'spread over 1,000 accounts (random pair)', 'spread', spread(ids)),
      await scenario(handle.db, database.url, 'one hot account (always the debit side)', 'hot', hot(ids)),
    ];
    if (process.env.BENCH_LEDGER_CREDITS) await paymentCredits(handle.db);

    process.stdout.write('\nsummary (ratio = mean ledger transfers/s / mean pgbench transactions/s)\n');
    for (const { scenario: name, ledger, pgbench } of outcomes) {
      const ratio = mean(ledger) / mean(pgbench);
      process.stdout.write(
        `  ${name.padEnd(42)} ledger ${rate(mean(ledger))} / pgbench ${rate(mean(pgbench))}  ratio ${ratio.toFixed(2)} (>= 0.5)  ${verdict(ratio >= 0.5)}\n`,
      );
    }
    const report = await checkLedgerInvariants(handle.db);
    const count = await sql<{ count: string }>`select count(*)::text as count from ledger_transfers`.execute(handle.db);
    process.stdout.write(
      `invariants after the run: ${report.ok ? 'all hold' : report.violations.join('; ')} (${count.rows[0]!.count} transfers)\n`,
    );
    // A broken invariant is an error; a missed target is not.
    process.exitCode = report.ok ? 0 : 1;
  } finally {
    await handle.close();
    await database.drop();
  }
}

await main();

// The ledger's anchor: pgbench running the bare transfer — BEGIN; UPDATE the debit
// account; UPDATE the credit account; INSERT the transfer row; COMMIT — as
// prepared statements, on tables shaped like the ledger's (same columns, checks,
// indexes and foreign keys, copied from ledger_accounts and ledger_transfers) in
// the benchmark's own database. It is what PostgreSQL itself can do for one
// transfer; the ledger's transfer() is measured against it.
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';

const PGBENCH = process.env.BENCH_PGBENCH ?? '/usr/bin/pgbench';
export const ANCHOR_ACCOUNTS = 1_000;

/** Tables like the ledger's (copied after migration) holding ANCHOR_ACCOUNTS funded accounts with ids '1'…'1000'. */
export async function createAnchorTables(url: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(`
      create table anchor_ledger_accounts (like ledger_accounts including all);
      create table anchor_ledger_transfers (like ledger_transfers including all);
      -- LIKE copies no foreign keys; the ledger's transfer rows check theirs on every insert.
      alter table anchor_ledger_transfers
        add foreign key (debit_account_id) references anchor_ledger_accounts (id),
        add foreign key (credit_account_id) references anchor_ledger_accounts (id),
        add foreign key (pending_id) references anchor_ledger_transfers (id);
      insert into anchor_ledger_accounts (id, merchant_id, currency, kind, debits_must_not_exceed_credits, credits_posted, created_at, book, shard)
        select n::text, 'merchant_' || n, 'RUB', 'main', true, 1000000000000, now(), 'sandbox', 0 from generate_series(1, ${ANCHOR_ACCOUNTS}) n;
    `);
    // The ledger's tables are analysed by autovacuum only later; the anchor gets no head start either way.
    await client.query('analyze anchor_ledger_accounts');
  } finally {
    await client.end();
  }
}

export type TransferSpread = 'spread' | 'hot';

/** The pgbench script: a random pair of distinct accounts, or always from account 1 (the hot account) to a random other. */
function transferScript(spread: TransferSpread): string {
  const pick =
    spread === 'spread'
      ? `\\set from random(1, ${ANCHOR_ACCOUNTS})\n\\set to 1 + (:from + random(0, ${ANCHOR_ACCOUNTS - 2})) % ${ANCHOR_ACCOUNTS}\n`
      : `\\set from 1\n\\set to random(2, ${ANCHOR_ACCOUNTS})\n`;
  return (
    `\\set amount random(1, 10000)\n${pick}` +
    'BEGIN;\n' +
    'UPDATE anchor_ledger_accounts SET debits_posted = debits_posted + :amount WHERE id = :from;\n' +
    'UPDATE anchor_ledger_accounts SET credits_posted = credits_posted + :amount WHERE id = :to;\n' +
    'INSERT INTO anchor_ledger_transfers (id, idempotency_key, debit_account_id, credit_account_id, amount, currency, type, ' +
    'reference_type, reference_id, status, chain_id, created_at) ' +
    "VALUES (gen_random_uuid()::text, gen_random_uuid()::text, :from, :to, :amount, 'RUB', 'transfer', 'bench', 'pgbench', 'posted', " +
    'gen_random_uuid()::text, now());\n' +
    'COMMIT;\n'
  );
}

export interface PgbenchResult {
  readonly transactionsPerSecond: number;
  /** Transactions that failed even after retries (deadlocks between two opposite transfers are retried). */
  readonly failed: number;
}

/** Runs the transfer script for `durationS` seconds with `clients` connections (-M prepared). */
export async function runPgbench(
  url: string,
  spread: TransferSpread,
  clients: number,
  durationS: number,
): Promise<PgbenchResult> {
  const folder = await mkdtemp(join(tmpdir(), 'paygate-pgbench-'));
  const script = join(folder, `transfer-${spread}.sql`);
  try {
    await writeFile(script, transferScript(spread));
    const { stdout } = await promisify(execFile)(PGBENCH, [
      '--no-vacuum',
      '--protocol=prepared',
      `--client=${clients}`,
      '--jobs=2',
      `--time=${Math.max(1, Math.round(durationS))}`,
      '--max-tries=10',
      `--file=${script}`,
      url,
    ]);
    const tps = /tps = ([\d.]+) \(without initial connection time\)/.exec(stdout);
    if (!tps) throw new Error(`pgbench printed no tps:\n${stdout}`);
    const failed = /number of failed transactions: (\d+)/.exec(stdout);
    return { transactionsPerSecond: Number(tps[1]), failed: failed ? Number(failed[1]) : 0 };
  } finally {
    await rm(folder, { recursive: true, force: true });
  }
}

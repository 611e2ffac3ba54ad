// The ledger's invariants checked over the stored tables: `paygate ledger check`
// runs checkLedgerInvariants and exits non-zero on any violation; the test suite
// runs it after every ledger test.
//
// The check reads the tables in batches — transfers by id, history entries by
// seq, accounts by id — so that no single statement reads more than a batch,
// however large the ledger: one statement over 20 million history entries
// outlived the CLI's statement timeout. Every batch runs inside one REPEATABLE
// READ, READ ONLY transaction, so the batches add up over one snapshot of a
// ledger that the running gateway keeps writing to, and each stays well under
// the statement timeout on its own. The per-account sums are kept in memory:
// one entry per account, not per transfer.
import { sql } from 'kysely';
import type { Executor } from '../db/transaction.ts';

export interface InvariantReport {
  readonly ok: boolean;
  readonly violations: string[];
  readonly accountsChecked: number;
  readonly transfersChecked: number;
}

/** How far the check has read, after each batch. */
export interface CheckProgress {
  readonly phase: 'accounts' | 'transfers' | 'history';
  /** Rows of the phase's table read so far. */
  readonly rowsRead: number;
}

export interface CheckOptions {
  /** Rows per statement (default DEFAULT_BATCH_ROWS); small in tests to cross many batch edges. */
  readonly batchRows?: number;
  readonly onProgress?: (progress: CheckProgress) => void;
}

/** At most this many offending rows are reported per invariant. */
const MAX_REPORTED = 20;
/** Rows one statement reads: about a tenth of a second of PostgreSQL's time, far under the CLI's timeout. */
export const DEFAULT_BATCH_ROWS = 100_000;
const BATCH_ROWS_MAX = 10_000_000;

/** An account's four totals, as stored or as its transfers add them up. */
interface Totals {
  debitsPending: bigint;
  debitsPosted: bigint;
  creditsPending: bigint;
  creditsPosted: bigint;
}

interface StoredAccount extends Totals {
  readonly id: string;
  readonly currency: string;
  readonly guarded: boolean;
}

/** An account's history as its entries add it up: their sum and the newest entry's balance. */
interface HistorySum {
  summed: bigint;
  lastSeq: bigint;
  lastBalance: bigint;
}

const zeroTotals = (): Totals => ({ debitsPending: 0n, debitsPosted: 0n, creditsPending: 0n, creditsPosted: 0n });
const availableOf = (account: Totals): bigint => account.creditsPosted - account.debitsPosted - account.debitsPending;
const totalsText = (totals: Totals): string =>
  [totals.debitsPending, totals.debitsPosted, totals.creditsPending, totals.creditsPosted].join('/');
const sameTotals = (a: Totals, b: Totals): boolean => totalsText(a) === totalsText(b);

export async function checkLedgerInvariants(db: Executor, options: CheckOptions = {}): Promise<InvariantReport> {
  const batchRows = options.batchRows ?? DEFAULT_BATCH_ROWS;
  if (!Number.isInteger(batchRows) || batchRows < 1 || batchRows > BATCH_ROWS_MAX)
    throw new RangeError(`batchRows must be an integer from 1 to ${BATCH_ROWS_MAX}`);
  const run = (snapshot: Executor) => checkSnapshot(snapshot, batchRows, options.onProgress ?? (() => {}));
  if (db.isTransaction) return run(db);
  return db.transaction().setIsolationLevel('repeatable read').setAccessMode('read only').execute(run);
}

async function checkSnapshot(
  db: Executor,
  batchRows: number,
  onProgress: (progress: CheckProgress) => void,
): Promise<InvariantReport> {
  const accounts = await readAccounts(db, batchRows, onProgress);
  const transfers = await readTransfers(db, batchRows, onProgress);
  const history = await readHistory(db, batchRows, onProgress);
  const violations = [
    ...doubleEntryViolations(accounts),
    ...totalsViolations(accounts, transfers.derived),
    ...overdrawnViolations(accounts),
    ...transfers.malformed.slice(0, MAX_REPORTED),
    ...historyViolations(accounts, history),
  ];
  return {
    ok: violations.length === 0,
    violations,
    accountsChecked: accounts.length,
    transfersChecked: transfers.count,
  };
}

/** Every account with its stored totals, read by id in batches. */
async function readAccounts(
  db: Executor,
  batchRows: number,
  onProgress: (progress: CheckProgress) => void,
): Promise<StoredAccount[]> {
  const accounts: StoredAccount[] = [];
  for (let after = ''; ;) {
    const { rows } = await sql<{
      id: string;
      currency: string;
      guarded: boolean;
      debits_pending: string;
      debits_posted: string;
      credits_pending: string;
      credits_posted: string;
    }>`
      select id, currency, debits_must_not_exceed_credits as guarded, debits_pending::text, debits_posted::text,
             credits_pending::text, credits_posted::text
      from ledger_accounts where id > ${after} order by id limit ${batchRows}`.execute(db);
    for (const row of rows)
      accounts.push({
        id: row.id,
        currency: row.currency,
        guarded: row.guarded,
        debitsPending: BigInt(row.debits_pending),
        debitsPosted: BigInt(row.debits_posted),
        creditsPending: BigInt(row.credits_pending),
        creditsPosted: BigInt(row.credits_posted),
      });
    onProgress({ phase: 'accounts', rowsRead: accounts.length });
    if (rows.length < batchRows) return accounts;
    after = rows.at(-1)!.id;
  }
}

/** 1. Double entry: per currency, all debits equal all credits (posted and pending). */
function doubleEntryViolations(accounts: readonly StoredAccount[]): string[] {
  const byCurrency = new Map<string, Totals>();
  for (const account of accounts) {
    const sums = byCurrency.get(account.currency) ?? zeroTotals();
    sums.debitsPending += account.debitsPending;
    sums.debitsPosted += account.debitsPosted;
    sums.creditsPending += account.creditsPending;
    sums.creditsPosted += account.creditsPosted;
    byCurrency.set(account.currency, sums);
  }
  const violations: string[] = [];
  for (const [currency, sums] of [...byCurrency].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    if (sums.debitsPosted !== sums.creditsPosted)
      violations.push(
        `${currency}: posted debits ${sums.debitsPosted} differ from posted credits ${sums.creditsPosted}`,
      );
    if (sums.debitsPending !== sums.creditsPending)
      violations.push(
        `${currency}: pending debits ${sums.debitsPending} differ from pending credits ${sums.creditsPending}`,
      );
  }
  return violations;
}

/** 2. Every account's stored totals equal what its transfers add up to. */
function totalsViolations(accounts: readonly StoredAccount[], derived: ReadonlyMap<string, Totals>): string[] {
  return accounts
    .filter((account) => !sameTotals(account, derived.get(account.id) ?? zeroTotals()))
    .slice(0, MAX_REPORTED)
    .map(
      (account) =>
        `account ${account.id}: stored totals (dr pending/dr posted/cr pending/cr posted) ${totalsText(account)} but its transfers give ${totalsText(derived.get(account.id) ?? zeroTotals())}`,
    );
}

/** 3. No merchant account below zero available. */
function overdrawnViolations(accounts: readonly StoredAccount[]): string[] {
  return accounts
    .filter((account) => account.guarded && account.debitsPending + account.debitsPosted > account.creditsPosted)
    .slice(0, MAX_REPORTED)
    .map((account) => `account ${account.id}: available ${availableOf(account)} is below zero`);
}

/**
 * The transfers by id in batches: each batch's sums per account (a reservation counts as pending
 * until a post or void closes it), and 4. each transfer stays within one currency, and a post or
 * void closes a reservation of the same accounts, never for more.
 */
async function readTransfers(
  db: Executor,
  batchRows: number,
  onProgress: (progress: CheckProgress) => void,
): Promise<{ derived: Map<string, Totals>; malformed: string[]; count: number }> {
  const derived = new Map<string, Totals>();
  const malformed: string[] = [];
  let count = 0;
  for (let after = ''; ;) {
    const last = await lastIdOfBatch(db, after, batchRows);
    if (last === null) break;
    await addTransferSums(db, after, last.id, derived);
    if (malformed.length < MAX_REPORTED) malformed.push(...(await malformedTransfers(db, after, last.id)));
    count += last.rows;
    onProgress({ phase: 'transfers', rowsRead: count });
    if (last.rows < batchRows) break;
    after = last.id;
  }
  return { derived, malformed, count };
}

/** The id ending the batch of transfers after `after`, and how many the batch holds; null when none is left. */
async function lastIdOfBatch(
  db: Executor,
  after: string,
  batchRows: number,
): Promise<{ id: string; rows: number } | null> {
  const { rows } = await sql<{ id: string | null; rows: string }>`
    select max(id) as id, count(*)::text as rows
    from (select id from ledger_transfers where id > ${after} order by id limit ${batchRows}) batch`.execute(db);
  const row = rows[0]!;
  return row.id === null ? null : { id: row.id, rows: Number(row.rows) };
}

async function addTransferSums(db: Executor, after: string, last: string, derived: Map<string, Totals>): Promise<void> {
  const { rows } = await sql<{
    account_id: string;
    debits_pending: string;
    debits_posted: string;
    credits_pending: string;
    credits_posted: string;
  }>`
    with effective as (
      select t.debit_account_id, t.credit_account_id,
             case when t.status = 'posted' then t.amount else 0 end as posted,
             case when t.status = 'pending' and not exists (select 1 from ledger_transfers c where c.pending_id = t.id)
                  then t.amount else 0 end as pending
      from ledger_transfers t where t.id > ${after} and t.id <= ${last}
    ), sides as (
      select debit_account_id as account_id, pending as debits_pending, posted as debits_posted, 0::int8 as credits_pending, 0::int8 as credits_posted from effective
      union all
      select credit_account_id, 0, 0, pending, posted from effective
    )
    select account_id, sum(debits_pending)::text as debits_pending, sum(debits_posted)::text as debits_posted,
           sum(credits_pending)::text as credits_pending, sum(credits_posted)::text as credits_posted
    from sides group by account_id`.execute(db);
  for (const row of rows) {
    const sums = derived.get(row.account_id) ?? zeroTotals();
    sums.debitsPending += BigInt(row.debits_pending);
    sums.debitsPosted += BigInt(row.debits_posted);
    sums.creditsPending += BigInt(row.credits_pending);
    sums.creditsPosted += BigInt(row.credits_posted);
    derived.set(row.account_id, sums);
  }
}

async function malformedTransfers(db: Executor, after: string, last: string): Promise<string[]> {
  const { rows } = await sql<{ id: string; problem: string }>`
    select t.id, case
        when d.currency <> t.currency or c.currency <> t.currency then 'accounts of another currency'
        when t.pending_id is not null and p.status <> 'pending' then 'closes a transfer that is not a reservation'
        when t.pending_id is not null and (p.debit_account_id <> t.debit_account_id or p.credit_account_id <> t.credit_account_id) then 'closes a reservation of other accounts'
        when t.pending_id is not null and t.amount > p.amount then 'posts more than was reserved'
        when t.status <> 'voided' and t.amount <= 0 then 'moves no money'
      end as problem
    from ledger_transfers t
    join ledger_accounts d on d.id = t.debit_account_id
    join ledger_accounts c on c.id = t.credit_account_id
    left join ledger_transfers p on p.id = t.pending_id
    where t.id > ${after} and t.id <= ${last}
      and (d.currency <> t.currency or c.currency <> t.currency
       or (t.pending_id is not null and (p.status <> 'pending' or p.debit_account_id <> t.debit_account_id
           or p.credit_account_id <> t.credit_account_id or t.amount > p.amount))
       or (t.status <> 'voided' and t.amount <= 0))
    order by t.id limit ${MAX_REPORTED}`.execute(db);
  return rows.map((row) => `transfer ${row.id}: ${row.problem}`);
}

/** Each account's history summed, read by seq in ranges of `batchRows` up to the newest entry of the snapshot. */
async function readHistory(
  db: Executor,
  batchRows: number,
  onProgress: (progress: CheckProgress) => void,
): Promise<Map<string, HistorySum>> {
  const sums = new Map<string, HistorySum>();
  const bounds = await sql<{ first: string | null; last: string | null }>`
    select min(seq)::text as first, max(seq)::text as last from ledger_operations`.execute(db);
  const { first, last } = bounds.rows[0]!;
  if (first === null || last === null) return sums;
  let rowsRead = 0;
  // seq ranges rather than LIMIT batches: a range reads through the primary key, gaps only make a batch smaller.
  for (let from = BigInt(first); from <= BigInt(last); from += BigInt(batchRows)) {
    const { rows } = await sql<{
      account_id: string;
      summed: string;
      entries: string;
      last_seq: string;
      last_balance: string;
    }>`
      select account_id, sum(amount)::text as summed, count(*)::text as entries, max(seq)::text as last_seq,
             (array_agg(balance_after order by seq desc))[1]::text as last_balance
      from ledger_operations where seq >= ${from} and seq < ${from + BigInt(batchRows)}
      group by account_id`.execute(db);
    for (const row of rows) addHistoryBatch(sums, row);
    rowsRead += rows.reduce((total, row) => total + Number(row.entries), 0);
    onProgress({ phase: 'history', rowsRead });
  }
  return sums;
}

function addHistoryBatch(
  sums: Map<string, HistorySum>,
  row: { account_id: string; summed: string; last_seq: string; last_balance: string },
): void {
  const seq = BigInt(row.last_seq);
  const known = sums.get(row.account_id);
  if (!known) {
    sums.set(row.account_id, { summed: BigInt(row.summed), lastSeq: seq, lastBalance: BigInt(row.last_balance) });
    return;
  }
  known.summed += BigInt(row.summed);
  if (seq > known.lastSeq) {
    known.lastSeq = seq;
    known.lastBalance = BigInt(row.last_balance);
  }
}

/** 5. The history adds up: per account the entries sum to the available balance, and the newest one shows it. */
function historyViolations(accounts: readonly StoredAccount[], history: ReadonlyMap<string, HistorySum>): string[] {
  const violations: string[] = [];
  for (const account of accounts) {
    if (violations.length === MAX_REPORTED) break;
    const available = availableOf(account);
    const sum = history.get(account.id);
    if ((sum?.summed ?? 0n) === available && (sum === undefined || sum.lastBalance === available)) continue;
    violations.push(
      `account ${account.id}: available ${available} but its history sums to ${sum?.summed ?? 0n} (last balance_after ${sum?.lastBalance ?? 'none'})`,
    );
  }
  return violations;
}

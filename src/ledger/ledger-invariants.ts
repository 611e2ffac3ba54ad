// The ledger's invariants as code, twice: asserted in memory on every write
// before (or, for a one-statement write, as) it lands — a failure is a bug in
// this module, so the process stops rather than write money that does not add
// up (TigerBeetle's rule: assert, crash, never continue on a broken invariant) —
// and checked over the stored tables: `paygate ledger check` runs
// checkLedgerInvariants and exits non-zero on any violation; the test suite runs
// it after every ledger test.
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import type { Executor } from '../db/transaction.ts';
import type { LedgerCurrency } from './ledger-tables.ts';

/** No single movement above 10^15 minor units (10^9 USDT, 10^13 RUB): far below int8's limit. */
export const MAX_AMOUNT_MINOR = 1_000_000_000_000_000n;

/** An account's totals as a write leaves them. */
export interface WrittenTotals {
  readonly id: string;
  readonly currency: LedgerCurrency;
  readonly debitsPending: bigint;
  readonly debitsPosted: bigint;
  readonly creditsPending: bigint;
  readonly creditsPosted: bigint;
}

/** What the in-memory assertions read of a transfer row. */
export interface WrittenTransfer {
  readonly id: string;
  readonly amount: bigint;
  readonly debit_account_id: string;
  readonly credit_account_id: string;
}

/** Every transfer moves 0..MAX_AMOUNT_MINOR between two different accounts (a void's row carries 0 effect, not a negative amount). */
export function assertTransfersWellFormed(transfers: readonly WrittenTransfer[]): void {
  for (const transfer of transfers) {
    assert.ok(
      transfer.amount >= 0n && transfer.amount <= MAX_AMOUNT_MINOR,
      `ledger transfer ${transfer.id} has amount ${transfer.amount}`,
    );
    assert.notEqual(
      transfer.debit_account_id,
      transfer.credit_account_id,
      `ledger transfer ${transfer.id} moves money to its own account`,
    );
  }
}

/** No total below zero; an account whose debits must not exceed its credits is not overdrawn. */
export function assertTotalsValid(accounts: Iterable<WrittenTotals & { readonly guarded?: boolean }>): void {
  for (const account of accounts) {
    for (const total of [account.debitsPending, account.debitsPosted, account.creditsPending, account.creditsPosted]) {
      assert.ok(total >= 0n, `ledger account ${account.id} would get a negative total`);
    }
    if (account.guarded === true) {
      assert.ok(
        account.debitsPending + account.debitsPosted <= account.creditsPosted,
        `ledger account ${account.id} would be overdrawn`,
      );
    }
  }
}

/** Double entry across one write: per currency, the debits added equal the credits added (posted and pending together). */
export function assertBalanced(after: Iterable<WrittenTotals>, before: ReadonlyMap<string, WrittenTotals>): void {
  const netByCurrency = new Map<LedgerCurrency, bigint>();
  for (const account of after) {
    const previous = before.get(account.id)!;
    const credits = account.creditsPosted + account.creditsPending - previous.creditsPosted - previous.creditsPending;
    const debits = account.debitsPosted + account.debitsPending - previous.debitsPosted - previous.debitsPending;
    netByCurrency.set(account.currency, (netByCurrency.get(account.currency) ?? 0n) + credits - debits);
  }
  for (const [currency, net] of netByCurrency)
    assert.equal(net, 0n, `ledger chain does not balance in ${currency}: ${net}`);
}

/** A one-statement lone transfer changed exactly its two accounts, of one currency, to valid totals. */
export function assertLoneWritten(transfer: WrittenTransfer, accounts: readonly WrittenTotals[]): void {
  const debit = accounts.find((account) => account.id === transfer.debit_account_id);
  const credit = accounts.find((account) => account.id === transfer.credit_account_id);
  assert.ok(
    debit && credit && accounts.length === 2,
    `ledger lone transfer ${transfer.id} changed ${accounts.length} accounts`,
  );
  assert.equal(debit.currency, credit.currency, `ledger lone transfer ${transfer.id} moved money between currencies`);
  assertTransfersWellFormed([transfer]);
  assertTotalsValid(accounts);
}

export interface InvariantReport {
  readonly ok: boolean;
  readonly violations: string[];
  readonly accountsChecked: number;
  readonly transfersChecked: number;
}

/** At most this many offending rows are reported per invariant. */
const MAX_REPORTED = 20;

export async function checkLedgerInvariants(db: Executor): Promise<InvariantReport> {
  const violations: string[] = [];

  // 1. Double entry: per currency, all debits equal all credits (posted and pending).
  const sums = await sql<{
    currency: string;
    debits_posted: string;
    credits_posted: string;
    debits_pending: string;
    credits_pending: string;
  }>`
    select currency, sum(debits_posted)::text as debits_posted, sum(credits_posted)::text as credits_posted,
           sum(debits_pending)::text as debits_pending, sum(credits_pending)::text as credits_pending
    from ledger_accounts group by currency order by currency`.execute(db);
  for (const row of sums.rows) {
    if (row.debits_posted !== row.credits_posted) {
      violations.push(
        `${row.currency}: posted debits ${row.debits_posted} differ from posted credits ${row.credits_posted}`,
      );
    }
    if (row.debits_pending !== row.credits_pending) {
      violations.push(
        `${row.currency}: pending debits ${row.debits_pending} differ from pending credits ${row.credits_pending}`,
      );
    }
  }

  // 2. Every account's stored totals equal what its transfers add up to.
  const mismatched = await sql<{ id: string; stored: string; derived: string }>`
    with effective as (
      select t.debit_account_id, t.credit_account_id,
             case when t.status = 'posted' then t.amount else 0 end as posted,
             case when t.status = 'pending' and not exists (select 1 from ledger_transfers c where c.pending_id = t.id)
                  then t.amount else 0 end as pending
      from ledger_transfers t
    ), sides as (
      select debit_account_id as account_id, pending as debits_pending, posted as debits_posted, 0::int8 as credits_pending, 0::int8 as credits_posted from effective
      union all
      select credit_account_id, 0, 0, pending, posted from effective
    ), derived as (
      select account_id, sum(debits_pending) as debits_pending, sum(debits_posted) as debits_posted,
             sum(credits_pending) as credits_pending, sum(credits_posted) as credits_posted
      from sides group by account_id
    )
    select a.id,
           concat_ws('/', a.debits_pending, a.debits_posted, a.credits_pending, a.credits_posted) as stored,
           concat_ws('/', coalesce(d.debits_pending, 0), coalesce(d.debits_posted, 0), coalesce(d.credits_pending, 0), coalesce(d.credits_posted, 0)) as derived
    from ledger_accounts a left join derived d on d.account_id = a.id
    where a.debits_pending <> coalesce(d.debits_pending, 0) or a.debits_posted <> coalesce(d.debits_posted, 0)
       or a.credits_pending <> coalesce(d.credits_pending, 0) or a.credits_posted <> coalesce(d.credits_posted, 0)
    order by a.id limit ${MAX_REPORTED}`.execute(db);
  for (const row of mismatched.rows) {
    violations.push(
      `account ${row.id}: stored totals (dr pending/dr posted/cr pending/cr posted) ${row.stored} but its transfers give ${row.derived}`,
    );
  }

  // 3. No merchant account below zero available.
  const overdrawn = await sql<{ id: string; available: string }>`
    select id, (credits_posted - debits_posted - debits_pending)::text as available from ledger_accounts
    where debits_must_not_exceed_credits and debits_pending + debits_posted > credits_posted
    order by id limit ${MAX_REPORTED}`.execute(db);
  for (const row of overdrawn.rows) violations.push(`account ${row.id}: available ${row.available} is below zero`);

  // 4. Each transfer stays within one currency, and a post or void closes a reservation of the same accounts, never for more.
  const malformed = await sql<{ id: string; problem: string }>`
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
    where d.currency <> t.currency or c.currency <> t.currency
       or (t.pending_id is not null and (p.status <> 'pending' or p.debit_account_id <> t.debit_account_id
           or p.credit_account_id <> t.credit_account_id or t.amount > p.amount))
       or (t.status <> 'voided' and t.amount <= 0)
    order by t.id limit ${MAX_REPORTED}`.execute(db);
  for (const row of malformed.rows) violations.push(`transfer ${row.id}: ${row.problem}`);

  // 5. The history adds up: per account the entries sum to the available balance, and the newest one shows it.
  const history = await sql<{ id: string; available: string; summed: string; last: string | null }>`
    with sums as (select account_id, sum(amount) as summed, max(seq) as last_seq from ledger_operations group by account_id)
    select a.id, (a.credits_posted - a.debits_posted - a.debits_pending)::text as available,
           coalesce(s.summed, 0)::text as summed, o.balance_after::text as last
    from ledger_accounts a
    left join sums s on s.account_id = a.id
    left join ledger_operations o on o.seq = s.last_seq
    where coalesce(s.summed, 0) <> a.credits_posted - a.debits_posted - a.debits_pending
       or (o.seq is not null and o.balance_after <> a.credits_posted - a.debits_posted - a.debits_pending)
    order by a.id limit ${MAX_REPORTED}`.execute(db);
  for (const row of history.rows) {
    violations.push(
      `account ${row.id}: available ${row.available} but its history sums to ${row.summed} (last balance_after ${row.last ?? 'none'})`,
    );
  }

  const counts = await sql<{ accounts: string; transfers: string }>`
    select (select count(*) from ledger_accounts)::text as accounts, (select count(*) from ledger_transfers)::text as transfers`.execute(
    db,
  );
  return {
    ok: violations.length === 0,
    violations,
    accountsChecked: Number(counts.rows[0]!.accounts),
    transfersChecked: Number(counts.rows[0]!.transfers),
  };
}

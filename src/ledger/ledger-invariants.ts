// The ledger's invariants as code. `paygate ledger check` runs this and exits
// non-zero on any violation; the test suite runs it after every ledger test.
import { sql } from 'kysely';
import type { Executor } from '../db/transaction.ts';

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
  const sums = await sql<{ currency: string; debits_posted: string; credits_posted: string; debits_pending: string; credits_pending: string }>`
    select currency, sum(debits_posted)::text as debits_posted, sum(credits_posted)::text as credits_posted,
           sum(debits_pending)::text as debits_pending, sum(credits_pending)::text as credits_pending
    from ledger_accounts group by currency order by currency`.execute(db);
  for (const row of sums.rows) {
    if (row.debits_posted !== row.credits_posted) {
      violations.push(`${row.currency}: posted debits ${row.debits_posted} differ from posted credits ${row.credits_posted}`);
    }
    if (row.debits_pending !== row.credits_pending) {
      violations.push(`${row.currency}: pending debits ${row.debits_pending} differ from pending credits ${row.credits_pending}`);
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
    violations.push(`account ${row.id}: stored totals (dr pending/dr posted/cr pending/cr posted) ${row.stored} but its transfers give ${row.derived}`);
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
    violations.push(`account ${row.id}: available ${row.available} but its history sums to ${row.summed} (last balance_after ${row.last ?? 'none'})`);
  }

  const counts = await sql<{ accounts: string; transfers: string }>`
    select (select count(*) from ledger_accounts)::text as accounts, (select count(*) from ledger_transfers)::text as transfers`.execute(db);
  return {
    ok: violations.length === 0,
    violations,
    accountsChecked: Number(counts.rows[0]!.accounts),
    transfersChecked: Number(counts.rows[0]!.transfers),
  };
}

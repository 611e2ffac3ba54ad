// All SQL of the ledger. Account rows are only ever changed while locked in id
// order (see lockAccounts): the general path computes the new totals in memory
// and writes absolute values; a lone transfer or reservation (writeLoneTransfer)
// adds the amount in one statement that checks affordability on the row it updates.
import { sql, type Selectable } from 'kysely';
import type { Executor, Tx } from '../db/transaction.ts';
import type { AccountKind, LedgerBook, LedgerCurrency, LedgerTables, TransferStatus } from './ledger-tables.ts';

export type AccountRow = Selectable<LedgerTables['ledger_accounts']>;
export type TransferRow = Selectable<LedgerTables['ledger_transfers']>;

export interface AccountKey {
  readonly book: LedgerBook;
  /** null for the gateway's own accounts. */
  readonly merchantId: string | null;
  readonly currency: LedgerCurrency;
  readonly kind: AccountKind;
  /** Gateway accounts only: which shard (0 when absent). */
  readonly shard?: number | undefined;
}

export async function findAccountsByKeys(
  db: Executor<LedgerTables>,
  keys: readonly AccountKey[],
): Promise<AccountRow[]> {
  if (keys.length === 0) return [];
  return db
    .selectFrom('ledger_accounts')
    .selectAll()
    .where((eb) =>
      eb.or(
        keys.map((key) =>
          eb.and([
            key.merchantId === null ? eb('merchant_id', 'is', null) : eb('merchant_id', '=', key.merchantId),
            eb('currency', '=', key.currency),
            eb('kind', '=', key.kind),
            eb('shard', '=', key.shard ?? 0),
            eb('book', '=', key.book),
          ]),
        ),
      ),
    )
    .execute();
}

/** Creates the accounts that do not exist yet; a concurrent creator wins quietly (unique owner key). */
export async function insertAccountsIfMissing(
  tx: Tx<LedgerTables>,
  rows: readonly { id: string; key: AccountKey; debitsMustNotExceedCredits: boolean; createdAt: Date }[],
): Promise<void> {
  if (rows.length === 0) return;
  await tx
    .insertInto('ledger_accounts')
    .values(
      rows.map((row) => ({
        id: row.id,
        merchant_id: row.key.merchantId,
        currency: row.key.currency,
        kind: row.key.kind,
        shard: row.key.shard ?? 0,
        book: row.key.book,
        debits_must_not_exceed_credits: row.debitsMustNotExceedCredits,
        created_at: row.createdAt,
      })),
    )
    .onConflict((oc) => oc.constraint('ledger_accounts_owner_key').doNothing())
    .execute();
}

export async function findAccountsByIds(db: Executor<LedgerTables>, ids: readonly string[]): Promise<AccountRow[]> {
  if (ids.length === 0) return [];
  return db.selectFrom('ledger_accounts').selectAll().where('id', 'in', ids).orderBy('id').execute();
}

/**
 * THE LOCK ORDER: every ledger write locks the account rows it touches, all of
 * them, in ascending id order, before reading their totals. Two transactions
 * therefore never wait for each other in a cycle (no deadlock between ledger
 * writes), and no total is read and rewritten by two transactions at once.
 */
export async function lockAccounts(tx: Tx<LedgerTables>, ids: readonly string[]): Promise<AccountRow[]> {
  const sorted = [...new Set(ids)].sort();
  // FOR NO KEY UPDATE, the lock the totals' UPDATE takes anyway: it excludes other ledger writers, but
  // not the foreign-key checks (FOR KEY SHARE) of rows that merely reference these accounts.
  return tx
    .selectFrom('ledger_accounts')
    .selectAll()
    .where('id', 'in', sorted)
    .orderBy('id')
    .forNoKeyUpdate()
    .execute();
}

export async function findTransfersByKeys(db: Executor<LedgerTables>, keys: readonly string[]): Promise<TransferRow[]> {
  if (keys.length === 0) return [];
  // One array parameter: the same prepared text for one key or a thousand (a batch's look-up).
  return db
    .selectFrom('ledger_transfers')
    .selectAll()
    .where(sql<boolean>`idempotency_key = any(${[...keys]}::text[])`)
    .execute();
}

/** When the next open reservation's timeout runs out, after `now` (the due ones were just voided). */
export async function nextOpenReservationExpiryAfter(db: Executor<LedgerTables>, now: Date): Promise<Date | undefined> {
  const row = await db
    .selectFrom('ledger_transfers as t')
    .select('t.expires_at')
    .where('t.expires_at', '>', now)
    .where((eb) =>
      eb.not(eb.exists(eb.selectFrom('ledger_transfers as c').select('c.id').whereRef('c.pending_id', '=', 't.id'))),
    )
    .orderBy('t.expires_at')
    .limit(1)
    .executeTakeFirst();
  return row?.expires_at ?? undefined;
}

/** The signed change of available balance of some accounts on one UTC day by one transfer type. */
export interface DailyChangeRow {
  /** `YYYY-MM-DD`, the UTC day of the entries. */
  readonly day: string;
  /** The type of the entries' originating transfer (a reservation's, for its post or void). */
  readonly type: string;
  readonly amount: bigint;
}

/**
 * The history entries of these accounts in [from, to), summed per UTC day and
 * originating transfer type: one grouped statement reading
 * ledger_operations_account_created_idx alone (the type is on the entry).
 * Zero-effect entries (an incoming credit while it confirms) add nothing.
 */
export async function dailyChangesByType(
  db: Executor<LedgerTables>,
  accountIds: readonly string[],
  from: Date,
  to: Date,
): Promise<DailyChangeRow[]> {
  if (accountIds.length === 0) return [];
  const result = await sql<{ day: string; type: string; amount: string }>`
    select to_char(date_trunc('day', o.created_at at time zone 'UTC'), 'YYYY-MM-DD') as day, o.type,
           sum(o.amount)::text as amount
      from ledger_operations o
     where o.account_id in (${sql.join(accountIds)})
       and o.created_at >= ${from} and o.created_at < ${to}
       and o.amount <> 0
     group by date_trunc('day', o.created_at at time zone 'UTC'), o.type
     order by 1, 2`.execute(db);
  return result.rows.map((row) => ({ day: row.day, type: row.type, amount: BigInt(row.amount) }));
}

/**
 * Each account's available balance just before `at`: the balance after its newest
 * history entry older than `at` (0 when it has none), one index probe per account.
 */
export async function balancesBefore(
  db: Executor<LedgerTables>,
  accountIds: readonly string[],
  at: Date,
): Promise<Map<string, bigint>> {
  if (accountIds.length === 0) return new Map();
  const result = await sql<{ id: string; balance: string }>`
    select a.id,
           coalesce((select o.balance_after from ledger_operations o
                      where o.account_id = a.id and o.created_at < ${at}
                      order by o.created_at desc, o.seq desc
                      limit 1), 0)::text as balance
      from ledger_accounts a
     where a.id in (${sql.join(accountIds)})`.execute(db);
  return new Map(result.rows.map((row) => [row.id, BigInt(row.balance)]));
}

/** Open reservations whose timeout has run out, soonest first (the expiry worker's queue). */
/** Transfers of one object (ledger_transfers_reference_idx), oldest first. */
export async function transfersByReference(
  db: Executor<LedgerTables>,
  referenceType: string,
  referenceId: string,
  limit: number,
): Promise<TransferRow[]> {
  return db
    .selectFrom('ledger_transfers')
    .selectAll()
    .where('reference_type', '=', referenceType)
    .where('reference_id', '=', referenceId)
    .orderBy('created_at')
    .orderBy('id')
    .limit(limit)
    .execute();
}

export async function findExpiredReservations(
  db: Executor<LedgerTables>,
  now: Date,
  limit: number,
): Promise<TransferRow[]> {
  return db
    .selectFrom('ledger_transfers as t')
    .selectAll('t')
    .where('t.expires_at', '<=', now)
    .where((eb) =>
      eb.not(eb.exists(eb.selectFrom('ledger_transfers as c').select('c.id').whereRef('c.pending_id', '=', 't.id'))),
    )
    .orderBy('t.expires_at')
    .limit(limit)
    .execute();
}

/** How much of a posted transfer its `reversal` transfers have given back so far. */
export async function sumReversals(db: Executor<LedgerTables>, originalTransferId: string): Promise<bigint> {
  const row = await db
    .selectFrom('ledger_transfers')
    .select(sql<string>`coalesce(sum(amount), 0)::text`.as('total'))
    .where('type', '=', 'reversal')
    .where('reference_type', '=', 'transfer')
    .where('reference_id', '=', originalTransferId)
    .executeTakeFirstOrThrow();
  return BigInt(row.total);
}

/** The post or void that closed this reservation, if any. */
export async function findClosingTransfer(
  db: Executor<LedgerTables>,
  pendingTransferId: string,
): Promise<TransferRow | undefined> {
  return db.selectFrom('ledger_transfers').selectAll().where('pending_id', '=', pendingTransferId).executeTakeFirst();
}

/** The transfers with these idempotency keys and the posts/voids already closing these reservations. */
export async function findTransfersByKeysOrPending(
  tx: Tx<LedgerTables>,
  keys: readonly string[],
  pendingIds: readonly string[],
): Promise<TransferRow[]> {
  return tx
    .selectFrom('ledger_transfers')
    .selectAll()
    .where(
      pendingIds.length === 0
        ? sql<boolean>`idempotency_key = any(${[...keys]}::text[])`
        : sql<boolean>`(idempotency_key = any(${[...keys]}::text[]) or pending_id = any(${[...pendingIds]}::text[]))`,
    )
    .execute();
}

export interface AccountTotals {
  readonly id: string;
  readonly debitsPending: bigint;
  readonly debitsPosted: bigint;
  readonly creditsPending: bigint;
  readonly creditsPosted: bigint;
}

export interface NewOperation {
  readonly id: string;
  readonly accountId: string;
  readonly transferId: string;
  readonly originId: string;
  /** The originating transfer's type (the overview sums entries by it without a look-up). */
  readonly type: string;
  readonly amount: bigint;
  readonly balanceAfter: bigint;
  readonly createdAt: Date;
}

const int8 = (value: bigint) => sql`${value.toString()}::int8`;
const timestamptz = (value: Date) => sql`${value.toISOString()}::timestamptz`;

/**
 * Writes a chain in one statement: inserts the transfers, and only when every
 * transfer was inserted, writes the accounts' new totals and the history
 * entries. Returns how many transfers were inserted: the whole chain, or none
 * when its ids already exist (a repeat, answered by the service). A chain can
 * never be half written: when a concurrent transaction commits one of its ids
 * between the existence check and the insert, the insert fails with a unique
 * violation, and PostgreSQL rolls the whole statement back and refuses to
 * commit the transaction, whatever the caller does with the error.
 */
export async function writeChain(
  tx: Tx<LedgerTables>,
  transfers: readonly LedgerTables['ledger_transfers'][],
  accounts: readonly AccountTotals[],
  operations: readonly NewOperation[],
): Promise<number> {
  const count = sql`(select count(*) from inserted) = ${transfers.length}`;
  const transferValues = sql.join(
    transfers.map(
      (t) =>
        sql`(${t.id}, ${t.idempotency_key}, ${t.debit_account_id}, ${t.credit_account_id}, ${int8(t.amount)}, ${t.currency}, ${t.type}, ${t.reference_type}, ${t.reference_id}, ${t.status}, ${t.pending_id}::text, ${t.chain_id}, ${timestamptz(t.created_at)}, ${t.timeout_seconds}::int4, ${t.expires_at === null ? null : t.expires_at.toISOString()}::timestamptz)`,
    ),
  );
  const accountValues = sql.join(
    accounts.map(
      (a) =>
        sql`(${a.id}::text, ${int8(a.debitsPending)}, ${int8(a.debitsPosted)}, ${int8(a.creditsPending)}, ${int8(a.creditsPosted)})`,
    ),
  );
  const operationsPart =
    operations.length === 0
      ? sql``
      : sql`, operations as (
          insert into ledger_operations (id, account_id, transfer_id, origin_id, amount, balance_after, created_at, type)
          select o.id, o.account_id, o.transfer_id, o.origin_id, o.amount, o.balance_after, o.created_at, o.type
          from (values ${sql.join(
            operations.map(
              (o, index) =>
                sql`(${index}::int4, ${o.id}::text, ${o.accountId}::text, ${o.transferId}::text, ${o.originId}::text, ${int8(o.amount)}, ${int8(o.balanceAfter)}, ${timestamptz(o.createdAt)}, ${o.type}::text)`,
            ),
          )}) as o(ordinal, id, account_id, transfer_id, origin_id, amount, balance_after, created_at, type)
          where ${count}
          order by o.ordinal
          returning 1
        )`;
  const result = await sql<{ inserted: string | number | bigint }>`
    with inserted as (
      insert into ledger_transfers (id, idempotency_key, debit_account_id, credit_account_id, amount, currency, type,
        reference_type, reference_id, status, pending_id, chain_id, created_at, timeout_seconds, expires_at)
      ${
        transfers.length === 1
          ? sql`values ${transferValues}`
          : // A chain whose ids partly exist inserts none of them; no "on conflict" clause, so a racing
            // commit of one of its ids fails the statement instead of leaving the chain half written.
            sql`select * from (values ${transferValues}) as t
                where not exists (select 1 from ledger_transfers e where e.idempotency_key in (${sql.join(transfers.map((t) => t.idempotency_key))}))`
      }
      ${transfers.length === 1 ? sql`on conflict (idempotency_key) do nothing` : sql``}
      returning id
    ), accounts as (
      update ledger_accounts as a
      set debits_pending = v.debits_pending, debits_posted = v.debits_posted,
          credits_pending = v.credits_pending, credits_posted = v.credits_posted
      from (values ${accountValues}) as v(id, debits_pending, debits_posted, credits_pending, credits_posted)
      where a.id = v.id and ${count}
      returning a.id
    )${operationsPart}
    select (select count(*) from inserted) as inserted`.execute(tx);
  return Number(result.rows[0]!.inserted);
}

export interface OperationListRow {
  readonly seq: bigint;
  readonly id: string;
  readonly account_id: string;
  readonly transfer_id: string;
  readonly amount: bigint;
  readonly balance_after: bigint;
  readonly created_at: Date;
  readonly currency: LedgerCurrency;
  readonly type: string;
  readonly reference_type: string;
  readonly reference_id: string;
  readonly origin_status: TransferStatus;
  readonly resolution_status: TransferStatus | null;
  /** The originating transfer's amount: what a zero-effect entry (an incoming credit while pending) announces. */
  readonly origin_amount: bigint;
}

export interface OperationFilter {
  readonly merchantId: string;
  readonly book: LedgerBook;
  readonly accountId?: string | undefined;
  readonly type?: string | undefined;
  readonly from?: Date | undefined;
  readonly to?: Date | undefined;
  /** Only entries after this one, newest first (the cursor: the last entry of the page before). */
  readonly beforeSeq?: bigint | undefined;
  readonly limit: number;
}

/**
 * A merchant's history, newest first by (created_at, seq); the entry's status is its originating
 * transfer's current one. Each account of the book is read on its own, newest first, through
 * (account_id, created_at, seq) or, with a type, (account_id, type, created_at, seq), and stops
 * after `limit` rows; the accounts' rows are then merged. Walking `seq` instead read every entry
 * newer than a day window, or older than the newest of a rare type, before a page filled.
 *
 * A cursor's time is read first, in its own statement, so that the page's statement bounds the
 * entries by a known instant: inside the page's statement the planner knew the cursor's time only
 * when running it, guessed a third of a day window was left, and sorted every entry of the window
 * per account (2,500 rows read for a page of 51) instead of reading the newest ones in index order.
 */
export async function listOperations(db: Executor<LedgerTables>, filter: OperationFilter): Promise<OperationListRow[]> {
  const { beforeSeq } = filter;
  const before = beforeSeq === undefined ? undefined : await cursorEntryOf(db, filter, beforeSeq);
  // A cursor naming another's entry, or none, gives an empty page.
  if (before === null) return [];
  let accounts = db
    .selectFrom('ledger_accounts as a')
    .where('a.merchant_id', '=', filter.merchantId)
    .where('a.book', '=', filter.book);
  if (filter.accountId !== undefined) accounts = accounts.where('a.id', '=', filter.accountId);
  return accounts
    .innerJoinLateral(
      (eb) => {
        let entries = eb
          .selectFrom('ledger_operations as o')
          .select(['o.seq', 'o.id', 'o.account_id', 'o.transfer_id', 'o.origin_id', 'o.amount', 'o.balance_after'])
          .select('o.created_at')
          .whereRef('o.account_id', '=', 'a.id')
          // A zero-effect entry announces an incoming credit while it is pending; once posted, the post's own
          // entry shows the money, and a voided one never reached the balance. A scalar look-up (pending_id is
          // unique) rather than NOT EXISTS, which the planner may turn into a hash of every closing transfer.
          .where((where) =>
            where.or([
              where('o.amount', '<>', sql<bigint>`0`),
              where(
                where
                  .selectFrom('ledger_transfers as closing')
                  .select('closing.id')
                  .whereRef('closing.pending_id', '=', 'o.origin_id'),
                'is',
                null,
              ),
            ]),
          );
        if (filter.type !== undefined) entries = entries.where('o.type', '=', filter.type);
        if (filter.from !== undefined) entries = entries.where('o.created_at', '>=', filter.from);
        if (filter.to !== undefined) entries = entries.where('o.created_at', '<', filter.to);
        if (before !== undefined)
          entries = entries
            .where('o.created_at', '<=', before.created_at)
            .where((where) =>
              where.not(where.and([where('o.created_at', '=', before.created_at), where('o.seq', '>=', before.seq)])),
            );
        return entries.orderBy('o.created_at', 'desc').orderBy('o.seq', 'desc').limit(filter.limit).as('o');
      },
      (join) => join.onTrue(),
    )
    .innerJoin('ledger_transfers as t', 't.id', 'o.origin_id')
    .leftJoin('ledger_transfers as r', 'r.pending_id', 't.id')
    .select([
      'o.seq',
      'o.id',
      'o.account_id',
      'o.transfer_id',
      'o.amount',
      'o.balance_after',
      'o.created_at',
      'a.currency',
      't.type',
      't.reference_type',
      't.reference_id',
      't.status as origin_status',
      'r.status as resolution_status',
      't.amount as origin_amount',
    ])
    .orderBy('o.created_at', 'desc')
    .orderBy('o.seq', 'desc')
    .limit(filter.limit)
    .execute();
}

/** The entry a cursor names, when it is one of this merchant's entries of the book; null otherwise. */
async function cursorEntryOf(
  db: Executor<LedgerTables>,
  filter: Pick<OperationFilter, 'merchantId' | 'book'>,
  seq: bigint,
): Promise<{ readonly seq: bigint; readonly created_at: Date } | null> {
  const row = await db
    .selectFrom('ledger_operations as c')
    .innerJoin('ledger_accounts as ca', 'ca.id', 'c.account_id')
    .select(['c.seq', 'c.created_at'])
    .where('c.seq', '=', seq)
    .where('ca.merchant_id', '=', filter.merchantId)
    .where('ca.book', '=', filter.book)
    .executeTakeFirst();
  return row ?? null;
}

/** A lone transfer or reservation, as the one-statement path writes it. */
export interface LoneTransfer {
  /** The transfer row; its currency is taken from the accounts. */
  readonly transfer: Omit<LedgerTables['ledger_transfers'], 'currency'>;
  /** History ids for the debit and the credit account (the credit's is unused for a reservation). */
  readonly debitOperationId: string;
  readonly creditOperationId: string;
}

/** An account's totals as the one-statement path left them. */
export interface WrittenAccount extends AccountTotals {
  readonly currency: LedgerCurrency;
}

/**
 * A lone plain transfer or reservation in ONE statement, or nothing. It locks
 * both accounts in id order (as lockAccounts does, so two writers never wait on
 * each other in a cycle), and only when both exist in one book and currency and
 * the id is new does it add the amount to the debit account — if that account
 * can afford it — and then to the credit account, insert the transfer and write
 * the history entries of the accounts whose available balance changed. The
 * affordability test sits in the debit UPDATE's own WHERE on purpose: an UPDATE
 * re-reads a row that a concurrent transaction changed before evaluating it,
 * whereas the rows a locking SELECT in a WITH query returns may be the older
 * versions (measured: checking them let transfers in opposite directions
 * overdraw). Returns the two accounts' new totals, or undefined when it wrote
 * nothing; the caller then takes the general path, which names the refusal or
 * answers the repeat. A concurrent insert of the same id fails the statement
 * with a unique violation, as on the general path.
 */
export async function writeLoneTransfer(
  tx: Tx<LedgerTables>,
  lone: LoneTransfer,
): Promise<WrittenAccount[] | undefined> {
  const t = lone.transfer;
  const reserve = t.status === 'pending';
  const pending = int8(reserve ? t.amount : 0n);
  const posted = int8(reserve ? 0n : t.amount);
  const result = await sql<WrittenAccount & { credit: boolean }>`
    with locked as materialized (
      select id, book, currency from ledger_accounts
       where id in (${t.debit_account_id}, ${t.credit_account_id}) order by id for no key update
    ), compatible as (
      select d.currency from locked d join locked c on c.id = ${t.credit_account_id}
       where d.id = ${t.debit_account_id} and d.book = c.book and d.currency = c.currency
         and not exists (select 1 from ledger_transfers e where e.idempotency_key = ${t.idempotency_key})
    ), debited as (
      update ledger_accounts as a
         set debits_pending = a.debits_pending + ${pending}, debits_posted = a.debits_posted + ${posted}
       where a.id = ${t.debit_account_id} and exists (select 1 from compatible)
         and (not a.debits_must_not_exceed_credits or a.debits_pending + a.debits_posted + ${pending} + ${posted} <= a.credits_posted)
      returning a.id, a.currency, a.debits_pending, a.debits_posted, a.credits_pending, a.credits_posted
    ), credited as (
      update ledger_accounts as a
         set credits_pending = a.credits_pending + ${pending}, credits_posted = a.credits_posted + ${posted}
       where a.id = ${t.credit_account_id} and exists (select 1 from debited)
      returning a.id, a.currency, a.merchant_id, a.debits_pending, a.debits_posted, a.credits_pending, a.credits_posted
    ), inserted as (
      insert into ledger_transfers (id, idempotency_key, debit_account_id, credit_account_id, amount, currency, type,
        reference_type, reference_id, status, pending_id, chain_id, created_at, timeout_seconds, expires_at)
      select ${t.id}, ${t.idempotency_key}, ${t.debit_account_id}, ${t.credit_account_id}, ${int8(t.amount)}, debited.currency, ${t.type},
             ${t.reference_type}, ${t.reference_id}, ${t.status}, null, ${t.chain_id}, ${timestamptz(t.created_at)},
             ${t.timeout_seconds}::int4, ${t.expires_at === null ? null : t.expires_at.toISOString()}::timestamptz
        from debited
      returning id
    ), history as (
      insert into ledger_operations (id, account_id, transfer_id, origin_id, amount, balance_after, created_at, type)
      select o.id, o.account_id, i.id, i.id, o.amount, o.balance_after, ${timestamptz(t.created_at)}, ${t.type}::text
        from inserted i,
             (select 0 as ordinal, ${lone.debitOperationId}::text as id, d.id as account_id, -${int8(t.amount)} as amount,
                     d.credits_posted - d.debits_posted - d.debits_pending as balance_after from debited d
              union all
              select 1, ${lone.creditOperationId}::text, c.id, ${posted}, c.credits_posted - c.debits_posted - c.debits_pending from credited c
               where ${sql.lit(!reserve)} or c.merchant_id is not null) as o
       -- a reservation credited to a merchant account keeps its zero-effect entry (an incoming credit announced)
       where o.amount <> 0 or o.ordinal = 1
       order by o.ordinal
      returning 1
    )
    select id, currency, debits_pending as "debitsPending", debits_posted as "debitsPosted",
           credits_pending as "creditsPending", credits_posted as "creditsPosted", false as credit from debited
    union all
    select id, currency, debits_pending, debits_posted, credits_pending, credits_posted, true from credited`.execute(
    tx,
  );
  if (result.rows.length === 0) return undefined;
  return result.rows;
}

/**
 * writeChain for a batch of independent movements (executeBatch): the same three writes in one
 * statement, with each column passed as one array (unnest), so a statement of a thousand
 * transfers has a dozen parameters and one text, parsed and planned once per connection.
 * Inserts nothing when any of the ids exists (the caller checked them under the locks; a
 * concurrent commit of one fails the statement with a unique violation, as writeChain does).
 */
export async function writeBatch(
  tx: Tx<LedgerTables>,
  transfers: readonly LedgerTables['ledger_transfers'][],
  accounts: readonly AccountTotals[],
  operations: readonly NewOperation[],
): Promise<number> {
  const texts = <T>(values: readonly T[], pick: (value: T) => string | null) => values.map(pick);
  // A batch is written at one moment (executeBatch's clock reading): one timestamp parameter, not thousands.
  const createdAt = transfers[0]!.created_at;
  if (
    transfers.some((t) => t.created_at.getTime() !== createdAt.getTime()) ||
    operations.some((o) => o.createdAt.getTime() !== createdAt.getTime())
  ) {
    throw new Error('writeBatch: the movements of a batch share one created_at');
  }
  const at = createdAt.toISOString();
  const result = await sql<{ inserted: string | number | bigint }>`
    with inserted as (
      insert into ledger_transfers (id, idempotency_key, debit_account_id, credit_account_id, amount, currency, type,
        reference_type, reference_id, status, pending_id, chain_id, created_at, timeout_seconds, expires_at)
      select t.id, t.idempotency_key, t.debit_account_id, t.credit_account_id, t.amount, t.currency, t.type,
             t.reference_type, t.reference_id, t.status, t.pending_id, t.chain_id, ${at}::timestamptz, t.timeout_seconds, t.expires_at
        from unnest(${texts(transfers, (t) => t.id)}::text[], ${texts(transfers, (t) => t.idempotency_key)}::text[],
          ${texts(transfers, (t) => t.debit_account_id)}::text[], ${texts(transfers, (t) => t.credit_account_id)}::text[],
          ${texts(transfers, (t) => t.amount.toString())}::int8[], ${texts(transfers, (t) => t.currency)}::text[], ${texts(transfers, (t) => t.type)}::text[],
          ${texts(transfers, (t) => t.reference_type)}::text[], ${texts(transfers, (t) => t.reference_id)}::text[], ${texts(transfers, (t) => t.status)}::text[],
          ${texts(transfers, (t) => t.pending_id)}::text[], ${texts(transfers, (t) => t.chain_id)}::text[],
          ${texts(transfers, (t) => (t.timeout_seconds === null ? null : String(t.timeout_seconds)))}::int4[],
          ${texts(transfers, (t) => t.expires_at?.toISOString() ?? null)}::timestamptz[])
          as t(id, idempotency_key, debit_account_id, credit_account_id, amount, currency, type, reference_type, reference_id, status, pending_id, chain_id,
               timeout_seconds, expires_at)
      where not exists (select 1 from ledger_transfers e where e.idempotency_key = any(${texts(transfers, (t) => t.idempotency_key)}::text[]))
      returning id
    ), accounts as (
      update ledger_accounts as a
      set debits_pending = v.debits_pending, debits_posted = v.debits_posted,
          credits_pending = v.credits_pending, credits_posted = v.credits_posted
      from unnest(${texts(accounts, (a) => a.id)}::text[], ${texts(accounts, (a) => a.debitsPending.toString())}::int8[],
          ${texts(accounts, (a) => a.debitsPosted.toString())}::int8[], ${texts(accounts, (a) => a.creditsPending.toString())}::int8[],
          ${texts(accounts, (a) => a.creditsPosted.toString())}::int8[]) as v(id, debits_pending, debits_posted, credits_pending, credits_posted)
      where a.id = v.id and (select count(*) from inserted) = ${transfers.length}
      returning a.id
    ), operations as (
      insert into ledger_operations (id, account_id, transfer_id, origin_id, amount, balance_after, created_at, type)
      select o.id, o.account_id, o.transfer_id, o.origin_id, o.amount, o.balance_after, ${at}::timestamptz, o.type
      from unnest(${texts(operations, (o) => o.id)}::text[], ${texts(operations, (o) => o.accountId)}::text[], ${texts(operations, (o) => o.transferId)}::text[],
          ${texts(operations, (o) => o.originId)}::text[], ${texts(operations, (o) => o.amount.toString())}::int8[],
          ${texts(operations, (o) => o.balanceAfter.toString())}::int8[], ${texts(operations, (o) => o.type)}::text[])
        with ordinality as o(id, account_id, transfer_id, origin_id, amount, balance_after, type, ordinal)
      where (select count(*) from inserted) = ${transfers.length}
      order by o.ordinal
      returning 1
    )
    select (select count(*) from inserted) as inserted`.execute(tx);
  return Number(result.rows[0]!.inserted);
}

/** One leg of a fan-out reservation, with the ids the service gave it. */
interface FanOutLeg {
  readonly transferId: string;
  readonly idempotencyKey: string;
  readonly creditAccountId: string;
  readonly amount: bigint;
  readonly type: string;
  readonly operationId: string;
}

export interface FanOutRows {
  readonly debitAccountId: string;
  readonly chainId: string;
  readonly referenceType: string;
  /** Names the fan-out in FAN_OUT_WRITTEN_CTE: unique among the fan-outs of one statement. */
  readonly referenceId: string;
  readonly createdAt: Date;
  readonly legs: readonly FanOutLeg[];
}

/**
 * The CTE of a fan-out reservations' statement with one row per reservation
 * written; its `reference_id` column names the reservation.
 */
export const FAN_OUT_WRITTEN_CTE = 'ledger_reserved';

/**
 * Reservations, each from one account to several (a payout's amount and fees),
 * as the data-modifying CTEs of a caller's ONE statement, which also writes the
 * rows that go with them (they join FAN_OUT_WRITTEN_CTE on `reference_id`, so
 * each is written only with its reservation). The statement must begin `with
 * recursive` (the affordability walk below). Every account of every fan-out is
 * locked first, in id order (as writeLoneTransfer does). A fan-out is refused
 * when one of its accounts is missing, they do not share one book and
 * currency, or one of its ids exists already. The others of one debit account
 * are taken in the order given, each while the account can afford it after
 * those taken before it (a refused one leaves the next its chance): exactly
 * what one statement each would have done in that order. Each account is then
 * debited once by the sum taken — the affordability test again in the debit
 * UPDATE's own WHERE (see writeLoneTransfer), so nothing it did not afford is
 * ever written: the walk decides from the locked rows (measured fresh after a
 * lock wait on PostgreSQL 15), but were they ever stale, the UPDATE would only
 * refuse (the service explains, and runs again), and the history entries come
 * from the UPDATE's own RETURNING. Each leg is a pending transfer of its fan-out's chain, with the
 * debit account's history entry (credits to gateway accounts while pending
 * change no available balance: no entry); credits to one account are summed
 * into one update. The caller guarantees no debited account is credited (a row
 * is updated at most once per statement).
 */
export function fanOutReservationsCtes(fanOuts: readonly FanOutRows[]): ReturnType<typeof sql> {
  const totals = fanOuts.map((fanOut) => fanOut.legs.reduce((sum, leg) => sum + leg.amount, 0n));
  const legs = fanOuts.flatMap((fanOut, index) => {
    let later = totals[index]!;
    return fanOut.legs.map((leg) => {
      later -= leg.amount;
      return { referenceId: fanOut.referenceId, leg, later };
    });
  });
  const accountIds = [
    ...new Set(fanOuts.flatMap((fanOut) => [fanOut.debitAccountId, ...fanOut.legs.map((leg) => leg.creditAccountId)])),
  ];
  const texts = <T>(values: readonly T[], pick: (value: T) => string) => values.map(pick);
  return sql`ledger_fan_outs (debit_account_id, total, chain_id, reference_type, reference_id, created_at, position) as (
      select * from unnest(${texts(fanOuts, (f) => f.debitAccountId)}::text[], ${texts(totals, (total) => total.toString())}::int8[],
          ${texts(fanOuts, (f) => f.chainId)}::text[], ${texts(fanOuts, (f) => f.referenceType)}::text[], ${texts(fanOuts, (f) => f.referenceId)}::text[],
          ${texts(fanOuts, (f) => f.createdAt.toISOString())}::timestamptz[]) with ordinality
    ), ledger_legs (reference_id, transfer_id, idempotency_key, credit_account_id, amount, type, operation_id, later, position) as (
      select * from unnest(${texts(legs, (l) => l.referenceId)}::text[], ${texts(legs, (l) => l.leg.transferId)}::text[], ${texts(legs, (l) => l.leg.idempotencyKey)}::text[],
          ${texts(legs, (l) => l.leg.creditAccountId)}::text[], ${texts(legs, (l) => l.leg.amount.toString())}::int8[], ${texts(legs, (l) => l.leg.type)}::text[],
          ${texts(legs, (l) => l.leg.operationId)}::text[], ${texts(legs, (l) => l.later.toString())}::int8[]) with ordinality
    ), ledger_locked as materialized (
      select id, book, currency, debits_must_not_exceed_credits, credits_posted - debits_posted - debits_pending as available
        from ledger_accounts where id = any(${accountIds}::text[]) order by id for no key update
    ), ledger_refused as (
      select l.reference_id from ledger_legs l
        join ledger_fan_outs f using (reference_id)
        left join ledger_locked d on d.id = f.debit_account_id
        left join ledger_locked c on c.id = l.credit_account_id
       where d.id is null or c.id is null or c.book <> d.book or c.currency <> d.currency
          or exists (select 1 from ledger_transfers e where e.idempotency_key = l.idempotency_key)
    ), ledger_candidates as (
      select f.reference_id, f.debit_account_id, f.total, d.available, not d.debits_must_not_exceed_credits as unbounded,
             row_number() over (partition by f.debit_account_id order by f.position) as rank
        from ledger_fan_outs f join ledger_locked d on d.id = f.debit_account_id
       where f.reference_id not in (select reference_id from ledger_refused)
    ), ledger_walk (debit_account_id, rank, reference_id, total, taken_before, taken) as (
      select c.debit_account_id, c.rank, c.reference_id, c.total, 0::int8, c.unbounded or c.total <= c.available
        from ledger_candidates c where c.rank = 1
      union all
      select c.debit_account_id, c.rank, c.reference_id, c.total, (w.taken_before + case when w.taken then w.total else 0 end)::int8,
             c.unbounded or w.taken_before + case when w.taken then w.total else 0 end + c.total <= c.available
        from ledger_walk w join ledger_candidates c on c.debit_account_id = w.debit_account_id and c.rank = w.rank + 1
    ), ledger_taken as (
      select reference_id, debit_account_id, (taken_before + total)::int8 as taken_through,
             (sum(total) over (partition by debit_account_id))::int8 as account_total
        from ledger_walk where taken
    ), ledger_debited as (
      update ledger_accounts as a set debits_pending = a.debits_pending + t.total
        from (select debit_account_id, min(account_total) as total from ledger_taken group by debit_account_id) t
       where a.id = t.debit_account_id
         and (not a.debits_must_not_exceed_credits or a.debits_pending + a.debits_posted + t.total <= a.credits_posted)
      returning a.id, a.currency, a.credits_posted - a.debits_posted - a.debits_pending as available
    ), ${sql.id(FAN_OUT_WRITTEN_CTE)} as (
      select t.reference_id, d.id as debit_account_id, d.currency, d.available + t.account_total - t.taken_through as available_after
        from ledger_taken t join ledger_debited d on d.id = t.debit_account_id
    ), ledger_credited as (
      update ledger_accounts as a set credits_pending = a.credits_pending + c.amount
        from (select l.credit_account_id, sum(l.amount)::int8 as amount from ledger_legs l join ${sql.table(FAN_OUT_WRITTEN_CTE)} r using (reference_id) group by l.credit_account_id) c
       where a.id = c.credit_account_id
      returning a.id
    ), ledger_written as (
      insert into ledger_transfers (id, idempotency_key, debit_account_id, credit_account_id, amount, currency, type,
        reference_type, reference_id, status, pending_id, chain_id, created_at, timeout_seconds, expires_at)
      select l.transfer_id, l.idempotency_key, r.debit_account_id, l.credit_account_id, l.amount, r.currency, l.type,
             f.reference_type, f.reference_id, 'pending', null, f.chain_id, f.created_at, null, null
        from ledger_legs l join ${sql.table(FAN_OUT_WRITTEN_CTE)} r using (reference_id) join ledger_fan_outs f using (reference_id)
       order by f.position, l.position
      returning id
    ), ledger_history as (
      insert into ledger_operations (id, account_id, transfer_id, origin_id, amount, balance_after, created_at, type)
      select l.operation_id, r.debit_account_id, l.transfer_id, l.transfer_id, -l.amount, r.available_after + l.later, f.created_at, l.type
        from ledger_legs l join ${sql.table(FAN_OUT_WRITTEN_CTE)} r using (reference_id) join ledger_fan_outs f using (reference_id)
       where exists (select 1 from ledger_written)
       order by f.position, l.position
      returning 1
    )`;
}

/** A merchant's accounts in a book (those that exist), RUB before USDT, main before payout. */
export async function merchantAccountsOfBook(
  db: Executor<LedgerTables>,
  merchantId: string,
  book: LedgerBook,
): Promise<AccountRow[]> {
  return db
    .selectFrom('ledger_accounts')
    .selectAll()
    .where('merchant_id', '=', merchantId)
    .where('book', '=', book)
    .orderBy('currency')
    .orderBy('kind')
    .execute();
}

export interface AccountEntryRow {
  readonly seq: bigint;
  readonly id: string;
  readonly transfer_id: string;
  readonly amount: bigint;
  readonly balance_after: bigint;
  readonly created_at: Date;
  readonly type: string;
  readonly reference_type: string;
  readonly reference_id: string;
  readonly origin_status: TransferStatus;
  readonly resolution_status: TransferStatus | null;
}

export interface AccountEntryQuery {
  readonly accountId: string;
  /** Only entries after this sequence number (the keyset). */
  readonly afterSeq: bigint;
  readonly from?: Date | undefined;
  readonly before?: Date | undefined;
  readonly limit: number;
}

/**
 * One account's history entries oldest first, every entry (a zero-effect one included), with
 * the originating transfer's type, reference and status. The keyset walks the
 * (account_id, seq) index, so each page costs its own rows, however long the history.
 */
export async function listAccountEntries(
  db: Executor<LedgerTables>,
  query: AccountEntryQuery,
): Promise<AccountEntryRow[]> {
  let builder = db
    .selectFrom('ledger_operations as o')
    .innerJoin('ledger_transfers as t', 't.id', 'o.origin_id')
    .leftJoin('ledger_transfers as r', 'r.pending_id', 't.id')
    .select([
      'o.seq',
      'o.id',
      'o.transfer_id',
      'o.amount',
      'o.balance_after',
      'o.created_at',
      't.type',
      't.reference_type',
      't.reference_id',
      't.status as origin_status',
      'r.status as resolution_status',
    ])
    .where('o.account_id', '=', query.accountId)
    .where('o.seq', '>', query.afterSeq);
  if (query.from !== undefined) builder = builder.where('o.created_at', '>=', query.from);
  if (query.before !== undefined) builder = builder.where('o.created_at', '<', query.before);
  return builder.orderBy('o.seq', 'asc').limit(query.limit).execute();
}

// The ledger's side of custody reconciliation (src/crypto/custody/): per book and
// currency, what the money held for others and for the gateway adds up to, and
// the hot_wallet account that mirrors it. The hot_wallet account is debited by
// every deposit credited and credited by every outgoing transfer booked, so its
// posted debit balance is what should sit on our addresses; double entry makes
// it equal to the merchants' balances plus the gateway's own accounts.
import { sql } from 'kysely';
import type { Executor } from '../db/transaction.ts';
import type { LedgerBook, LedgerCurrency } from './ledger-tables.ts';

export interface CustodyLedgerTotals {
  /** Merchants' main and payout accounts, posted: what they could withdraw plus what they reserved for outgoing transfers. */
  readonly merchantBalances: bigint;
  /** Of which reserved for outgoing transfers not booked yet (merchants' pending debits). */
  readonly reservedOutgoing: bigint;
  /** The gateway's own accounts (service fees, network fees charged, chain costs booked), posted. */
  readonly gatewayAccounts: bigint;
  /** hot_wallet account: every deposit credited (posted debits). */
  readonly depositsCredited: bigint;
  /** hot_wallet account: every outgoing transfer booked (posted credits). */
  readonly outgoingBooked: bigint;
  /** hot_wallet account: deposits seen on chain and not final yet (pending debits). */
  readonly depositsConfirming: bigint;
}

/** One statement, so one snapshot: the figures agree with each other. */
export async function custodyLedgerTotals(
  db: Executor,
  book: LedgerBook,
  currency: LedgerCurrency,
): Promise<CustodyLedgerTotals> {
  const result = await sql<{ [K in keyof CustodyLedgerTotals]: bigint }>`
    select
      coalesce(sum(credits_posted - debits_posted) filter (where merchant_id is not null), 0)::int8 as "merchantBalances",
      coalesce(sum(debits_pending) filter (where merchant_id is not null), 0)::int8 as "reservedOutgoing",
      coalesce(sum(credits_posted - debits_posted) filter (where merchant_id is null and kind <> 'hot_wallet'), 0)::int8 as "gatewayAccounts",
      coalesce(sum(debits_posted) filter (where kind = 'hot_wallet'), 0)::int8 as "depositsCredited",
      coalesce(sum(credits_posted) filter (where kind = 'hot_wallet'), 0)::int8 as "outgoingBooked",
      coalesce(sum(debits_pending) filter (where kind = 'hot_wallet'), 0)::int8 as "depositsConfirming"
    from ledger_accounts
    where book = ${book} and currency = ${currency}
  `.execute(db);
  return result.rows[0]!;
}

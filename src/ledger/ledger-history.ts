// What the ledger holds about one object (a payment, a deposit, an outgoing
// transfer …): its transfers, oldest first, for the object's timeline in the
// cabinet. The ledger names the object by the reference its transfers carry.
// And a merchant book's money over time for the cabinet's overview: balances now,
// and per UTC day the changes by transfer type and the closing balance, read
// from the history entries (ledger_operations), so they agree with the balance.
import assert from 'node:assert/strict';
import type { Executor } from '../db/transaction.ts';
import { merchantAccountKey } from './ledger-accounts.ts';
import * as repository from './ledger-repository.ts';
import {
  LEDGER_CURRENCIES,
  MERCHANT_ACCOUNT_KINDS,
  type LedgerBook,
  type LedgerCurrency,
  type TransferStatus,
} from './ledger-tables.ts';

export interface ObjectTransfer {
  readonly transferId: string;
  readonly type: string;
  readonly currency: LedgerCurrency;
  /** Minor units. */
  readonly amount: bigint;
  readonly status: TransferStatus;
  readonly debitAccountId: string;
  readonly creditAccountId: string;
  readonly createdAt: Date;
}

/** The most transfers an object's timeline shows. */
const TRANSFERS_ABOUT_MAX = 100;

/** The transfers whose reference is (`referenceType`, `referenceId`), oldest first. */
export async function transfersAbout(
  db: Executor,
  referenceType: string,
  referenceId: string,
): Promise<ObjectTransfer[]> {
  const rows = await repository.transfersByReference(db, referenceType, referenceId, TRANSFERS_ABOUT_MAX);
  return rows.map((row) => ({
    transferId: row.id,
    type: row.type,
    currency: row.currency,
    amount: row.amount,
    status: row.status,
    debitAccountId: row.debit_account_id,
    creditAccountId: row.credit_account_id,
    createdAt: row.created_at,
  }));
}

/** A merchant's money in one book: the merchant's accounts of that book, never another merchant's or book's. */
export interface MerchantBook {
  readonly merchantId: string;
  readonly book: LedgerBook;
}

/** One currency of a merchant's book now, summed over its main and payout accounts, in minor units. */
export interface CurrencyBalance {
  readonly currency: LedgerCurrency;
  /** Spendable: posted credits − posted debits − reserved. */
  readonly available: bigint;
  /** Reserved to leave (payouts, withdrawals accepted, not completed): debits pending. */
  readonly reserved: bigint;
  /** On its way in (crypto deposits seen on chain, not final yet): credits pending. */
  readonly incoming: bigint;
}

async function merchantAccountsOf(db: Executor, owner: MerchantBook, currency: LedgerCurrency) {
  return repository.findAccountsByKeys(
    db,
    MERCHANT_ACCOUNT_KINDS.map((kind) => merchantAccountKey(owner.book, owner.merchantId, currency, kind)),
  );
}

/** The book's balance per currency, as GET /v1/crypto/balance computes it (accounts not yet opened count 0). */
export async function bookBalances(db: Executor, owner: MerchantBook): Promise<CurrencyBalance[]> {
  const rows = await repository.findAccountsByKeys(
    db,
    LEDGER_CURRENCIES.flatMap((currency) =>
      MERCHANT_ACCOUNT_KINDS.map((kind) => merchantAccountKey(owner.book, owner.merchantId, currency, kind)),
    ),
  );
  return LEDGER_CURRENCIES.map((currency) => {
    const accounts = rows.filter((row) => row.currency === currency);
    const sum = (pick: (row: (typeof rows)[number]) => bigint) =>
      accounts.reduce((total, row) => total + pick(row), 0n);
    return {
      currency,
      available: sum((row) => row.credits_posted - row.debits_posted - row.debits_pending),
      reserved: sum((row) => row.debits_pending),
      incoming: sum((row) => row.credits_pending),
    };
  });
}

/** The most UTC days one history covers (a year, leap day included). */
export const HISTORY_DAYS_MAX = 366;

/** One UTC day of a currency's history: what changed the available balance, by transfer type, and the balance at its end. */
export interface HistoryDay {
  /** `YYYY-MM-DD` (UTC). */
  readonly day: string;
  /** Signed minor units per transfer type; types absent from the map changed nothing that day. */
  readonly byType: ReadonlyMap<string, bigint>;
  /** The day's whole change of available balance: the sum of byType. */
  readonly net: bigint;
  /** Available balance at the end of the day (opening + the nets so far). */
  readonly closing: bigint;
}

export interface CurrencyHistory {
  readonly currency: LedgerCurrency;
  /** Available balance at 00:00 UTC of the first day. */
  readonly opening: bigint;
  /** Every day of the range in order, days with no entry included (all zero). */
  readonly days: readonly HistoryDay[];
}

const DAY_MS = 86_400_000;

/** `YYYY-MM-DD` of the UTC day holding `at`. */
export function utcDay(at: Date): string {
  return at.toISOString().slice(0, 10);
}

/**
 * The available balance of a merchant's book in one currency (main and payout
 * accounts together) day by day over `days` UTC days starting at `firstDay`
 * (midnight UTC): the history entries summed per day and transfer type (one
 * grouped statement) and the balance before the first day (one look-up per account).
 * Each day's closing balance is the opening plus the days' nets, so the nets sum
 * exactly to the change of balance over the range.
 */
export async function dailyHistory(
  db: Executor,
  owner: MerchantBook,
  currency: LedgerCurrency,
  range: { readonly firstDay: Date; readonly days: number },
): Promise<CurrencyHistory> {
  assert.ok(range.firstDay.getTime() % DAY_MS === 0, 'a history starts at midnight UTC');
  assert.ok(Number.isInteger(range.days) && range.days >= 1 && range.days <= HISTORY_DAYS_MAX, 'history length');
  const end = new Date(range.firstDay.getTime() + range.days * DAY_MS);
  const accountIds = (await merchantAccountsOf(db, owner, currency)).map((row) => row.id);
  const [changes, before] = await Promise.all([
    repository.dailyChangesByType(db, accountIds, range.firstDay, end),
    repository.balancesBefore(db, accountIds, range.firstDay),
  ]);
  const opening = [...before.values()].reduce((total, balance) => total + balance, 0n);
  const byDay = new Map<string, Map<string, bigint>>();
  for (const change of changes) {
    const types = byDay.get(change.day) ?? new Map<string, bigint>();
    types.set(change.type, (types.get(change.type) ?? 0n) + change.amount);
    byDay.set(change.day, types);
  }
  const days: HistoryDay[] = [];
  let balance = opening;
  for (let index = 0; index < range.days; index++) {
    const day = utcDay(new Date(range.firstDay.getTime() + index * DAY_MS));
    const byType = byDay.get(day) ?? new Map<string, bigint>();
    const net = [...byType.values()].reduce((total, amount) => total + amount, 0n);
    balance += net;
    days.push({ day, byType, net, closing: balance });
  }
  assert.equal(days.length, range.days);
  return { currency, opening, days };
}

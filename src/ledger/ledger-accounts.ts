// Accounts: every merchant has a main and a payout account per currency, created
// lazily on first use; the gateway has fees, settlement and hot-wallet accounts.
// Creation is an insert that ignores a concurrent creator's row (the unique owner
// key decides), never a read-then-write race.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import type { Clock } from '../clock.ts';
import type { Tx } from '../db/transaction.ts';
import { newId } from '../ids.ts';
import {
  LEDGER_CURRENCIES,
  MERCHANT_ACCOUNT_KINDS,
  type LedgerBook,
  type LedgerCurrency,
  type MerchantAccountKind,
  type SystemAccountKind,
} from './ledger-tables.ts';
import * as repository from './ledger-repository.ts';
import type { AccountKey, AccountRow } from './ledger-repository.ts';

function sameKey(row: AccountRow, key: AccountKey): boolean {
  return (
    row.book === key.book &&
    row.merchant_id === key.merchantId &&
    row.currency === key.currency &&
    row.kind === key.kind &&
    row.shard === (key.shard ?? 0)
  );
}

/**
 * The accounts with these owner keys, created when missing. Merchant accounts
 * carry "debits must not exceed credits" (never below zero available); the
 * gateway's own accounts may go negative (settlement owes, fees earn).
 */
export async function ensureAccounts(tx: Tx, clock: Clock, keys: readonly AccountKey[]): Promise<AccountRow[]> {
  let rows = await repository.findAccountsByKeys(tx, keys);
  const missing = keys.filter((key) => !rows.some((row) => sameKey(row, key)));
  if (missing.length > 0) {
    const createdAt = clock.now();
    await repository.insertAccountsIfMissing(
      tx,
      missing.map((key) => ({
        id: newId('account'),
        key,
        debitsMustNotExceedCredits: key.merchantId !== null,
        createdAt,
      })),
    );
    rows = await repository.findAccountsByKeys(tx, keys);
  }
  return keys.map((key) => {
    const row = rows.find((candidate) => sameKey(candidate, key));
    if (!row) throw new Error(`ledger account ${JSON.stringify(key)} could not be created`);
    return row;
  });
}

/** A merchant's account in one book: a sandbox shop's keys see the sandbox book, a live shop's the live one. */
export function merchantAccountKey(
  book: LedgerBook,
  merchantId: string,
  currency: LedgerCurrency,
  kind: MerchantAccountKind,
): AccountKey {
  return { book, merchantId, currency, kind };
}

/** Shards of each gateway account that payment credits spread over (see shardOf). */
export const SYSTEM_ACCOUNT_SHARDS = 16;

export function systemAccountKey(
  book: LedgerBook,
  kind: SystemAccountKind,
  currency: LedgerCurrency,
  shard = 0,
): AccountKey {
  assert.ok(Number.isInteger(shard) && shard >= 0 && shard < 256, `system account shard ${shard}`);
  return { book, merchantId: null, currency, kind, shard };
}

/**
 * The shard of the gateway's accounts that the movement named `id` uses: a
 * stable hash, so a repeat of the same movement finds the same accounts, and
 * unrelated movements rarely wait on each other's row locks.
 */
export function shardOf(id: string, shards = SYSTEM_ACCOUNT_SHARDS): number {
  return createHash('sha256').update(id).digest().readUInt16BE(0) % shards;
}

/** Every account a merchant has in a book: RUB and USDT, main and payout, created on first sight. */
export async function ensureMerchantAccounts(
  tx: Tx,
  clock: Clock,
  book: LedgerBook,
  merchantId: string,
): Promise<AccountRow[]> {
  const keys = LEDGER_CURRENCIES.flatMap((currency) =>
    MERCHANT_ACCOUNT_KINDS.map((kind) => merchantAccountKey(book, merchantId, currency, kind)),
  );
  return ensureAccounts(tx, clock, keys);
}

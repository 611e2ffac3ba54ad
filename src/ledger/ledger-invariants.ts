// The ledger's invariants as code, twice: asserted in memory on every write
// before (or, for a one-statement write, as) it lands — a failure is a bug in
// this module, so the process stops rather than write money that does not add
// up (TigerBeetle's rule: assert, crash, never continue on a broken invariant) —
// and checked over the stored tables by ledger-check.ts.
import assert from 'node:assert/strict';
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

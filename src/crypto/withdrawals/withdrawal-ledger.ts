// The money of a cabinet withdrawal in the ledger: total_debit is RESERVED from
// the merchant's USDT main account (the book of the shop's mode) when the
// withdrawal is created — also while it awaits approval, so the money cannot be
// spent twice meanwhile — as linked pending transfers without a timeout: the
// amount to `hot_wallet`, the network fee to `network_fees` (both type
// `withdrawal`). Completion posts them; failure or rejection voids them.
import type { Clock } from '../../clock.ts';
import type { Tx } from '../../db/transaction.ts';
import { ensureAccounts, merchantAccountKey, shardOf, systemAccountKey } from '../../ledger/ledger-accounts.ts';
import { executeLinked, type LedgerBook, type LedgerRequest } from '../../ledger/ledger-service.ts';
import type { WithdrawalRow } from './withdrawals-repository.ts';

type Leg = 'amount' | 'network_fee';
const legId = (withdrawalId: string, leg: Leg) => `withdrawal:${withdrawalId}:${leg}`;

function legsOf(withdrawal: Pick<WithdrawalRow, 'amount_micro' | 'network_fee_micro'>): { leg: Leg; amount: bigint }[] {
  const legs: { leg: Leg; amount: bigint }[] = [{ leg: 'amount', amount: withdrawal.amount_micro }];
  if (withdrawal.network_fee_micro > 0n) legs.push({ leg: 'network_fee', amount: withdrawal.network_fee_micro });
  return legs;
}

/** Not enough available on the merchant's main account: InsufficientFundsError, nothing written. */
export async function reserveWithdrawal(tx: Tx, clock: Clock, book: LedgerBook, withdrawal: WithdrawalRow): Promise<void> {
  const shard = shardOf(withdrawal.id);
  const [main, hotWallet, networkFees] = await ensureAccounts(tx, clock, [
    merchantAccountKey(book, withdrawal.merchant_id, 'USDT', 'main'),
    systemAccountKey(book, 'hot_wallet', 'USDT', shard),
    systemAccountKey(book, 'network_fees', 'USDT', shard),
  ]);
  await executeLinked(
    tx,
    clock,
    legsOf(withdrawal).map(
      ({ leg, amount }): LedgerRequest => ({
        action: 'reserve',
        id: legId(withdrawal.id, leg),
        debitAccountId: main!.id,
        creditAccountId: leg === 'amount' ? hotWallet!.id : networkFees!.id,
        amount,
        type: 'withdrawal',
        reference: { type: 'withdrawal', id: withdrawal.id },
      }),
    ),
  );
}

export async function settleWithdrawalReservation(tx: Tx, clock: Clock, withdrawal: WithdrawalRow, outcome: 'post' | 'void'): Promise<void> {
  await executeLinked(
    tx,
    clock,
    legsOf(withdrawal).map(({ leg }): LedgerRequest => ({ action: outcome, id: `${legId(withdrawal.id, leg)}:${outcome}`, pendingId: legId(withdrawal.id, leg) })),
  );
}

// The money of a cabinet withdrawal in the ledger, held by the reserved-transfer
// machine (crypto/sending/reservation-ledger.ts): total_debit is RESERVED from
// the merchant's USDT main account (the book of the shop's mode) when the
// withdrawal is created — also while it awaits approval, so the money cannot be
// spent twice meanwhile — the amount and the network fee (both type
// `withdrawal`). Completion posts them; failure or rejection voids them.
import type { Clock } from '../../clock.ts';
import type { Tx } from '../../db/transaction.ts';
import type { LedgerBook } from '../../ledger/ledger-service.ts';
import { reservationOf, reserve, settle, type Reservation } from '../sending/reservation-ledger.ts';
import type { WithdrawalRow } from './withdrawals-repository.ts';

export function withdrawalReservation(
  withdrawal: Pick<WithdrawalRow, 'id' | 'amount_micro' | 'network_fee_micro'>,
): Reservation {
  return reservationOf(
    { type: 'withdrawal', id: withdrawal.id },
    { amount: withdrawal.amount_micro, network_fee: withdrawal.network_fee_micro },
  );
}

/** Not enough available on the merchant's main account: InsufficientFundsError, nothing written. */
export async function reserveWithdrawal(
  tx: Tx,
  clock: Clock,
  book: LedgerBook,
  withdrawal: WithdrawalRow,
): Promise<void> {
  await reserve(tx, clock, withdrawalReservation(withdrawal), {
    book,
    merchantId: withdrawal.merchant_id,
    from: 'merchant',
    typeOf: () => 'withdrawal',
  });
}

/** A rejected withdrawal's reservation voided (the machine settles those that were sent). */
export async function voidWithdrawalReservation(tx: Tx, clock: Clock, withdrawal: WithdrawalRow): Promise<void> {
  await settle(tx, clock, withdrawalReservation(withdrawal), 'void');
}

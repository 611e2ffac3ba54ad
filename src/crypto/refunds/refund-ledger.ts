// The money of refunds in the ledger (docs/refunds-and-withdrawals.md), held by
// the reserved-transfer machine (crypto/sending/reservation-ledger.ts).
// A refund of CREDITED deposits is the merchant's money going back: the
// recipient amount and the network fee are reserved from the merchant's USDT
// main account (both type `refund`).
// A refund of a HELD deposit touches no merchant account: the held amount was
// never booked (its pending credit was voided when it became final), so the part
// sent back needs no entry; the network fee the gateway keeps out of it is
// reserved hot_wallet → network_fees (USDT that arrived on chain and pays the
// chain's cost, which the executor books network_fees → network_costs).
import type { Clock } from '../../clock.ts';
import type { Tx } from '../../db/transaction.ts';
import type { LedgerBook } from '../../ledger/ledger-service.ts';
import { reservationOf, reserve, type Reservation } from '../sending/reservation-ledger.ts';
import type { RefundRow } from './refunds-repository.ts';

export function refundReservation(
  refund: Pick<RefundRow, 'id' | 'held' | 'amount_micro' | 'network_fee_micro'>,
): Reservation {
  return reservationOf(
    { type: 'refund', id: refund.id },
    { amount: refund.held ? 0n : refund.amount_micro, network_fee: refund.network_fee_micro },
  );
}

/** Reserves what the refund takes; not enough available on the merchant's main account: InsufficientFundsError. */
export async function reserveRefund(
  tx: Tx,
  clock: Clock,
  owner: { book: LedgerBook; merchantId: string },
  refund: RefundRow,
): Promise<void> {
  await reserve(tx, clock, refundReservation(refund), {
    ...owner,
    from: refund.held ? 'hot_wallet' : 'merchant',
    typeOf: () => 'refund',
  });
}

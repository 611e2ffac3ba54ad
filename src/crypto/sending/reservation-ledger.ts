// The money an outgoing transfer promises, held in the ledger until the chain
// decides (two-phase: reserve → post | void). Each leg is a pending transfer
// without a timeout (it must not expire while the chain works) from the payer
// to the gateway's account of that leg, sharded by the owner's id: the amount
// to `hot_wallet`, the network fee to `network_fees`, a service fee to `fees`.
// Landing posts the legs; failure voids them (the funds are available again),
// except a network fee the owner charges for a failure its merchant caused.
// The chain's actual cost is booked by the executor (fee-booking.ts).
import type { Clock } from '../../clock.ts';
import type { Tx } from '../../db/transaction.ts';
import { ensureAccounts, merchantAccountKey, shardOf, systemAccountKey } from '../../ledger/ledger-accounts.ts';
import { executeLinked, type LedgerBook, type LedgerRequest, type TransferType } from '../../ledger/ledger-service.ts';

export type ReservationLeg = 'amount' | 'network_fee' | 'service_fee';

export interface Reservation {
  /** The payout, refund or withdrawal the legs are reserved for (their ids and reference). */
  readonly owner: { readonly type: 'payout' | 'refund' | 'withdrawal'; readonly id: string };
  /** The legs with an amount above 0. */
  readonly legs: readonly { readonly leg: ReservationLeg; readonly amount: bigint }[];
}

/** Who pays the legs and how they are typed in the ledger. */
export interface ReservationPayer {
  readonly book: LedgerBook;
  readonly merchantId: string;
  /** The merchant's USDT main account; the hot wallet for money that was never booked to the merchant (a held deposit refunded). */
  readonly from: 'merchant' | 'hot_wallet';
  readonly typeOf: (leg: ReservationLeg) => TransferType;
}

const LEG_ACCOUNTS = { amount: 'hot_wallet', network_fee: 'network_fees', service_fee: 'fees' } as const;

/** The legs of `amounts` that carry money, in leg order. */
export function reservationOf(
  owner: Reservation['owner'],
  amounts: Partial<Record<ReservationLeg, bigint>>,
): Reservation {
  const legs = (['amount', 'network_fee', 'service_fee'] as const).flatMap((leg) => {
    const amount = amounts[leg] ?? 0n;
    return amount > 0n ? [{ leg, amount }] : [];
  });
  return { owner, legs };
}

export function legAccountKey(
  book: LedgerBook,
  ownerId: string,
  leg: ReservationLeg,
): ReturnType<typeof systemAccountKey> {
  return systemAccountKey(book, LEG_ACCOUNTS[leg], 'USDT', shardOf(ownerId));
}

/** The ledger's idempotency id of a leg's reservation, e.g. `payout:po_…:amount`. */
export function legId(owner: Reservation['owner'], leg: ReservationLeg): string {
  return `${owner.type}:${owner.id}:${leg}`;
}

/** Reserves the legs in one linked chain; not enough available on the payer's account: InsufficientFundsError, nothing written. */
export async function reserve(tx: Tx, clock: Clock, reservation: Reservation, payer: ReservationPayer): Promise<void> {
  const { owner } = reservation;
  const serviceFee = reservation.legs.some(({ leg }) => leg === 'service_fee');
  const [main, hotWallet, networkFees, fees] = await ensureAccounts(tx, clock, [
    merchantAccountKey(payer.book, payer.merchantId, 'USDT', 'main'),
    legAccountKey(payer.book, owner.id, 'amount'),
    legAccountKey(payer.book, owner.id, 'network_fee'),
    ...(serviceFee ? [legAccountKey(payer.book, owner.id, 'service_fee')] : []),
  ]);
  const credits = { amount: hotWallet!.id, network_fee: networkFees!.id, service_fee: fees?.id };
  const requests = reservation.legs.map(({ leg, amount }): LedgerRequest => ({
    action: 'reserve',
    id: legId(owner, leg),
    debitAccountId: payer.from === 'hot_wallet' ? hotWallet!.id : main!.id,
    creditAccountId: credits[leg]!,
    amount,
    type: payer.typeOf(leg),
    reference: owner,
  }));
  if (requests.length > 0) await executeLinked(tx, clock, requests);
}

/**
 * Posts (the transfer landed) or voids (it failed) every leg. `networkFeeChargedMicro`
 * above 0 on a void posts that much of the network-fee leg — at most what it
 * reserved — and releases the rest.
 */
export async function settle(
  tx: Tx,
  clock: Clock,
  reservation: Reservation,
  outcome: 'post' | 'void',
  networkFeeChargedMicro = 0n,
): Promise<void> {
  const requests = reservation.legs.map(({ leg, amount }): LedgerRequest => {
    const id = legId(reservation.owner, leg);
    if (leg === 'network_fee' && outcome === 'void' && networkFeeChargedMicro > 0n) {
      return {
        action: 'post',
        id: `${id}:post`,
        pendingId: id,
        amount: networkFeeChargedMicro < amount ? networkFeeChargedMicro : amount,
      };
    }
    return { action: outcome, id: `${id}:${outcome}`, pendingId: id };
  });
  if (requests.length > 0) await executeLinked(tx, clock, requests);
}

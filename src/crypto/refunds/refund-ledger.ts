// The money of refunds in the ledger (docs/refunds-and-withdrawals.md).
// A refund of CREDITED deposits is the merchant's money going back: the
// deposits' sum is reserved from the merchant's USDT main account as linked
// pending transfers without a timeout — the recipient amount to `hot_wallet`,
// the network fee to `network_fees` (both type `refund`).
// A refund of a HELD deposit touches no merchant account: the held amount was
// never booked (its pending credit was voided when it became final), so the part
// sent back needs no entry; the network fee the gateway keeps out of it is
// reserved hot_wallet → network_fees (USDT that arrived on chain and pays the
// chain's cost, which the executor books network_fees → network_costs).
// Completion posts the reservations; failure voids them.
import type { Clock } from '../../clock.ts';
import type { Tx } from '../../db/transaction.ts';
import { ensureAccounts, merchantAccountKey, shardOf, systemAccountKey } from '../../ledger/ledger-accounts.ts';
import { executeLinked, type LedgerBook, type LedgerRequest } from '../../ledger/ledger-service.ts';
import type { RefundRow } from './refunds-repository.ts';

type Leg = 'amount' | 'network_fee';

const legId = (refundId: string, leg: Leg) => `refund:${refundId}:${leg}`;

function legsOf(refund: Pick<RefundRow, 'held' | 'amount_micro' | 'network_fee_micro'>): { leg: Leg; amount: bigint }[] {
  const legs: { leg: Leg; amount: bigint }[] = refund.held ? [] : [{ leg: 'amount', amount: refund.amount_micro }];
  if (refund.network_fee_micro > 0n) legs.push({ leg: 'network_fee', amount: refund.network_fee_micro });
  return legs;
}

/** Reserves what the refund takes; not enough available on the merchant's main account: InsufficientFundsError. */
export async function reserveRefund(tx: Tx, clock: Clock, owner: { book: LedgerBook; merchantId: string }, refund: RefundRow): Promise<void> {
  const shard = shardOf(refund.id);
  const [main, hotWallet, networkFees] = await ensureAccounts(tx, clock, [
    merchantAccountKey(owner.book, owner.merchantId, 'USDT', 'main'),
    systemAccountKey(owner.book, 'hot_wallet', 'USDT', shard),
    systemAccountKey(owner.book, 'network_fees', 'USDT', shard),
  ]);
  const from = refund.held ? hotWallet!.id : main!.id;
  const requests = legsOf(refund).map(
    ({ leg, amount }): LedgerRequest => ({
      action: 'reserve',
      id: legId(refund.id, leg),
      debitAccountId: from,
      creditAccountId: leg === 'amount' ? hotWallet!.id : networkFees!.id,
      amount,
      type: 'refund',
      reference: { type: 'refund', id: refund.id },
    }),
  );
  if (requests.length > 0) await executeLinked(tx, clock, requests);
}

export async function settleRefundReservation(tx: Tx, clock: Clock, refund: RefundRow, outcome: 'post' | 'void'): Promise<void> {
  const requests = legsOf(refund).map(({ leg }): LedgerRequest => ({ action: outcome, id: `${legId(refund.id, leg)}:${outcome}`, pendingId: legId(refund.id, leg) }));
  if (requests.length > 0) await executeLinked(tx, clock, requests);
}

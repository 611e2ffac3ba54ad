// The ledger side of a merchant's refund of a RUB payment (docs/ledger.md): the
// refunded amount is reserved from the merchant's RUB main account towards the
// acquirer's settlement account when the refund is requested, posted when the
// acquirer confirms it, voided (available again) when the acquirer refuses it.
// Idempotent by the refund id. The settlement shard is the payment's, as its credit's.
import type { Clock } from '../clock.ts';
import type { Tx } from '../db/transaction.ts';
import { findShopProfile } from '../merchants/merchant-service.ts';
import { ensureAccounts, merchantAccountKey, shardOf, systemAccountKey } from '../ledger/ledger-accounts.ts';
import { post, reserve, voidPending } from '../ledger/ledger-service.ts';

const reservationId = (refundId: string) => `payment_refund:${refundId}`;

export interface RefundHoldInput {
  readonly refundId: string;
  readonly paymentId: string;
  readonly shopId: string;
  readonly amountKopecks: bigint;
}

/** Merchant RUB main → settlement RUB, reserved; not enough available: InsufficientFundsError (400 insufficient_funds). */
export async function reserveRefund(tx: Tx, clock: Clock, input: RefundHoldInput): Promise<void> {
  const shop = await findShopProfile(tx, input.shopId);
  if (!shop) throw new Error(`shop ${input.shopId} of refund ${input.refundId} vanished`);
  const [merchantMain, settlement] = await ensureAccounts(tx, clock, [
    merchantAccountKey(shop.mode, shop.merchantId, 'RUB', 'main'),
    systemAccountKey(shop.mode, 'settlement', 'RUB', shardOf(input.paymentId)),
  ]);
  await reserve(tx, clock, {
    id: reservationId(input.refundId),
    debitAccountId: merchantMain!.id,
    creditAccountId: settlement!.id,
    amount: input.amountKopecks,
    type: 'refund',
    // About the payment: its page and the accounting export show the refund beside the payment's credit.
    reference: { type: 'payment', id: input.paymentId },
  });
}

/** The acquirer returned the money to the payer: the reservation is posted. */
export async function postRefund(tx: Tx, clock: Clock, refundId: string): Promise<void> {
  await post(tx, clock, { id: `${reservationId(refundId)}:post`, pendingId: reservationId(refundId) });
}

/** The acquirer refused: the reserved amount is available to the merchant again. */
export async function releaseRefund(tx: Tx, clock: Clock, refundId: string): Promise<void> {
  await voidPending(tx, clock, { id: `${reservationId(refundId)}:void`, pendingId: reservationId(refundId) });
}

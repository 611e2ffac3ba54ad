// What an invoice's status is once its final deposits add up to `paidMicro`.
// Paid when the sum reaches the amount less the shop's allowed shortfall,
// overpaid above the amount; short of that it waits (confirming) until it
// expires, then it is underpaid. Statuses only move forward: a late deposit
// to an expired or underpaid invoice can make it underpaid, paid or overpaid.
import type { InvoiceRow } from './receiving-repository.ts';
import type { InvoiceStatus } from './receiving-tables.ts';

/** The shortfall the shop accepts: `bps` basis points of the amount, rounded down. */
function allowedShortfallMicro(amountMicro: bigint, toleranceBps: number): bigint {
  return (amountMicro * BigInt(toleranceBps)) / 10_000n;
}

export function invoiceStatusAfterFinalDeposit(
  invoice: Pick<InvoiceRow, 'amount_micro' | 'expires_at' | 'status'>,
  paidMicro: bigint,
  toleranceBps: number,
  now: Date,
  depositsStillConfirming: number,
): InvoiceStatus {
  if (paidMicro > invoice.amount_micro) return 'overpaid';
  if (paidMicro >= invoice.amount_micro - allowedShortfallMicro(invoice.amount_micro, toleranceBps)) return 'paid';
  const pastExpiry =
    now.getTime() >= invoice.expires_at.getTime() || invoice.status === 'expired' || invoice.status === 'underpaid';
  // Before expiry, or while another deposit is on its way, the rest may still come.
  if (!pastExpiry || (depositsStillConfirming > 0 && invoice.status === 'confirming')) return 'confirming';
  return 'underpaid';
}

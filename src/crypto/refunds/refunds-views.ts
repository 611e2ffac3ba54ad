// Refunds as the API and the crypto.refund.updated webhook show them: amounts as
// canonical USDT decimal strings (as crypto receiving writes them), times in ISO 8601.
import type { NetworkMode } from '../tron/tron-networks.ts';
import type { Clock } from '../../clock.ts';
import type { Tx } from '../../db/transaction.ts';
import { emit } from '../../webhooks/outbox.ts';
import { usdtText } from '../receiving/receiving-views.ts';
import type { RefundRow } from './refunds-repository.ts';
import type { RefundStatus } from './refunds-tables.ts';

export interface RefundView {
  refund_id: string;
  external_id: string;
  status: RefundStatus;
  deposit_id: string | null;
  invoice_id: string | null;
  /** The deposits sent back (one for a deposit refund; the invoice's credited ones for an invoice refund). */
  deposit_ids: string[];
  /** The deposits were held (a blocked wallet): the merchant's balance was never touched. */
  held: boolean;
  network: 'TRC20';
  /** `mainnet` only when the chain's USDT is real (docs/api-decisions.md). */
  network_mode: NetworkMode;
  asset: 'USDT';
  recipient_address: string;
  received_amount: string;
  recipient_amount: string;
  network_fee: string;
  network_fee_actual: string | null;
  tx_hash: string | null;
  error: { code: string; message: string } | null;
  created_at: string;
  completed_at: string | null;
}

export function refundView(row: RefundRow, depositIds: readonly string[]): RefundView {
  return {
    refund_id: row.id,
    external_id: row.external_id,
    status: row.status,
    deposit_id: row.deposit_id,
    invoice_id: row.invoice_id,
    deposit_ids: [...depositIds],
    held: row.held,
    network: row.network,
    network_mode: row.network_mode,
    asset: 'USDT',
    recipient_address: row.recipient_address,
    received_amount: usdtText(row.deposits_micro),
    recipient_amount: usdtText(row.amount_micro),
    network_fee: usdtText(row.network_fee_micro),
    network_fee_actual: row.network_fee_actual_micro === null ? null : usdtText(row.network_fee_actual_micro),
    tx_hash: row.tx_hash,
    error: row.error_code === null ? null : { code: row.error_code, message: row.error_message ?? row.error_code },
    created_at: row.created_at.toISOString(),
    completed_at: row.completed_at?.toISOString() ?? null,
  };
}

/** crypto.refund.updated, in the transaction of the state change (pending at creation too). */
export async function emitRefundUpdated(
  tx: Tx,
  clock: Clock,
  row: RefundRow,
  depositIds: readonly string[],
): Promise<void> {
  await emit(tx, clock, {
    shopId: row.shop_id,
    type: 'crypto.refund.updated',
    data: refundView(row, depositIds),
    destination: 'shop',
  });
}

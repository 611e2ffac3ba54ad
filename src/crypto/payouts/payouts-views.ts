// Payouts and batches as the API and webhooks show them (spec 2.4): amounts as
// canonical USDT decimal strings (no trailing zeros: "10.5", "1", "0.01", as
// crypto receiving writes them), times in ISO 8601.
import type { NetworkMode } from '../tron/tron-networks.ts';
import { usdtText } from '../receiving/receiving-views.ts';
import type { BatchRow, PayoutRow } from './payouts-repository.ts';
import type { BatchStatus, PayoutStatus } from './payouts-tables.ts';

/** The states a payout and a batch show (the API's status filters; the cabinet's tables). */
export { BATCH_STATUSES, PAYOUT_STATUSES } from './payouts-tables.ts';

interface PayoutError {
  code: string;
  message: string;
}

export interface PayoutView {
  payout_id: string;
  external_id: string;
  status: PayoutStatus;
  network: 'TRC20';
  /** `mainnet` only when the chain's USDT is real (docs/api-decisions.md). */
  network_mode: NetworkMode;
  asset: 'USDT';
  recipient_address: string;
  recipient_amount: string;
  network_fee: string;
  service_fee: string;
  total_debit: string;
  /** What the chain actually burned for the transfer, at the rate of the quote; null until final. */
  network_fee_actual: string | null;
  tx_hash: string | null;
  error: PayoutError | null;
  batch_id: string | null;
  created_at: string;
  completed_at: string | null;
}

export interface BatchView {
  batch_id: string;
  external_id: string;
  status: BatchStatus;
  network: 'TRC20';
  asset: 'USDT';
  item_count: number;
  total_debit: string;
  counts: Record<PayoutStatus, number>;
  created_at: string;
  completed_at: string | null;
  payouts: PayoutView[];
}

export function payoutView(row: PayoutRow): PayoutView {
  return {
    payout_id: row.id,
    external_id: row.external_id,
    status: row.status,
    network: row.network,
    network_mode: row.network_mode,
    asset: 'USDT',
    recipient_address: row.recipient_address,
    recipient_amount: usdtText(row.amount_micro),
    network_fee: usdtText(row.network_fee_micro),
    service_fee: usdtText(row.service_fee_micro),
    total_debit: usdtText(row.total_debit_micro),
    network_fee_actual: row.network_fee_actual_micro === null ? null : usdtText(row.network_fee_actual_micro),
    tx_hash: row.tx_hash,
    error: row.error_code === null ? null : { code: row.error_code, message: row.error_message ?? row.error_code },
    batch_id: row.batch_id,
    created_at: row.created_at.toISOString(),
    completed_at: row.completed_at?.toISOString() ?? null,
  };
}

/** A batch without its items: a row of the cabinet's table of batches. */
export type BatchSummaryView = Omit<BatchView, 'payouts'>;

export function batchSummaryView(batch: BatchRow, counts: Record<PayoutStatus, number> | undefined): BatchSummaryView {
  return {
    batch_id: batch.id,
    external_id: batch.external_id,
    status: batch.status,
    network: batch.network,
    asset: 'USDT',
    item_count: batch.item_count,
    total_debit: usdtText(batch.total_debit_micro),
    counts: counts ?? { pending: 0, processing: 0, completed: 0, failed: 0 },
    created_at: batch.created_at.toISOString(),
    completed_at: batch.completed_at?.toISOString() ?? null,
  };
}

export function batchView(batch: BatchRow, items: readonly PayoutRow[]): BatchView {
  const counts: Record<PayoutStatus, number> = { pending: 0, processing: 0, completed: 0, failed: 0 };
  for (const item of items) counts[item.status] += 1;
  return {
    batch_id: batch.id,
    external_id: batch.external_id,
    status: batch.status,
    network: batch.network,
    asset: 'USDT',
    item_count: batch.item_count,
    total_debit: usdtText(batch.total_debit_micro),
    counts,
    created_at: batch.created_at.toISOString(),
    completed_at: batch.completed_at?.toISOString() ?? null,
    payouts: items.map(payoutView),
  };
}

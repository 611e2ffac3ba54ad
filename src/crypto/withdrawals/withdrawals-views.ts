// Withdrawals as the CLI (and later the cabinet) and the cabinet.withdrawal.completed
// webhook show them: amounts as canonical USDT decimal strings, times in ISO 8601.
import type { NetworkMode } from '../tron/tron-networks.ts';
import type { Clock } from '../../clock.ts';
import type { Tx } from '../../db/transaction.ts';
import { emit } from '../../webhooks/outbox.ts';
import { usdtText } from '../receiving/receiving-views.ts';
import type { WithdrawalRow } from './withdrawals-repository.ts';
import type { WithdrawalStatus } from './withdrawals-tables.ts';

export interface WithdrawalView {
  withdrawal_id: string;
  external_id: string | null;
  merchant_id: string;
  shop_id: string;
  status: WithdrawalStatus;
  network: 'TRC20';
  /** `mainnet` only when the chain's USDT is real (docs/api-decisions.md). */
  network_mode: NetworkMode;
  asset: 'USDT';
  recipient_address: string;
  amount: string;
  network_fee: string;
  total_debit: string;
  network_fee_actual: string | null;
  tx_hash: string | null;
  error: { code: string; message: string } | null;
  requested_by: string;
  /** The cabinet user who asked; null when an operator asked (CLI). */
  requested_by_user_id: string | null;
  /** The requester's note. */
  note: string | null;
  /**
   * Who approved, rejected or cancelled it and when (`user_id` null for an operator); null when no
   * approval was needed or it still waits.
   */
  decision: { by: string; user_id: string | null; at: string; approved: boolean; reason: string | null } | null;
  created_at: string;
  completed_at: string | null;
}

export function withdrawalView(row: WithdrawalRow): WithdrawalView {
  return {
    withdrawal_id: row.id,
    external_id: row.external_id,
    merchant_id: row.merchant_id,
    shop_id: row.shop_id,
    status: row.status,
    network: row.network,
    network_mode: row.network_mode,
    asset: 'USDT',
    recipient_address: row.recipient_address,
    amount: usdtText(row.amount_micro),
    network_fee: usdtText(row.network_fee_micro),
    total_debit: usdtText(row.total_debit_micro),
    network_fee_actual: row.network_fee_actual_micro === null ? null : usdtText(row.network_fee_actual_micro),
    tx_hash: row.tx_hash,
    error: row.error_code === null ? null : { code: row.error_code, message: row.error_message ?? row.error_code },
    requested_by: row.requested_by,
    requested_by_user_id: row.requested_by_user_id,
    note: row.note,
    decision:
      row.decided_by === null || row.decided_at === null
        ? null
        : {
            by: row.decided_by,
            user_id: row.decided_by_user_id,
            at: row.decided_at.toISOString(),
            approved: row.status !== 'rejected' && row.status !== 'cancelled',
            reason: row.reject_reason,
          },
    created_at: row.created_at.toISOString(),
    completed_at: row.completed_at?.toISOString() ?? null,
  };
}

/** cabinet.withdrawal.completed: once, on the final outcome (completed, failed, rejected or cancelled), in its transaction. */
export async function emitWithdrawalCompleted(tx: Tx, clock: Clock, row: WithdrawalRow): Promise<void> {
  await emit(tx, clock, {
    shopId: row.shop_id,
    type: 'cabinet.withdrawal.completed',
    data: withdrawalView(row),
    destination: 'shop',
  });
}

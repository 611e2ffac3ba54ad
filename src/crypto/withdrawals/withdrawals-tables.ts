// Kysely types of the tables the withdrawals module owns (migration 0021_crypto_refunds_withdrawals.sql).
import type { OutgoingTransferRequest } from '../sending/outgoing-transfers.ts';
import type { ReservedTransferColumns } from '../sending/reserved-transfer.ts';

type ChainName = OutgoingTransferRequest['chain'];

export const WITHDRAWAL_STATUSES = [
  'awaiting_approval',
  'pending',
  'processing',
  'completed',
  'failed',
  'rejected',
] as const;
export type WithdrawalStatus = (typeof WITHDRAWAL_STATUSES)[number];

export interface WithdrawalTables {
  crypto_withdrawal_settings: { shop_id: string; approval_required: boolean; updated_at: Date };
  crypto_withdrawals: ReservedTransferColumns<WithdrawalStatus> & {
    id: string;
    merchant_id: string;
    shop_id: string;
    /** The caller's key of the withdrawal (migration 0024); null for withdrawals made before it. */
    external_id: string | null;
    network: 'TRC20';
    chain: ChainName;
    recipient_address: string;
    amount_micro: bigint;
    network_fee_micro: bigint;
    total_debit_micro: bigint;
    outgoing_transfer_id: string | null;
    requested_by: string;
    decided_by: string | null;
    decided_at: Date | null;
    reject_reason: string | null;
  };
}

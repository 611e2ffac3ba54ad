// Kysely types of the tables the payouts module owns (migration 0020_crypto_payouts.sql).
import type { NetworkMode } from '../tron/tron-networks.ts';
import type { OutgoingTransferRequest } from '../sending/outgoing-transfers.ts';
import type { ReservedTransferColumns } from '../sending/reserved-transfer.ts';

type ChainName = OutgoingTransferRequest['chain'];

export const PAYOUT_STATUSES = ['pending', 'processing', 'completed', 'failed'] as const;
export type PayoutStatus = (typeof PAYOUT_STATUSES)[number];
export const BATCH_STATUSES = ['pending', 'processing', 'completed', 'partially_completed', 'failed'] as const;
export type BatchStatus = (typeof BATCH_STATUSES)[number];

export interface PayoutTables {
  crypto_payout_settings: {
    shop_id: string;
    enabled: boolean;
    min_amount_micro: bigint;
    max_amount_micro: bigint;
    service_fee_fixed_micro: bigint;
    service_fee_bps: number;
    updated_at: Date;
  };
  crypto_payout_batches: {
    id: string;
    shop_id: string;
    external_id: string;
    network: 'TRC20';
    status: BatchStatus;
    item_count: number;
    total_debit_micro: bigint;
    created_at: Date;
    updated_at: Date;
    completed_at: Date | null;
  };
  crypto_payouts: ReservedTransferColumns<PayoutStatus> & {
    id: string;
    shop_id: string;
    external_id: string;
    batch_id: string | null;
    batch_index: number | null;
    network: 'TRC20';
    chain: ChainName;
    /** Whether the chain's USDT is real (migration 0045). */
    network_mode: NetworkMode;
    recipient_address: string;
    amount_micro: bigint;
    network_fee_micro: bigint;
    service_fee_micro: bigint;
    total_debit_micro: bigint;
    outgoing_transfer_id: string;
  };
}

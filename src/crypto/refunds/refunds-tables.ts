// Kysely types of the tables the refunds module owns (migration 0021_crypto_refunds_withdrawals.sql).
import type { Generated } from 'kysely';
import type { OutgoingTransferRequest } from '../sending/outgoing-transfers.ts';

type ChainName = OutgoingTransferRequest['chain'];

export type RefundStatus = 'pending' | 'processing' | 'completed' | 'failed';

export interface RefundTables {
  crypto_refunds: {
    id: string;
    shop_id: string;
    external_id: string;
    deposit_id: string | null;
    invoice_id: string | null;
    held: boolean;
    network: 'TRC20';
    chain: ChainName;
    recipient_address: string;
    deposits_micro: bigint;
    amount_micro: bigint;
    network_fee_micro: bigint;
    trx_usdt_rate_micro: bigint;
    network_fee_actual_micro: bigint | null;
    status: RefundStatus;
    outgoing_transfer_id: string;
    tx_hash: string | null;
    error_code: string | null;
    error_message: string | null;
    created_at: Date;
    updated_at: Date;
    completed_at: Date | null;
  };
  crypto_refund_deposits: {
    refund_id: string;
    deposit_id: string;
    amount_micro: bigint;
    released: Generated<boolean>;
  };
}

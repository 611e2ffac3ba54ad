// Kysely types of the tables the refunds module owns (migration 0021_crypto_refunds_withdrawals.sql).
import type { Generated } from 'kysely';
import type { NetworkMode } from '../tron/tron-networks.ts';
import type { OutgoingTransferRequest } from '../sending/outgoing-transfers.ts';
import type { ReservedTransferColumns } from '../sending/reserved-transfer.ts';

type ChainName = OutgoingTransferRequest['chain'];

export type RefundStatus = 'pending' | 'processing' | 'completed' | 'failed';

export interface RefundTables {
  crypto_refunds: ReservedTransferColumns<RefundStatus> & {
    id: string;
    shop_id: string;
    external_id: string;
    deposit_id: string | null;
    invoice_id: string | null;
    held: boolean;
    network: 'TRC20';
    chain: ChainName;
    /** Whether the chain's USDT is real (migration 0045). */
    network_mode: NetworkMode;
    recipient_address: string;
    deposits_micro: bigint;
    amount_micro: bigint;
    network_fee_micro: bigint;
    outgoing_transfer_id: string;
  };
  crypto_refund_deposits: {
    refund_id: string;
    deposit_id: string;
    amount_micro: bigint;
    released: Generated<boolean>;
  };
}

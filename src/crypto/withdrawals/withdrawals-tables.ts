// Kysely types of the tables the withdrawals module owns (migrations 0021, 0024 and
// 0034_withdrawal_address_book.sql).
import type { NetworkMode } from '../tron/tron-networks.ts';
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
  'cancelled',
] as const;
export type WithdrawalStatus = (typeof WITHDRAWAL_STATUSES)[number];

export interface WithdrawalTables {
  /** The merchant's address book, per book (chain); an entry is usable from `usable_from`. */
  crypto_withdrawal_addresses: {
    id: string;
    merchant_id: string;
    chain: ChainName;
    label: string;
    address: string;
    added_by: string;
    added_by_user_id: string | null;
    created_at: Date;
    usable_from: Date;
    removed_at: Date | null;
    removed_by: string | null;
  };
  /** "A single person may withdraw up to X" per merchant and book; absent or null: every withdrawal waits. */
  crypto_withdrawal_rules: {
    merchant_id: string;
    chain: ChainName;
    single_person_max_micro: bigint | null;
    updated_at: Date;
  };
  crypto_withdrawals: ReservedTransferColumns<WithdrawalStatus> & {
    id: string;
    merchant_id: string;
    shop_id: string;
    /** The caller's key of the withdrawal (migration 0024); null for withdrawals made before it. */
    external_id: string | null;
    network: 'TRC20';
    chain: ChainName;
    /** Whether the chain's USDT is real (migration 0045). */
    network_mode: NetworkMode;
    recipient_address: string;
    amount_micro: bigint;
    network_fee_micro: bigint;
    total_debit_micro: bigint;
    outgoing_transfer_id: string | null;
    requested_by: string;
    /** The cabinet user who asked; null when an operator asked through the CLI. */
    requested_by_user_id: string | null;
    decided_by: string | null;
    /** The cabinet user who approved, rejected or cancelled; null for an operator (or no decision). */
    decided_by_user_id: string | null;
    decided_at: Date | null;
    reject_reason: string | null;
    /** The address book entry the withdrawal was sent to (cabinet requests). */
    address_id: string | null;
    note: string | null;
  };
}

// Kysely types of the tables the crypto receiving module owns (migrations 0015_crypto_receiving.sql, 0023_crypto_address_pool.sql, 0026_crypto_deposit_evidence.sql, 0030_crypto_ignored_dust.sql, 0057_crypto_address_usdt_totals.sql).
import type { NetworkMode } from '../tron/tron-networks.ts';
import type { Generated } from 'kysely';
import type { AddressKeyId, ChainName } from '../chain/crypto-chain.ts';

export type AddressPurpose = 'invoice' | 'wallet';

export const INVOICE_STATUSES = ['pending', 'confirming', 'paid', 'overpaid', 'underpaid', 'expired'] as const;
export type InvoiceStatus = (typeof INVOICE_STATUSES)[number];
export const WALLET_STATUSES = ['active', 'blocked'] as const;
export type WalletStatus = (typeof WALLET_STATUSES)[number];
/** `unconfirmed`: no second, independent confirmation; held for the operator, never credited (migration 0026). */
export const DEPOSIT_STATUSES = ['confirming', 'credited', 'held', 'orphaned', 'unconfirmed'] as const;
export type DepositStatus = (typeof DEPOSIT_STATUSES)[number];
/** What states a deposit: its transaction's signed calldata, or only the node's log (migration 0026). */
type DepositEvidence = 'signed_call' | 'log_only';

export interface CryptoReceivingTables {
  crypto_address_counters: { key_id: AddressKeyId; next_index: bigint };
  /** Addresses derived ahead of need (migration 0023); a row is taken once. */
  crypto_address_pool: { key_id: AddressKeyId; derivation_index: bigint; key_fingerprint: string; address: string };
  crypto_addresses: {
    address: string;
    key_id: AddressKeyId;
    derivation_index: bigint;
    shop_id: string;
    purpose: AddressPurpose;
    created_at: Date;
    /** Running sum of the address's final (credited or held) deposits (migration 0057). */
    final_usdt_micro: Generated<bigint>;
    /** Running sum of what its completed sweeps moved to the hot wallet (migration 0057). */
    swept_usdt_micro: Generated<bigint>;
    /** final_usdt_micro − swept_usdt_micro, kept by the database. */
    unswept_usdt_micro: Generated<bigint>;
  };
  crypto_shop_settings: {
    shop_id: string;
    underpaid_tolerance_bps: number;
    /** Transfers below this are ignored dust (migration 0030). */
    min_deposit_micro: Generated<bigint>;
    updated_at: Date;
  };
  crypto_invoices: {
    id: string;
    shop_id: string;
    external_id: string;
    network: 'TRC20';
    /** Whether the chain's USDT is real (migration 0045). */
    network_mode: NetworkMode;
    amount_micro: bigint;
    paid_micro: Generated<bigint>;
    address: string;
    status: InvoiceStatus;
    lifetime_s: number;
    callback_url: string | null;
    expires_at: Date;
    paid_at: Date | null;
    created_at: Date;
    updated_at: Date;
  };
  crypto_wallets: {
    id: string;
    shop_id: string;
    client_id: string;
    network: 'TRC20';
    /** Whether the chain's USDT is real (migration 0045). */
    network_mode: NetworkMode;
    address: string;
    status: WalletStatus;
    created_at: Date;
    updated_at: Date;
  };
  crypto_deposits: {
    id: string;
    chain: ChainName;
    shop_id: string;
    address: string;
    invoice_id: string | null;
    wallet_id: string | null;
    tx_id: string;
    log_index: number;
    block_number: bigint;
    block_id: string;
    from_address: string;
    amount_micro: bigint;
    status: DepositStatus;
    late: Generated<boolean>;
    seen_at: Date;
    final_at: Date | null;
    /** Which pending ledger credit is the deposit's current one (migration 0018); 0: none (recorded before it). */
    credit_round: Generated<number>;
    evidence: Generated<DepositEvidence>;
  };
  crypto_chain_cursors: {
    chain: ChainName;
    block_number: bigint;
    block_id: string;
    leader_token: string | null;
    lease_until: Date | null;
    updated_at: Date;
  };
  crypto_scanned_blocks: { chain: ChainName; block_number: bigint; block_id: string };
  /** Transfers below the shop's minimum deposit (migration 0030): never deposits. */
  crypto_ignored_deposits: {
    tx_id: string;
    log_index: number;
    chain: ChainName;
    shop_id: string;
    address: string;
    block_number: bigint;
    block_id: string;
    from_address: string;
    amount_micro: bigint;
    minimum_micro: bigint;
    seen_at: Date;
  };
}

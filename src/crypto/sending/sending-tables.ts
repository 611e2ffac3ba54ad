// Kysely types of the tables the sign-once executor owns (migration 0019_crypto_outgoing_transfers.sql).
import type { Generated } from 'kysely';
import type { EnergyPlan, EnergySource } from '../energy/energy-sources.ts';

/** The chain a transfer is sent on: the same names as crypto receiving's (receiving-tables.ts). */
export type ChainName = 'tron-sandbox' | 'tron-live';

export const OUTGOING_PURPOSES = [
  'payout',
  'refund',
  'withdrawal',
  'sweep',
  'gas_topup',
  'cold_storage',
  'energy_delegation',
  'energy_undelegation',
] as const;
export type OutgoingPurpose = (typeof OUTGOING_PURPOSES)[number];
export type OutgoingStatus = 'queued' | 'submitted' | 'confirmed' | 'failed';
export type OutgoingErrorCode =
  | 'reverted'
  | 'out_of_energy'
  | 'expired'
  | 'insufficient_hot_wallet_funds'
  | 'address_blacklisted'
  | 'invalid_address'
  | 'rejected'
  | 'signer_unavailable';
/**
 * What a transfer moves: USDT (micro-USDT), TRX (sun), or ENERGY — the hot
 * wallet's staked energy delegated to an address or taken back (Stake 2.0),
 * its amount the staked TRX in sun whose energy moves.
 */
export type OutgoingAsset = 'USDT' | 'TRX' | 'ENERGY';
export type AttemptStatus = 'pending' | 'dead' | 'landed';

export interface SendingTables {
  crypto_outgoing_transfers: {
    id: string;
    chain: ChainName;
    purpose: OutgoingPurpose;
    owner_id: string;
    asset: OutgoingAsset;
    from_kind: 'hot_wallet' | 'deposit_address';
    from_address: string | null;
    from_derivation_index: bigint | null;
    to_address: string;
    amount: bigint;
    status: OutgoingStatus;
    tx_id: string | null;
    attempts: Generated<number>;
    fee_sun: bigint | null;
    block_number: bigint | null;
    error_code: OutgoingErrorCode | null;
    error_message: string | null;
    short_of_funds_since: Date | null;
    /** Costs from the receipt (migration 0048): set when the transfer becomes final. */
    energy_used: bigint | null;
    energy_own: bigint | null;
    energy_fee_sun: bigint | null;
    bandwidth_used: bigint | null;
    bandwidth_fee_sun: bigint | null;
    energy_source: EnergySource | null;
    /** Set at signing: the source the energy manager arranged, and what renting it cost. */
    energy_plan: EnergyPlan | null;
    rental_sun: bigint | null;
    /** micro-USDT: the TRX burned plus the rental, at PAYGATE_TRX_USDT_RATE. */
    cost_micro: bigint | null;
    /** Held unsigned since: it would burn more than PAYGATE_TRON_MAX_BURN_TRX. */
    above_burn_cap_since: Date | null;
    /** The last pass that found the signing key does not derive its sending address (migration 0054): held until a recheck. */
    unsignable_checked_at: Date | null;
    created_at: Date;
    updated_at: Date;
    submitted_at: Date | null;
    final_at: Date | null;
  };
  crypto_outgoing_attempts: {
    transfer_id: string;
    attempt: number;
    tx_id: string;
    signed_hex: string;
    expiration: Date;
    ref_block_number: bigint;
    fee_limit_sun: bigint;
    status: AttemptStatus;
    broadcasts: Generated<number>;
    last_broadcast: string | null;
    signed_at: Date;
    last_broadcast_at: Date | null;
  };
  crypto_sending_leases: {
    chain: ChainName;
    leader_token: string | null;
    lease_until: Date | null;
    scanned_block: bigint | null;
    updated_at: Date;
  };
}

// Kysely types of the table the sweeping module owns (migrations 0022_crypto_sweeps.sql, 0051_sweep_energy_delegation.sql,
// 0053_crypto_sweeps_completed_index.sql).
import type { Generated } from 'kysely';
import type { ChainAccess } from '../chain/crypto-chain.ts';

type ChainName = ChainAccess['chain'];

/**
 * topping_up → ready → sweeping → completed | failed (a top-up that was not needed skips to sweeping);
 * on delegated energy: [topping_up →] delegating → ready → sweeping → completed | failed.
 */
export type SweepStatus = 'topping_up' | 'delegating' | 'ready' | 'sweeping' | 'completed' | 'failed';
/** The energy taken back after a delegated attempt: on its way, back, or failed after every try. */
export type UndelegationStatus = 'pending' | 'undelegated' | 'failed';

export interface SweepingTables {
  crypto_sweeps: {
    id: string;
    chain: ChainName;
    address: string;
    status: SweepStatus;
    unswept_final_micro: bigint;
    energy: bigint;
    bandwidth: bigint;
    estimated_fee_sun: bigint;
    trx_before_sun: bigint;
    activated_before: boolean;
    topup_sun: bigint;
    topup_transfer_id: string | null;
    topup_fee_sun: bigint | null;
    amount_micro: bigint | null;
    sweep_transfer_id: string | null;
    sweep_fee_sun: bigint | null;
    tx_hash: string | null;
    error_code: string | null;
    error_message: string | null;
    cleared: Generated<boolean>;
    /** Migration 0051: the energy delegated for the attempt (staked sun), and its taking back. */
    delegated_sun: bigint | null;
    delegation_transfer_id: string | null;
    delegation_fee_sun: bigint | null;
    undelegation_transfer_id: string | null;
    undelegation_status: UndelegationStatus | null;
    undelegation_attempts: Generated<number>;
    undelegation_fee_sun: bigint | null;
    created_at: Date;
    updated_at: Date;
    final_at: Date | null;
  };
}

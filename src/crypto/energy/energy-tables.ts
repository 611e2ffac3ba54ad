// Kysely types of the tables the energy manager owns (migrations 0049_crypto_energy_rentals.sql,
// 0050_crypto_energy_rental_failure.sql, 0052_crypto_energy_reservations.sql).
import type { ChainName } from '../chain/crypto-chain.ts';
import type { RentalOrderStatus } from './energy-provider.ts';

/** Why a rental ended without energy (migration 0050 explains each). */
export type RentalFailureReason = 'provider_failed' | 'not_ordered' | 'not_delivered_in_time';

export interface EnergyTables {
  crypto_energy_rentals: {
    id: string;
    chain: ChainName;
    transfer_id: string;
    address: string;
    provider: string;
    order_id: string | null;
    energy: bigint;
    price_sun: bigint;
    status: RentalOrderStatus;
    /** Set when `status` is `failed` (null on rows older than the column). */
    failure_reason: RentalFailureReason | null;
    created_at: Date;
    updated_at: Date;
  };
  /** Own energy promised to a quoted transfer until it is final (energy-reservations.ts). */
  crypto_energy_reservations: {
    transfer_id: string;
    chain: ChainName;
    energy: bigint;
    created_at: Date;
  };
}

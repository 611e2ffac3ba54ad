// Kysely types of the tables the energy manager owns (migrations 0049_crypto_energy_rentals.sql, 0051_crypto_energy_reservations.sql).
import type { ChainName } from '../chain/crypto-chain.ts';
import type { RentalOrderStatus } from './energy-provider.ts';

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

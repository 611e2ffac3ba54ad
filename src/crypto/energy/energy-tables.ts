// Kysely types of the tables the energy manager owns (migration 0049_crypto_energy_rentals.sql).
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
}

// SQL of the energy manager: the rentals ordered for outgoing transfers.
import type { Selectable } from 'kysely';
import type { Executor } from '../../db/transaction.ts';
import type { ChainName } from '../chain/crypto-chain.ts';
import type { RentalOrderStatus } from './energy-provider.ts';
import type { EnergyTables } from './energy-tables.ts';

export type EnergyRentalRow = Selectable<EnergyTables['crypto_energy_rentals']>;

export async function insertRental(
  db: Executor<EnergyTables>,
  row: {
    readonly id: string;
    readonly chain: ChainName;
    readonly transferId: string;
    readonly address: string;
    readonly provider: string;
    readonly orderId: string;
    readonly energy: bigint;
    readonly priceSun: bigint;
    readonly status: RentalOrderStatus;
    readonly now: Date;
  },
): Promise<void> {
  await db
    .insertInto('crypto_energy_rentals')
    .values({
      id: row.id,
      chain: row.chain,
      transfer_id: row.transferId,
      address: row.address,
      provider: row.provider,
      order_id: row.orderId,
      energy: row.energy,
      price_sun: row.priceSun,
      status: row.status,
      created_at: row.now,
      updated_at: row.now,
    })
    .execute();
}

/** Every rental of these transfers, oldest first. */
export async function rentalsOf(
  db: Executor<EnergyTables>,
  transferIds: readonly string[],
): Promise<EnergyRentalRow[]> {
  if (transferIds.length === 0) return [];
  return db
    .selectFrom('crypto_energy_rentals')
    .selectAll()
    .where('transfer_id', 'in', [...transferIds])
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}

export async function setRentalStatus(
  db: Executor<EnergyTables>,
  id: string,
  status: RentalOrderStatus,
  priceSun: bigint,
  now: Date,
): Promise<void> {
  await db
    .updateTable('crypto_energy_rentals')
    .set({ status, price_sun: priceSun, updated_at: now })
    .where('id', '=', id)
    .execute();
}

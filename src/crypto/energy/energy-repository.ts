// SQL of the energy manager: the rentals ordered for outgoing transfers.
import type { Selectable } from 'kysely';
import type { Executor } from '../../db/transaction.ts';
import type { ChainName } from '../chain/crypto-chain.ts';
import type { RentalOrderStatus } from './energy-provider.ts';
import type { EnergyTables, RentalFailureReason } from './energy-tables.ts';

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

/**
 * A pending rental's new state, compare-and-set on `pending`: a rental already
 * ended (delivered, failed or given up) is never changed again.
 */
export async function setRentalStatus(
  db: Executor<EnergyTables>,
  id: string,
  change: {
    readonly status: RentalOrderStatus;
    readonly priceSun: bigint;
    readonly failureReason: RentalFailureReason | null;
    readonly now: Date;
  },
): Promise<boolean> {
  const result = await db
    .updateTable('crypto_energy_rentals')
    .set({
      status: change.status,
      price_sun: change.priceSun,
      failure_reason: change.failureReason,
      updated_at: change.now,
    })
    .where('id', '=', id)
    .where('status', '=', 'pending')
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

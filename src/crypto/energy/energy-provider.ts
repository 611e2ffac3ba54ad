// An energy rental provider: someone who delegates energy from their own stake
// to an address of ours for a while, for a price in TRX (docs/payouts.md
// "Energy"). One implementation talks to itrx.io's public API (itrx/); the
// simulator of that API (itrx/itrx-simulator.ts) serves tests and sandboxes.
import type { TronAddress } from '../tron/address.ts';

export interface RentalQuote {
  /** Energy the order would be for: at least the provider's minimum order. */
  readonly energy: bigint;
  /** What the order would cost, in sun. */
  readonly priceSun: bigint;
}

export type RentalOrderStatus = 'pending' | 'delivered' | 'failed';

export interface RentalOrder {
  readonly orderId: string;
  readonly status: RentalOrderStatus;
  /** What the provider charged, in sun. */
  readonly priceSun: bigint;
}

/** The provider could not be reached or answered with an error: nothing is known to be ordered. */
export class EnergyProviderError extends Error {
  override readonly name = 'EnergyProviderError';
}

export interface EnergyProvider {
  /** A short name for logs and the rentals table. */
  readonly name: string;
  /** What renting `energy` for one hour to an address would cost now. */
  quote(energy: bigint): Promise<RentalQuote>;
  /** Orders `energy` for one hour delegated to `address`; `reference` is ours (the rental's id), kept by the provider. */
  rent(order: {
    readonly address: TronAddress;
    readonly energy: bigint;
    readonly reference: string;
  }): Promise<RentalOrder>;
  /** The state now of the order placed with `reference`, or null when the provider has none (it never arrived). */
  order(reference: string): Promise<RentalOrder | null>;
}

// Where a transfer's energy comes from (docs/payouts.md "Energy"): the sending
// address's own staked energy, energy delegated to it from the hot wallet's
// stake, energy rented from a provider (delegated to it by the provider), or
// TRX burned at the chain's price. The manager plans one before signing; the
// receipt tells afterwards how much of the energy the sender's own resources
// covered, which is all the chain can say (staked, delegated and rented energy
// look alike there): the plan names that part.

export const ENERGY_SOURCES = ['stake', 'delegate', 'rent', 'burn'] as const;
/** A source the operator may turn on (PAYGATE_TRON_ENERGY_SOURCES). */
export type EnergySourceSetting = (typeof ENERGY_SOURCES)[number];

/** The source planned for a transfer's energy when it is signed. */
export type EnergyPlan = 'staked' | 'delegated' | 'rented' | 'burned';
/** Where a final transfer's energy came from, by its receipt: `mixed` when part was covered and part burned. */
export type EnergySource = EnergyPlan | 'mixed';

/** What a receipt says of the energy: all of it, and the part the sender's own resources covered. */
export interface EnergyReceipt {
  readonly energyUsed: number;
  readonly energyOwnUsed: number;
  readonly energyFeeSun: bigint;
}

/**
 * The source of a final transfer's energy: none for a transfer that used no
 * energy of ours (a TRX transfer); `burned` when the sender's own covered nothing;
 * the planned source (its own energy: `staked` when nothing was planned) when
 * nothing was burned; `mixed` when both.
 */
export function receiptEnergySource(plan: EnergyPlan | null, receipt: EnergyReceipt): EnergySource | null {
  if (receipt.energyUsed === 0) return null;
  const covered = receipt.energyOwnUsed > 0;
  const burned = receipt.energyFeeSun > 0n;
  // Neither: the contract's owner paid it all (origin_energy_usage), nothing of ours.
  if (!covered) return burned ? 'burned' : null;
  if (burned) return 'mixed';
  return plan === null || plan === 'burned' ? 'staked' : plan;
}

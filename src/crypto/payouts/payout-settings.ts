// Per-shop payout settings and the fees they imply. A shop without a row of
// crypto_payout_settings uses DEFAULT_PAYOUT_SETTINGS (docs/payouts-api.md).
// Amounts are micro-USDT; fees are rounded UP to whole cents, so every amount
// of a payout has at most 2 decimal places, like the request's amount.
import type { Executor } from '../../db/transaction.ts';
import * as repository from './payouts-repository.ts';
import type { PayoutSettingsRow } from './payouts-repository.ts';

export interface PayoutSettings {
  readonly enabled: boolean;
  readonly minAmountMicro: bigint;
  readonly maxAmountMicro: bigint;
  readonly serviceFeeFixedMicro: bigint;
  /** Basis points (1/100 %) of the amount. */
  readonly serviceFeeBps: number;
}

export const DEFAULT_PAYOUT_SETTINGS: PayoutSettings = {
  enabled: true,
  minAmountMicro: 1_000_000n,
  maxAmountMicro: 1_000_000_000_000n,
  serviceFeeFixedMicro: 0n,
  serviceFeeBps: 0,
};

/** One cent in micro-USDT: the grid every payout amount and fee lies on. */
const CENT_MICRO = 10_000n;

export function ceilToCent(micro: bigint): bigint {
  return ((micro + CENT_MICRO - 1n) / CENT_MICRO) * CENT_MICRO;
}

export async function payoutSettingsOf(db: Executor, shopId: string): Promise<PayoutSettings> {
  return settingsOfRow(await repository.findSettings(db, shopId));
}

/** A shop's settings row as settings; no row: the defaults. */
export function settingsOfRow(row: PayoutSettingsRow | undefined): PayoutSettings {
  if (!row) return DEFAULT_PAYOUT_SETTINGS;
  return {
    enabled: row.enabled,
    minAmountMicro: row.min_amount_micro,
    maxAmountMicro: row.max_amount_micro,
    serviceFeeFixedMicro: row.service_fee_fixed_micro,
    serviceFeeBps: row.service_fee_bps,
  };
}

/** Replaces a shop's payout settings (the cabinet's and the tests' way in). */
export async function savePayoutSettings(
  db: Executor,
  shopId: string,
  settings: PayoutSettings,
  now: Date,
): Promise<void> {
  if (settings.minAmountMicro <= 0n || settings.minAmountMicro > settings.maxAmountMicro)
    throw new RangeError('payout settings: 0 < min ≤ max');
  if (
    settings.serviceFeeFixedMicro < 0n ||
    !Number.isInteger(settings.serviceFeeBps) ||
    settings.serviceFeeBps < 0 ||
    settings.serviceFeeBps > 10_000
  ) {
    throw new RangeError('payout settings: fees out of range');
  }
  await repository.upsertSettings(db, {
    shop_id: shopId,
    enabled: settings.enabled,
    min_amount_micro: settings.minAmountMicro,
    max_amount_micro: settings.maxAmountMicro,
    service_fee_fixed_micro: settings.serviceFeeFixedMicro,
    service_fee_bps: settings.serviceFeeBps,
    updated_at: now,
  });
}

/** The shop's tariff on one payout: fixed part plus basis points of the amount, rounded up to the cent. */
export function serviceFeeOf(settings: PayoutSettings, amountMicro: bigint): bigint {
  return ceilToCent(settings.serviceFeeFixedMicro + (amountMicro * BigInt(settings.serviceFeeBps) + 9_999n) / 10_000n);
}

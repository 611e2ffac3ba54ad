// Payment methods and a shop's tariff: which methods are on, their amount
// range and the payer fee. A shop without a settings row for a method gets the
// defaults below (documented in docs/payments.md).
import type { Clock } from '../clock.ts';
import { AmountNotSupportedError, InvalidRequestError, MethodUnavailableError, NotFoundError } from '../errors.ts';
import type { Db, Executor } from '../db/transaction.ts';
import { inTransaction } from '../db/transaction.ts';
import { findShopProfile } from '../merchants/merchant-service.ts';
import { formatMinor, percentHalfUp } from '../money/decimal.ts';
import { MAX_AMOUNT_KOPECKS, MIN_AMOUNT_KOPECKS } from './payment-amount.ts';

const formatKopecks = (kopecks: bigint) => formatMinor(kopecks, 'RUB');
import { PAYMENT_METHODS, type PaymentMethod } from './payment-tables.ts';

export interface MethodSettings {
  readonly method: PaymentMethod;
  readonly enabled: boolean;
  readonly minKopecks: bigint;
  readonly maxKopecks: bigint;
  /** Payer fee in basis points (1/100 of a percent). */
  readonly feeBasisPoints: number;
}

/** Every method on, the whole 1..1 000 000 RUB range, no payer fee. */
const DEFAULT_METHOD_SETTINGS: Readonly<Record<PaymentMethod, MethodSettings>> = {
  card: {
    method: 'card',
    enabled: true,
    minKopecks: MIN_AMOUNT_KOPECKS,
    maxKopecks: MAX_AMOUNT_KOPECKS,
    feeBasisPoints: 0,
  },
  sbp: {
    method: 'sbp',
    enabled: true,
    minKopecks: MIN_AMOUNT_KOPECKS,
    maxKopecks: MAX_AMOUNT_KOPECKS,
    feeBasisPoints: 0,
  },
  sberpay: {
    method: 'sberpay',
    enabled: true,
    minKopecks: MIN_AMOUNT_KOPECKS,
    maxKopecks: MAX_AMOUNT_KOPECKS,
    feeBasisPoints: 0,
  },
};

export function isPaymentMethod(code: string): code is PaymentMethod {
  return (PAYMENT_METHODS as readonly string[]).includes(code);
}

/** The shop's settings of every method, defaults filled in, in the order card, sbp, sberpay. */
export async function shopMethodSettings(db: Executor, shopId: string): Promise<MethodSettings[]> {
  const rows = await db.selectFrom('payment_method_settings').selectAll().where('shop_id', '=', shopId).execute();
  return PAYMENT_METHODS.map((method) => {
    const row = rows.find((candidate) => candidate.method === method);
    if (!row) return DEFAULT_METHOD_SETTINGS[method];
    return {
      method,
      enabled: row.enabled,
      minKopecks: row.min_kopecks,
      maxKopecks: row.max_kopecks,
      feeBasisPoints: row.fee_bps,
    };
  });
}

export function coversAmount(settings: MethodSettings, amountKopecks: bigint): boolean {
  return settings.enabled && amountKopecks >= settings.minKopecks && amountKopecks <= settings.maxKopecks;
}

export interface Tariff {
  readonly method: PaymentMethod | null;
  readonly amountTotalKopecks: bigint;
}

/**
 * Decides the bound method and amount_total of a new payment, or throws
 * `method_unavailable` (unknown, switched off, or out of the method's range) /
 * `amount_not_supported` (no enabled method covers the amount).
 */
export function priceNewPayment(
  settings: readonly MethodSettings[],
  amountKopecks: bigint,
  method: string | null,
): Tariff {
  if (method !== null) {
    if (!isPaymentMethod(method)) {
      throw new MethodUnavailableError(
        `Method "${method.slice(0, 40)}" is not supported; use one of ${PAYMENT_METHODS.join(', ')}.`,
      );
    }
    const chosen = settings.find((candidate) => candidate.method === method)!;
    if (!chosen.enabled) throw new MethodUnavailableError(`Method "${method}" is switched off for this shop.`);
    if (!coversAmount(chosen, amountKopecks)) {
      throw new MethodUnavailableError(
        `Method "${method}" accepts ${formatKopecks(chosen.minKopecks)} to ${formatKopecks(chosen.maxKopecks)} RUB in this shop.`,
      );
    }
    return { method, amountTotalKopecks: amountKopecks + percentHalfUp(amountKopecks, chosen.feeBasisPoints) };
  }
  const usable = settings.filter((candidate) => coversAmount(candidate, amountKopecks));
  if (usable.length === 0) {
    const enabled = settings.filter((candidate) => candidate.enabled);
    const ranges = enabled.map(
      (candidate) =>
        `${candidate.method} ${formatKopecks(candidate.minKopecks)}–${formatKopecks(candidate.maxKopecks)}`,
    );
    throw new AmountNotSupportedError(
      enabled.length === 0
        ? 'No payment method is enabled for this shop; enable one in the shop settings (paygate shop methods set).'
        : `The shop's tariff does not cover ${formatKopecks(amountKopecks)} RUB (${ranges.join(', ')} RUB); ` +
            'use an amount inside a range or widen the method limits in the shop settings.',
    );
  }
  // No method bound: the payer picks on the page and pays that method's fee; until then, total = amount.
  return { method: null, amountTotalKopecks: amountKopecks };
}

/** What the payer pays with `method` for a payment of `amountKopecks`. */
export function totalWithMethod(settings: MethodSettings, amountKopecks: bigint): bigint {
  return amountKopecks + percentHalfUp(amountKopecks, settings.feeBasisPoints);
}

export interface MethodSettingsChange {
  readonly enabled?: boolean | undefined;
  readonly minKopecks?: bigint | undefined;
  readonly maxKopecks?: bigint | undefined;
  readonly feeBasisPoints?: number | undefined;
}

/** Changes one method of a shop (the CLI and, later, the cabinet). */
export async function updateShopMethod(
  deps: { db: Db; clock: Clock },
  shopId: string,
  method: string,
  change: MethodSettingsChange,
): Promise<MethodSettings> {
  if (!isPaymentMethod(method))
    throw new InvalidRequestError(`unknown method "${method}"; known: ${PAYMENT_METHODS.join(', ')}`);
  return inTransaction(deps.db, async (tx) => {
    if (!(await findShopProfile(tx, shopId))) throw new NotFoundError(`no shop ${shopId}`);
    const current = (await shopMethodSettings(tx, shopId)).find((candidate) => candidate.method === method)!;
    const next: MethodSettings = {
      method,
      enabled: change.enabled ?? current.enabled,
      minKopecks: change.minKopecks ?? current.minKopecks,
      maxKopecks: change.maxKopecks ?? current.maxKopecks,
      feeBasisPoints: change.feeBasisPoints ?? current.feeBasisPoints,
    };
    if (
      next.minKopecks < MIN_AMOUNT_KOPECKS ||
      next.maxKopecks > MAX_AMOUNT_KOPECKS ||
      next.minKopecks > next.maxKopecks
    ) {
      throw new InvalidRequestError('limits must satisfy 1.00 <= min <= max <= 1000000.00 RUB');
    }
    if (!Number.isInteger(next.feeBasisPoints) || next.feeBasisPoints < 0 || next.feeBasisPoints > 10_000) {
      throw new InvalidRequestError('fee must be 0 to 100 % (0..10000 basis points)');
    }
    const values = {
      enabled: next.enabled,
      min_kopecks: next.minKopecks,
      max_kopecks: next.maxKopecks,
      fee_bps: next.feeBasisPoints,
      updated_at: deps.clock.now(),
    };
    await tx
      .insertInto('payment_method_settings')
      .values({ shop_id: shopId, method, ...values })
      .onConflict((conflict) => conflict.columns(['shop_id', 'method']).doUpdateSet(values))
      .execute();
    return next;
  });
}

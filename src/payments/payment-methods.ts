// Payment methods and a shop's tariff: which methods are on, their amount
// range and the payer fee. A shop without a settings row for a method gets the
// defaults below (documented in docs/payments.md).
import { recordAudit, type AuditActor } from '../audit/audit-service.ts';
import type { Clock } from '../clock.ts';
import { AmountNotSupportedError, InvalidRequestError, MethodUnavailableError, NotFoundError } from '../errors.ts';
import type { Db, Executor } from '../db/transaction.ts';
import { inTransaction } from '../db/transaction.ts';
import { findShopProfile } from '../merchants/merchant-service.ts';
import { formatMinor, parseMinor, percentHalfUp } from '../money/decimal.ts';
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

/** An amount in RUB as a person types it (the CLI's --min/--max, the cabinet's form): at most 2 decimals. */
export function parseRubles(value: string, field: string): bigint {
  const parsed = parseMinor(value.trim(), 'RUB', 'decimal-string');
  if (!parsed.ok || parsed.minor < 0n)
    throw new InvalidRequestError(`${field} must be an amount in RUB with at most 2 decimals, e.g. 1500.50`);
  return parsed.minor;
}

/** A payer fee as a person types it: "2.5" (percent, at most 2 decimals) → 250 basis points. */
export function parseFeePercent(value: string, field: string): number {
  const match = /^(\d{1,3})(?:\.(\d{1,2}))?$/.exec(value.trim());
  if (!match) throw new InvalidRequestError(`${field} must be a percentage with at most 2 decimals, e.g. 2.5`);
  return Number(match[1]) * 100 + Number((match[2] ?? '').padEnd(2, '0'));
}

/** A method's settings as the CLI prints them and the audit log records them. */
export function describeMethodSettings(settings: MethodSettings): {
  method: PaymentMethod;
  enabled: boolean;
  min_amount: string;
  max_amount: string;
  fee_percent: string;
} {
  return {
    method: settings.method,
    enabled: settings.enabled,
    min_amount: formatKopecks(settings.minKopecks),
    max_amount: formatKopecks(settings.maxKopecks),
    fee_percent: (settings.feeBasisPoints / 100).toFixed(2),
  };
}

function sameSettings(one: MethodSettings, other: MethodSettings): boolean {
  return (
    one.enabled === other.enabled &&
    one.minKopecks === other.minKopecks &&
    one.maxKopecks === other.maxKopecks &&
    one.feeBasisPoints === other.feeBasisPoints
  );
}

/**
 * Changes one method of a shop (the CLI and the cabinet): validated, written and
 * audited as `method.changed` (before/after) in one transaction. The write
 * notifies `shop:<id>`, so every instance's method-settings cache drops the shop
 * at commit and the next payment and payment page see the change.
 */
export async function updateShopMethod(
  deps: { db: Db; clock: Clock },
  shopId: string,
  method: string,
  change: MethodSettingsChange,
  actor: AuditActor,
): Promise<MethodSettings> {
  if (!isPaymentMethod(method))
    throw new InvalidRequestError(`unknown method "${method}"; known: ${PAYMENT_METHODS.join(', ')}`);
  return inTransaction(deps.db, async (tx) => {
    const shop = await findShopProfile(tx, shopId);
    if (!shop) throw new NotFoundError(`no shop ${shopId}`);
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
    if (sameSettings(current, next)) return next;
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
    await recordAudit(tx, deps.clock, {
      actor,
      action: 'method.changed',
      merchantId: shop.merchantId,
      shopId,
      target: method,
      details: { before: describeMethodSettings(current), after: describeMethodSettings(next) },
    });
    return next;
  });
}

// RUB payments: creation (validation, tariff, idempotency), reads, and the
// state machine pending → paid | failed | expired. Every transition is one
// guarded UPDATE … WHERE status = 'pending' inside the caller's transaction,
// and emits its webhook event through the outbox in that same transaction.
import { randomInt } from 'node:crypto';
import type { Clock } from '../clock.ts';
import type { Config } from '../config.ts';
import { createdAtOrder, readListPage, type ListPage, type ListQuery } from '../db/list-page.ts';
import { inTransaction, isUniqueViolation, type Db, type Tx } from '../db/transaction.ts';
import { InvalidRequestError, InvalidStateError, MethodUnavailableError, NotFoundError } from '../errors.ts';
import { newUuid } from '../ids.ts';
import { creditPaymentPaid } from './payment-credit.ts';
import { emit } from '../webhooks/outbox.ts';
import type { ShopMode } from '../merchants/merchant-service.ts';
import { acquirersForShop, type ConnectorDeps } from './connectors/connector-registry.ts';
import { minorToJsonNumber } from '../money/decimal.ts';
import { numberLexeme } from '../money/json-lexemes.ts';
import { parsePaymentAmount } from './payment-amount.ts';
import type { MethodSettingsSource } from './method-settings-cache.ts';
import { priceNewPayment, shopMethodSettings } from './payment-methods.ts';
import * as repository from './payment-repository.ts';
import type { PaymentRow } from './payment-repository.ts';
import type { PaymentMethod, PaymentStatus } from './payment-tables.ts';
import {
  createAtomically,
  type IdempotencyRule,
  type KeyedRequest,
  type StoredResponse,
} from '../idempotency/idempotency-service.ts';
import { requestFingerprint } from '../idempotency/request-fingerprint.ts';
import { webhookUrlProblem, type WebhookUrlRules } from '../webhooks/url-guard.ts';

const PAYMENT_LIFETIME_MS = 60 * 60 * 1000;
export const ORDER_ID_MAX_LENGTH = 255;
export const CALLBACK_URL_MAX_LENGTH = 2048;
const ORDER_CODE_LENGTH = 10;
const ORDER_CODE_ALPHABET = 'abcdefghijkmnopqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789';
const ORDER_CODE_ATTEMPTS_MAX = 3;
const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export interface PaymentServiceDeps extends ConnectorDeps {
  readonly db: Db;
  readonly clock: Clock;
  readonly config: Pick<Config, 'publicUrl' | 'allowHttpWebhooks' | 'webhookAllowPrivate'>;
  /** Where creation reads the shop's method settings: the per-instance cache, or the database each time. */
  readonly methodSettings?: MethodSettingsSource;
}

/** The shop a payment is created for, as the API key names it. */
export interface PaymentShop {
  readonly shopId: string;
  readonly mode: ShopMode;
}

/** The Payment of spec 2.2, field for field. */
export interface PaymentView {
  payment_id: string;
  order_code: string;
  payment_url: string;
  status: PaymentStatus;
  amount: number;
  amount_total: number;
  currency: 'RUB';
  method: PaymentMethod | null;
  order_id: string | null;
  created_at: string;
  paid_at: string | null;
  expires_at: string;
}

export function paymentView(row: PaymentRow, publicUrl: string): PaymentView {
  return {
    payment_id: row.id,
    order_code: row.order_code,
    payment_url: `${publicUrl}/pay/${row.order_code}`,
    status: row.status,
    amount: minorToJsonNumber(row.amount_kopecks, 'RUB'),
    amount_total: minorToJsonNumber(row.amount_total_kopecks, 'RUB'),
    currency: row.currency,
    method: row.method,
    order_id: row.order_id,
    created_at: row.created_at.toISOString(),
    paid_at: row.paid_at ? row.paid_at.toISOString() : null,
    expires_at: row.expires_at.toISOString(),
  };
}

/** The request body of spec 2.1 as the schema let it through (types checked, nothing coerced). */
export interface CreatePaymentRequest {
  readonly amount: number;
  readonly currency: string;
  readonly method?: string | null | undefined;
  readonly callback_url?: string | null | undefined;
  readonly order_id?: string | null | undefined;
}

export interface CreatePaymentResult {
  readonly status: number;
  /** The exact response bytes; a replay returns the very same string. */
  readonly body: string;
}

function generateOrderCode(): string {
  let code = '';
  for (let index = 0; index < ORDER_CODE_LENGTH; index++)
    code += ORDER_CODE_ALPHABET[randomInt(ORDER_CODE_ALPHABET.length)];
  return code;
}

function validateRequest(
  request: CreatePaymentRequest,
  rules: WebhookUrlRules,
): {
  amountKopecks: bigint;
  method: string | null;
  callbackUrl: string | null;
  orderId: string | null;
} {
  // The number as the client wrote it; String(amount) for a request that did not come through the JSON parser.
  const amountKopecks = parsePaymentAmount(numberLexeme(request, 'amount') ?? String(request.amount));
  if (request.currency !== 'RUB') {
    throw new InvalidRequestError(`currency must be "RUB"; got "${String(request.currency).slice(0, 16)}".`);
  }
  const callbackUrl = request.callback_url ?? null;
  if (callbackUrl !== null) {
    const problem =
      callbackUrl.length > CALLBACK_URL_MAX_LENGTH
        ? 'must be at most 2048 characters'
        : webhookUrlProblem(callbackUrl, rules);
    if (problem)
      throw new InvalidRequestError(
        `callback_url ${problem}; send an absolute URL (https, or http where allowed) of a public host.`,
      );
  }
  const orderId = request.order_id ?? null;
  if (orderId !== null && (orderId.length < 1 || orderId.length > ORDER_ID_MAX_LENGTH)) {
    throw new InvalidRequestError('order_id must be 1 to 255 characters.');
  }
  return { amountKopecks, method: request.method ?? null, callbackUrl, orderId };
}

/** Spec 4.1: an Idempotency-Key names one payment for 24 hours, and its repeat gets the first response byte for byte. */
const PAYMENT_IDEMPOTENCY_RULE: IdempotencyRule = {
  operation: 'payment.create',
  windowMs: 24 * 60 * 60 * 1000,
  replay: 'stored-response',
  conflictMessage:
    'This Idempotency-Key was already used with a different request body; use a new key for a new payment.',
};

/**
 * What an Idempotency-Key compares: the request as it was understood (absent =
 * null, the amount in kopecks), not as it was spelled, so "method": null and no
 * method, or 10.1 and 10.10, are the same payment.
 */
function paymentRequestHash(valid: ReturnType<typeof validateRequest>): string {
  return requestFingerprint({
    amount_kopecks: valid.amountKopecks.toString(),
    currency: 'RUB',
    method: valid.method,
    callback_url: valid.callbackUrl,
    order_id: valid.orderId,
  });
}

/**
 * POST /v1/payments. Without a key every call creates a payment; with one, the
 * payment and its idempotency record are written in one statement, so the key
 * names one payment and a repeat replays its first response.
 */
export async function createPayment(
  deps: PaymentServiceDeps,
  shop: PaymentShop,
  request: CreatePaymentRequest,
  idempotencyKey: string | undefined,
): Promise<CreatePaymentResult> {
  const valid = validateRequest(request, deps.config);
  const keyed: KeyedRequest | undefined =
    idempotencyKey === undefined
      ? undefined
      : { shopId: shop.shopId, key: idempotencyKey, fingerprint: paymentRequestHash(valid) };
  // Settings are read before, not with, the insert: a change racing a create is the same as one a moment later.
  const settings = await (deps.methodSettings?.settingsOf ?? shopMethodSettings)(deps.db, shop.shopId);
  const tariff = priceNewPayment(settings, valid.amountKopecks, valid.method);
  const candidates = settings
    .filter(
      (entry) => entry.enabled && entry.minKopecks <= valid.amountKopecks && valid.amountKopecks <= entry.maxKopecks,
    )
    .map((entry) => entry.method);
  await assertChargeable(deps, shop, tariff.method, candidates);
  for (let attempt = 1; ; attempt++) {
    const row = newPaymentRow(deps.clock, shop.shopId, valid, tariff);
    const response: StoredResponse = { status: 201, body: JSON.stringify(paymentView(row, deps.config.publicUrl)) };
    try {
      if (!keyed) {
        await repository.insertPayment(deps.db, row);
        return response;
      }
      const outcome = await createAtomically(
        deps.db,
        deps.clock,
        PAYMENT_IDEMPOTENCY_RULE,
        keyed,
        { resourceId: row.id, response },
        (creator) => repository.insertPaymentQuery(creator, row),
      );
      if (outcome.kind === 'created') return response;
      if (outcome.kind === 'replay') return outcome.response;
      throw new Error('payment idempotency replays stored responses'); // the rule above says so
    } catch (error) {
      // A clash of random order codes is astronomically rare; a fresh code settles it.
      if (attempt < ORDER_CODE_ATTEMPTS_MAX && isUniqueViolation(error, 'payments_order_code_key')) continue;
      throw error;
    }
  }
}

/**
 * A payment must be payable: a bound method needs an acquirer that charges it (on a
 * live shop, a configured production connector), and an unbound one needs at least
 * one of the shop's methods for this amount to have such an acquirer.
 */
async function assertChargeable(
  deps: PaymentServiceDeps,
  shop: PaymentShop,
  method: PaymentMethod | null,
  candidates: readonly PaymentMethod[],
): Promise<void> {
  const acquirers = await acquirersForShop(deps, { id: shop.shopId, mode: shop.mode });
  const available = acquirers.methods;
  if (method === null) {
    if (candidates.some((candidate) => acquirers.forMethod(candidate))) return;
    throw new MethodUnavailableError(
      `No method of this shop can take this payment in live mode (${candidates.join(', ') || 'none enabled for this amount'})` +
        (available.length > 0
          ? `; configured acquirer connectors charge ${available.join(', ')}.`
          : '; no live acquirer connector is configured yet for this shop.'),
    );
  }
  if (acquirers.forMethod(method)) return;
  throw new MethodUnavailableError(
    `Method "${method}" cannot be paid in a live shop: no configured acquirer connector supports it` +
      (available.length > 0
        ? `; use one of ${available.join(', ')}.`
        : '; no live acquirer connector is configured yet for this shop.'),
  );
}

function newPaymentRow(
  clock: Clock,
  shopId: string,
  valid: ReturnType<typeof validateRequest>,
  tariff: ReturnType<typeof priceNewPayment>,
): PaymentRow {
  const now = clock.now();
  return {
    id: newUuid(),
    shop_id: shopId,
    order_code: generateOrderCode(),
    status: 'pending',
    amount_kopecks: valid.amountKopecks,
    amount_total_kopecks: tariff.amountTotalKopecks,
    currency: 'RUB',
    method: tariff.method,
    order_id: valid.orderId,
    callback_url: valid.callbackUrl,
    created_at: now,
    expires_at: new Date(now.getTime() + PAYMENT_LIFETIME_MS),
    paid_at: null,
    paid_method: null,
    paid_total_kopecks: null,
    failed_at: null,
    failure_reason: null,
    expired_at: null,
  };
}

export function isUuid(text: string): boolean {
  return UUID_PATTERN.test(text);
}

/** A payment of the shop; another shop's payment, or a malformed id, is 404. */
export async function getPayment(deps: PaymentServiceDeps, shopId: string, paymentId: string): Promise<PaymentView> {
  const row = isUuid(paymentId)
    ? await repository.findPaymentOfShop(deps.db, shopId, paymentId.toLowerCase())
    : undefined;
  if (!row) throw new NotFoundError('No such payment.');
  return paymentView(row, deps.config.publicUrl);
}

const PAYMENT_LIST_ORDER = createdAtOrder(isUuid);

export interface ListPaymentsInput extends ListQuery {
  readonly status?: PaymentStatus | undefined;
  readonly orderId?: string | undefined;
}

export async function listPaymentsOfShop(
  deps: PaymentServiceDeps,
  shopId: string,
  input: ListPaymentsInput,
): Promise<ListPage<PaymentView>> {
  return readListPage(
    input,
    PAYMENT_LIST_ORDER,
    (window) => repository.listPayments(deps.db, { shopId, status: input.status, orderId: input.orderId, ...window }),
    (rows) => rows.map((row) => paymentView(row, deps.config.publicUrl)),
  );
}

// ---- The state machine: movePayment, in the caller's transaction. ----

async function emitPaymentEvent(tx: Tx, clock: Clock, publicUrl: string, type: string, row: PaymentRow): Promise<void> {
  if (row.callback_url === null) return;
  await emit(tx, clock, {
    shopId: row.shop_id,
    type,
    data: paymentView(row, publicUrl),
    destination: row.callback_url,
  });
}

/** Where a pending payment moves, with what each move needs. */
export type PaymentMove =
  | {
      readonly to: 'paid';
      /** The method the payer used (the bound one, or the one chosen on the page). */
      readonly method: PaymentMethod;
      /** What the payer was charged: amount plus that method's fee. */
      readonly chargedTotalKopecks: bigint;
      /**
       * When the acquirer charge began (its attempt was recorded). A charge begun
       * before expires_at pays the payment even if its outcome is applied later
       * (after a crash, by reconciliation); the expiry worker waits for it.
       */
      readonly startedAt?: Date | undefined;
    }
  /** The acquirer's final refusal, or the test helper. */
  | { readonly to: 'failed'; readonly reason: string }
  /** The expiry worker, or the test helper. */
  | { readonly to: 'expired' };

/**
 * pending → paid | failed | expired, the one place a payment moves (the
 * acquirer flow, the expiry worker and the test helper call it): a guarded
 * UPDATE, so that a payment moves at most once and is never paid for a charge
 * begun at or after its expires_at. A paid payment is credited (the merchant's
 * RUB main account gets `amount`, the gateway's fees account the payer fee).
 * Emits `payment.<status>`; throws InvalidStateError (409 invalid_state) when
 * the payment does not move.
 */
export async function movePayment(
  tx: Tx,
  clock: Clock,
  publicUrl: string,
  payment: PaymentRow,
  move: PaymentMove,
): Promise<PaymentRow> {
  const moved = await guardedTransition(tx, clock.now(), payment.id, move);
  if (!moved) throw new InvalidStateError(await refusalMessage(tx, payment.id, move.to, clock));
  if (move.to === 'paid') {
    await creditPaymentPaid(tx, clock, {
      paymentId: moved.id,
      shopId: moved.shop_id,
      amountKopecks: moved.amount_kopecks,
      feeKopecks: move.chargedTotalKopecks - moved.amount_kopecks,
    });
  }
  await emitPaymentEvent(tx, clock, publicUrl, `payment.${move.to}`, moved);
  return moved;
}

function guardedTransition(tx: Tx, now: Date, paymentId: string, move: PaymentMove): Promise<PaymentRow | undefined> {
  switch (move.to) {
    case 'paid':
      return repository.transitionToPaid(tx, paymentId, now, move.method, move.chargedTotalKopecks, move.startedAt);
    case 'failed':
      return repository.transitionToFailed(tx, paymentId, now, move.reason.slice(0, 200));
    case 'expired':
      return repository.transitionToExpired(tx, paymentId, now);
  }
}

async function refusalMessage(tx: Tx, paymentId: string, target: PaymentStatus, clock: Clock): Promise<string> {
  const current = await repository.findPaymentById(tx, paymentId);
  if (!current) return 'No such payment.';
  if (current.status === 'pending' && target === 'paid' && current.expires_at <= clock.now()) {
    return 'The payment is past its expires_at and cannot be paid.';
  }
  if (current.status === 'pending' && target === 'expired') {
    return 'A charge of this payment is still being confirmed with the acquirer; it cannot expire until its outcome is known.';
  }
  return `The payment is ${current.status}; it cannot become ${target}.`;
}

// ---- Test helpers (sandbox shops only): the same transitions the acquirer and the clock drive. ----

export type TestHelperAction = 'pay' | 'fail' | 'expire';

export async function runTestHelper(
  deps: PaymentServiceDeps,
  shop: { shopId: string; mode: 'sandbox' | 'live' },
  paymentId: string,
  action: TestHelperAction,
): Promise<PaymentView> {
  if (shop.mode !== 'sandbox' || !isUuid(paymentId)) throw new NotFoundError('No such payment.');
  const row = await inTransaction(deps.db, async (tx) => {
    const payment = await tx
      .selectFrom('payments')
      .selectAll()
      .where('id', '=', paymentId.toLowerCase())
      .where('shop_id', '=', shop.shopId)
      .forUpdate()
      .executeTakeFirst();
    if (!payment) throw new NotFoundError('No such payment.');
    const publicUrl = deps.config.publicUrl;
    switch (action) {
      case 'pay':
        return movePayment(tx, deps.clock, publicUrl, payment, {
          to: 'paid',
          method: payment.method ?? 'card',
          chargedTotalKopecks: payment.amount_total_kopecks,
        });
      case 'fail':
        return movePayment(tx, deps.clock, publicUrl, payment, { to: 'failed', reason: 'test_helper' });
      case 'expire':
        return movePayment(tx, deps.clock, publicUrl, payment, { to: 'expired' });
    }
  });
  return paymentView(row, deps.config.publicUrl);
}

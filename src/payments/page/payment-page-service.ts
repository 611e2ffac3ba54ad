// The payer's side of a payment: what the page shows, and the method flows
// through the acquirer connector. Every charge is recorded as a payment attempt
// first; connector calls happen outside transactions; the outcome is applied by
// attempt-service.ts through the same guarded transitions as everywhere.
import type { AppContext } from '../../context.ts';
import type { Db } from '../../db/transaction.ts';
import { findShopProfile } from '../../merchants/merchant-service.ts';
import { findLatestAttemptOfPayment, type AttemptRow } from '../attempt-repository.ts';
import {
  applyAttemptOutcome,
  armConfirmation,
  chargeAttempt,
  chargeReferenceOf,
  payerActionOf,
  startAttempt,
} from '../attempt-service.ts';
import type { CardDetails, ChargeOutcome } from '../connectors/acquirer-connector.ts';
import type { CrashPointHook } from '../crash-points.ts';
import {
  acquirersForShop,
  connectorNamed,
  type ConnectorDeps,
  type ShopAcquirers,
} from '../connectors/connector-registry.ts';
import { coversAmount, shopMethodSettings, totalWithMethod, type MethodSettings } from '../payment-methods.ts';
import { findPaymentByOrderCode, type PaymentRow } from '../payment-repository.ts';
import type { PaymentMethod } from '../payment-tables.ts';

export type PageDeps = Pick<AppContext, 'db' | 'clock' | 'config' | 'logger' | 'keyring'> &
  Pick<ConnectorDeps, 'keyring' | 'acquirerProviders'> & { readonly crashPoint?: CrashPointHook | undefined };

const ORDER_CODE_PATTERN = /^[A-Za-z0-9]{6,32}$/;

interface MethodOption {
  readonly method: PaymentMethod;
  readonly totalKopecks: bigint;
}

/**
 * Where the payer stands while the payment is pending, from its newest attempt:
 * `open` (nothing in flight: choose and pay), `payer_action` (at the acquirer's
 * page, in the bank app, or at the confirmation step), `processing` (the acquirer
 * holds the charge), `declined` (the last try was refused; the payer may retry).
 */
export type PayerStage = 'open' | 'payer_action' | 'processing' | 'declined';

export function payerStageOf(attempt: Pick<AttemptRow, 'status'> | undefined): PayerStage {
  switch (attempt?.status) {
    case 'requires_action':
    case 'requires_confirmation':
      return 'payer_action';
    case 'pending':
      return 'processing';
    case 'declined':
      return 'declined';
    default:
      return 'open';
  }
}

/** What the payer's page polls (`GET /pay/{order_code}/status`): our database only, no acquirer call. */
export interface PayerStatus {
  readonly status: PaymentRow['status'];
  /** null once the payment is final. */
  readonly stage: PayerStage | null;
}

export interface PageState {
  readonly payment: PaymentRow;
  readonly shopName: string;
  readonly shopMode: 'sandbox' | 'live';
  /** pending but past expires_at (the worker has not run yet) is shown as expired. */
  readonly status: PaymentRow['status'];
  /** Methods the payer may use now (the bound one only, when bound). */
  readonly options: readonly MethodOption[];
  /** The shop's acquirers, read with the page. */
  readonly acquirers: ShopAcquirers;
  /** The payment's newest attempt, while it is pending. */
  readonly latestAttempt?: AttemptRow | undefined;
  readonly stage: PayerStage;
  /** A live QR charge waiting for the payer's bank app: the acquirer's QR payload and deep link. */
  readonly waitingQr?: { readonly method: PaymentMethod; readonly payload: string; readonly link: string } | undefined;
}

function shownStatus(payment: PaymentRow, now: Date): PaymentRow['status'] {
  return payment.status === 'pending' && payment.expires_at <= now ? 'expired' : payment.status;
}

/**
 * The payment and, while it is pending, its newest attempt, read in one snapshot.
 * Read apart, a charge applied between the two reads shows a pending payment whose
 * attempt has already succeeded: the payer would be offered to pay again, on a page
 * that no longer polls for the payment it is waiting on.
 */
async function readPaymentWithLatestAttempt(
  db: Db,
  orderCode: string,
): Promise<{ readonly payment: PaymentRow; readonly latestAttempt: AttemptRow | undefined } | undefined> {
  return db
    .transaction()
    .setIsolationLevel('repeatable read')
    .setAccessMode('read only')
    .execute(async (snapshot) => {
      const payment = await findPaymentByOrderCode(snapshot, orderCode);
      if (!payment) return undefined;
      const latestAttempt =
        payment.status === 'pending' ? await findLatestAttemptOfPayment(snapshot, payment.id) : undefined;
      return { payment, latestAttempt };
    });
}

export async function loadPageState(deps: PageDeps, orderCode: string): Promise<PageState | undefined> {
  if (!ORDER_CODE_PATTERN.test(orderCode)) return undefined;
  const read = await readPaymentWithLatestAttempt(deps.db, orderCode);
  if (!read) return undefined;
  const payment = read.payment;
  const shop = await findShopProfile(deps.db, payment.shop_id);
  if (!shop) return undefined;
  const settings = await shopMethodSettings(deps.db, payment.shop_id);
  const status = shownStatus(payment, deps.clock.now());
  // Only methods an acquirer can charge are offered: a live payment bound to a
  // method no configured connector has shows "unavailable", not an error.
  const acquirers = await acquirersForShop(deps, { id: payment.shop_id, mode: shop.mode });
  const options = methodOptions(payment, settings).filter((option) => acquirers.forMethod(option.method));
  const latestAttempt = status === 'pending' ? read.latestAttempt : undefined;
  const waitingQr =
    shop.mode === 'live' &&
    latestAttempt?.status === 'requires_action' &&
    latestAttempt.payer_action_kind === 'qr' &&
    latestAttempt.payer_action_qr != null
      ? {
          method: latestAttempt.method,
          payload: latestAttempt.payer_action_qr,
          link: latestAttempt.payer_action_deep_link ?? latestAttempt.payer_action_qr,
        }
      : undefined;
  return {
    payment,
    shopName: shop.name,
    shopMode: shop.mode,
    status,
    options,
    acquirers,
    latestAttempt,
    stage: payerStageOf(latestAttempt),
    waitingQr,
  };
}

/** The poll's answer: two indexed reads in one snapshot, never the acquirer (a page may poll every few seconds). */
export async function loadPayerStatus(
  deps: Pick<PageDeps, 'db' | 'clock'>,
  orderCode: string,
): Promise<PayerStatus | undefined> {
  if (!ORDER_CODE_PATTERN.test(orderCode)) return undefined;
  const read = await readPaymentWithLatestAttempt(deps.db, orderCode);
  if (!read) return undefined;
  const status = shownStatus(read.payment, deps.clock.now());
  if (status !== 'pending') return { status, stage: null };
  return { status, stage: payerStageOf(read.latestAttempt) };
}

function methodOptions(payment: PaymentRow, settings: readonly MethodSettings[]): MethodOption[] {
  if (payment.method) return [{ method: payment.method, totalKopecks: payment.amount_total_kopecks }];
  return settings
    .filter((entry) => coversAmount(entry, payment.amount_kopecks))
    .map((entry) => ({ method: entry.method, totalKopecks: totalWithMethod(entry, payment.amount_kopecks) }));
}

export type PayResult =
  | { readonly kind: 'done' } // paid now or already final: show the status page
  | { readonly kind: 'declined'; readonly declineCode: string }
  | { readonly kind: 'confirm'; readonly chargeKey: string }
  /** The payer goes on to the acquirer's page (and comes back to `/pay/{order_code}/return`). */
  | { readonly kind: 'redirect'; readonly url: string }
  | { readonly kind: 'unavailable' };

export interface PayInput {
  readonly method: PaymentMethod;
  /** The page attempt nonce; a double submit of one form carries the same one. */
  readonly attempt: string;
  readonly card?: CardDetails | undefined;
}

/** Runs one payer attempt: record it, charge through the connector, then apply the outcome. */
export async function payFromPage(deps: PageDeps, state: PageState, input: PayInput): Promise<PayResult> {
  if (state.status !== 'pending') return { kind: 'done' };
  const option = state.options.find((candidate) => candidate.method === input.method);
  const connector = state.acquirers.forMethod(input.method);
  if (!option || !connector) return { kind: 'unavailable' };
  const attempt = await startAttempt(deps, {
    payment: state.payment,
    connector,
    chargeKey: `${state.payment.id}:${input.attempt}`,
    method: input.method,
    amountKopecks: option.totalKopecks,
  });
  // Paid, failed or expired since the page was loaded: nothing is charged.
  if (!attempt) return { kind: 'done' };
  // The same form again (back, submit): the payer goes where the first submit sent them.
  const waiting = attempt.status === 'requires_action' ? payerActionOf(attempt) : undefined;
  if (waiting) return waiting.kind === 'redirect' ? { kind: 'redirect', url: waiting.url } : { kind: 'done' };
  const outcome = await chargeAttempt(connector, attempt, {
    returnUrl: `${deps.config.publicUrl}/pay/${state.payment.order_code}/return`,
    description: `${state.shopName}: ${state.payment.order_id ?? state.payment.id}`.slice(0, 128),
    card: input.card,
  });
  if (outcome.status === 'succeeded') deps.crashPoint?.('after_acquirer_success');
  const applied = await applyAttemptOutcome(deps, attempt, outcome);
  // Two submits at once each charged: the action the attempt kept is the one to follow.
  const kept = applied.status === 'requires_action' ? payerActionOf(applied) : undefined;
  if (kept?.kind === 'redirect') return { kind: 'redirect', url: kept.url };
  return resultOf(outcome);
}

/** The payer answered the confirmation step of a charge. */
export async function confirmFromPage(
  deps: PageDeps,
  state: PageState,
  chargeKey: string,
  approve: boolean,
): Promise<PayResult> {
  if (state.status !== 'pending' || !chargeKey.startsWith(`${state.payment.id}:`)) {
    return { kind: state.status === 'pending' ? 'unavailable' : 'done' };
  }
  const attempt = await armConfirmation(deps, state.payment.id, chargeKey);
  // The charge is confirmed with the acquirer it was made through.
  const connector = attempt ? await connectorNamed(deps, attempt.connector) : undefined;
  if (!attempt || !connector) return { kind: 'unavailable' };
  const outcome = await connector.confirm(chargeKey, approve);
  if (outcome.status === 'succeeded') deps.crashPoint?.('after_acquirer_success');
  await applyAttemptOutcome(deps, attempt, outcome);
  return resultOf(outcome);
}

function resultOf(outcome: ChargeOutcome): PayResult {
  if (outcome.status === 'requires_confirmation') return { kind: 'confirm', chargeKey: outcome.chargeKey };
  if (outcome.status === 'requires_action' && outcome.action.kind === 'redirect')
    return { kind: 'redirect', url: outcome.action.url };
  if (outcome.status === 'declined' && !outcome.final) return { kind: 'declined', declineCode: outcome.declineCode };
  return { kind: 'done' };
}

/** A payer coming back from the acquirer asks it at most this often per attempt. */
const RETURN_LOOKUP_INTERVAL_MS = 10_000;

/**
 * The payer is back from the acquirer (`/pay/{order_code}/return`). Nothing the
 * acquirer put in the URL is read: if the payment's latest attempt is still open
 * at the acquirer, its connector is asked once (at most every 10 s per attempt)
 * and the answer applied like any other; the page then shows our state.
 */
export async function refreshOnReturn(deps: PageDeps, state: PageState): Promise<void> {
  if (state.status !== 'pending') return;
  const open = state.latestAttempt;
  if (!open || (open.status !== 'requires_action' && open.status !== 'pending') || open.connector === 'sandbox') return;
  if (deps.clock.now().getTime() - open.updated_at.getTime() < RETURN_LOOKUP_INTERVAL_MS) return;
  const connector = await connectorNamed(deps, open.connector);
  const outcome = await connector?.lookup(chargeReferenceOf(open));
  // Nothing new, or the acquirer never had it: the attempt waits for its notification or the worker.
  if (!outcome) return;
  await applyAttemptOutcome(deps, open, outcome);
}

export function qrPayloadFor(deps: PageDeps, state: PageState, method: 'sbp' | 'sberpay'): string | undefined {
  const option = state.options.find((candidate) => candidate.method === method);
  const connector = state.acquirers.forMethod(method);
  if (!option || !connector) return undefined;
  return connector.qrPayload?.({ paymentId: state.payment.id, method, amountKopecks: option.totalKopecks });
}

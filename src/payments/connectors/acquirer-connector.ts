// The acquirer connector interface: how the payment page talks to whatever
// bank or processor moves the money. The built-in `sandbox` connector
// (connectors/sandbox/) is a test acquirer; production connectors implement
// the same interface in their own folder (see docs/connectors.md).
//
// Contract:
// - `charge` is idempotent by `chargeKey`: the same key always names the same
//   charge and returns its current outcome, so a double-submitted form charges once.
// - An acquirer captures an order (payment) at most once, whatever the key.
// - Calls are network I/O: the gateway never makes them inside a database transaction,
//   and it records a payment attempt before every charge (attempt-service.ts).
// - `lookup` answers for any key ever charged: the reconciliation worker asks it
//   about attempts whose outcome the gateway never learned (a crash, a timeout).
// - Card data: live connectors never receive a card number; the payer enters it
//   on the acquirer's own page (`requires_action` with a redirect), which keeps
//   Paygate out of PCI DSS card-data scope (SAQ A, docs/security.md).
// - A live charge usually ends later than the call: the payer acts at the
//   acquirer, and the final state arrives by a notification (confirmed by asking
//   the acquirer's API) or by `lookup`, whichever comes first.
import type { PaymentMethod } from '../payment-tables.ts';

export interface CardDetails {
  /** Digits only, 12..19. */
  readonly number: string;
  readonly expiryMonth: number;
  /** Four digits. */
  readonly expiryYear: number;
  readonly securityCode: string;
}

export interface ChargeRequest {
  /** The idempotency key of this charge attempt (payment id + page attempt). */
  readonly chargeKey: string;
  readonly paymentId: string;
  readonly method: PaymentMethod;
  /** What the payer pays (amount plus the method's payer fee), in kopecks. */
  readonly amountKopecks: bigint;
  readonly currency: 'RUB';
  /** Where the acquirer sends the payer back after its own page: `/pay/{order_code}/return`. */
  readonly returnUrl: string;
  /** Shown to the payer at the acquirer (the shop's name and order), at most 128 characters. */
  readonly description: string;
  /** The sandbox's card form only; live connectors never receive card data. */
  readonly card?: CardDetails | undefined;
}

/** Everything a connector may need to find a charge again (the attempt row holds it). */
export interface ChargeReference {
  readonly chargeKey: string;
  readonly paymentId: string;
  readonly method: PaymentMethod;
  readonly amountKopecks: bigint;
  /** The acquirer's own id of the charge, once an answer carried it. */
  readonly providerReference?: string | undefined;
  /**
   * When the gateway recorded the attempt, just before the charge call: an
   * acquirer that lists charges by creation time finds one whose id never came back.
   */
  readonly createdAt?: Date | undefined;
  /**
   * What the payer was last asked to do at the acquirer (its page, a QR), when the
   * attempt awaits them: a look-up that finds the payer still there answers with it.
   */
  readonly payerAction?: PayerAction | undefined;
}

/** What the payer must do at the acquirer before the charge can end. */
type PayerAction =
  /** Card (with 3-D Secure) and SberPay on the web: the acquirer's page, then back to `returnUrl`. */
  | { readonly kind: 'redirect'; readonly url: string }
  /** SBP and SberPay QR: `payload` is what the QR code carries; `deepLink` opens the bank app on a phone. */
  | { readonly kind: 'qr'; readonly payload: string; readonly deepLink?: string | undefined };

/** `providerReference` on any outcome: the acquirer's id of the charge, stored on the attempt. */
export type ChargeOutcome =
  | { readonly status: 'succeeded'; readonly chargeKey: string; readonly providerReference?: string | undefined }
  /** `final`: the acquirer refuses the order for good (the payment fails); otherwise the payer may retry. */
  | {
      readonly status: 'declined';
      readonly chargeKey: string;
      readonly declineCode: string;
      readonly final: boolean;
      readonly providerReference?: string | undefined;
    }
  /** The sandbox's own confirmation step (3-D Secure style): the page shows it and calls `confirm`. */
  | {
      readonly status: 'requires_confirmation';
      readonly chargeKey: string;
      readonly providerReference?: string | undefined;
    }
  /** The payer must act at the acquirer; the outcome arrives later (notification or `lookup`). */
  | {
      readonly status: 'requires_action';
      readonly chargeKey: string;
      readonly action: PayerAction;
      readonly providerReference?: string | undefined;
    }
  /** The acquirer holds the charge and needs nothing more from the payer; the outcome arrives later. */
  | { readonly status: 'processing'; readonly chargeKey: string; readonly providerReference?: string | undefined };

export interface RefundRequest {
  /** The idempotency key of the refund: the same key never refunds twice. */
  readonly refundKey: string;
  /** The charge to refund. */
  readonly chargeKey: string;
  readonly paymentId: string;
  /** The acquirer's id of the charge (see `ChargeReference`). */
  readonly providerReference?: string | undefined;
  /** Up to what is left of the charge: refunds may be partial. */
  readonly amountKopecks: bigint;
}

export type RefundOutcome =
  | { readonly status: 'succeeded'; readonly refundKey: string; readonly providerRefundReference?: string | undefined }
  /** Accepted, not final yet: the result arrives by notification or `lookupRefund`. */
  | { readonly status: 'pending'; readonly refundKey: string; readonly providerRefundReference?: string | undefined }
  /** The acquirer refused (e.g. nothing captured under that key); the reason is for the operator. */
  | { readonly status: 'refused'; readonly refundKey: string; readonly reason: string };

/** An HTTP notification from the acquirer, as received; nothing in it is trusted. */
export interface AcquirerNotification {
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly rawBody: string;
  /** The sender's address after the `PAYGATE_TRUST_PROXY` rules. */
  readonly remoteAddress: string;
}

/**
 * What a notification proved, after the connector checked it (source address,
 * signature) and confirmed it by asking the acquirer's API. `reply` is what the
 * acquirer expects back (T-Bank requires the body `OK`).
 */
export type NotificationResult = {
  readonly reply: { readonly statusCode: number; readonly contentType: string; readonly body: string };
} & (
  | {
      readonly kind: 'charge';
      readonly reference: ChargeReference | { readonly providerReference: string };
      readonly outcome: ChargeOutcome;
    }
  | { readonly kind: 'refund'; readonly refundKey: string; readonly outcome: RefundOutcome }
  /**
   * The acquirer confirmed that refunds of this charge moved without naming which
   * (T-Bank's REFUNDED / PARTIAL_REFUNDED): the gateway looks up the charge's refunds
   * still pending now, as the refund worker would (payment-refund-service.ts).
   */
  | { readonly kind: 'charge_refunds'; readonly reference: { readonly providerReference: string } }
  /** Forged, unknown, or nothing final: changes nothing. `reason` is for the log. */
  | { readonly kind: 'ignored'; readonly reason: string }
);

/** One charge as the acquirer lists it. */
export interface ProviderCharge {
  readonly providerReference: string;
  readonly chargeKey?: string | undefined;
  readonly paymentId?: string | undefined;
  readonly status: 'succeeded' | 'declined' | 'pending';
  readonly amountKopecks: bigint;
}

export interface AcquirerConnector {
  /** A stable name, e.g. `sandbox`. */
  readonly name: string;
  /** The methods this acquirer can charge; a live shop offers only methods some configured connector has. */
  readonly methods: readonly PaymentMethod[];
  charge(request: ChargeRequest): Promise<ChargeOutcome>;
  /** Completes or cancels a charge that required confirmation (the sandbox's step); idempotent. */
  confirm(chargeKey: string, approve: boolean): Promise<ChargeOutcome>;
  /** The current outcome of a charge, or undefined when the acquirer never received it. */
  lookup(charge: ChargeReference): Promise<ChargeOutcome | undefined>;
  /** Returns a captured charge, in full or in part, to the payer; idempotent by `refundKey`. */
  refund(request: RefundRequest): Promise<RefundOutcome>;
  /** The current outcome of a refund, or undefined when the acquirer never received it. */
  lookupRefund(
    request: RefundRequest & { readonly providerRefundReference?: string | undefined },
  ): Promise<RefundOutcome | undefined>;
  /** Checks and confirms a notification; absent when the acquirer sends none. */
  handleNotification?(notification: AcquirerNotification): Promise<NotificationResult>;
  /**
   * The acquirer's charges created in `range` (its own list), for the daily
   * comparison with our attempts; absent when the acquirer offers no list.
   */
  listCharges?(range: { readonly from: Date; readonly to: Date }): AsyncIterable<ProviderCharge>;
  /** The sandbox's QR before any charge (its simulated bank app pays it); live connectors answer `requires_action`. */
  qrPayload?(request: {
    readonly paymentId: string;
    readonly method: 'sbp' | 'sberpay';
    readonly amountKopecks: bigint;
  }): string;
}

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
// - Card data: live connectors take a token from the acquirer's hosted fields,
//   never a card number (docs/connectors.md, "Card data").
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
  /** Card methods only. */
  readonly card?: CardDetails | undefined;
}

export type ChargeOutcome =
  | { readonly status: 'succeeded'; readonly chargeKey: string }
  /** `final`: the acquirer refuses the order for good (the payment fails); otherwise the payer may retry. */
  | { readonly status: 'declined'; readonly chargeKey: string; readonly declineCode: string; readonly final: boolean }
  /** The payer must confirm (3-D Secure style); the page shows the step and calls `confirm`. */
  | { readonly status: 'requires_confirmation'; readonly chargeKey: string };

interface RefundRequest {
  /** The idempotency key of the refund: the same key never refunds twice. */
  readonly refundKey: string;
  /** The charge to refund. */
  readonly chargeKey: string;
  readonly amountKopecks: bigint;
}

type RefundOutcome =
  | { readonly status: 'succeeded'; readonly refundKey: string }
  /** The acquirer refused (e.g. nothing captured under that key); the reason is for the operator. */
  | { readonly status: 'refused'; readonly refundKey: string; readonly reason: string };

export interface AcquirerConnector {
  /** A stable name, e.g. `sandbox`. */
  readonly name: string;
  /** The methods this acquirer can charge; a live shop offers only methods some configured connector has. */
  readonly methods: readonly PaymentMethod[];
  charge(request: ChargeRequest): Promise<ChargeOutcome>;
  /** Completes or cancels a charge that required confirmation; idempotent. */
  confirm(chargeKey: string, approve: boolean): Promise<ChargeOutcome>;
  /** The current outcome of a charge, or undefined when the key is unknown. */
  lookup(chargeKey: string): Promise<ChargeOutcome | undefined>;
  /** Returns a captured charge to the payer in full; idempotent by `refundKey`. */
  refund(request: RefundRequest): Promise<RefundOutcome>;
  /** The text a QR code carries for an SBP or SberPay payment (the payer scans it in the bank app). */
  qrPayload(request: {
    readonly paymentId: string;
    readonly method: 'sbp' | 'sberpay';
    readonly amountKopecks: bigint;
  }): string;
}

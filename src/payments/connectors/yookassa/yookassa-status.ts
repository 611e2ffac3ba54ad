// YooKassa's payment and refund statuses, and `cancellation_details.reason`,
// as our outcomes and decline codes. The table is docs/connectors.md
// "## YooKassa"; statuses from "Платеж: статусы" and reasons from
// "Неуспешные платежи: причины отмены", https://yookassa.ru/developers/ .
// Payments are created with `capture: true`, so `succeeded` is the capture and
// `waiting_for_capture` (a shop forced to two stages) waits.

type PaymentClass =
  | { readonly kind: 'waiting_for_payer' }
  | { readonly kind: 'processing' }
  | { readonly kind: 'succeeded' }
  | { readonly kind: 'declined' };

const PAYMENT_CLASSES: Readonly<Record<string, PaymentClass>> = {
  pending: { kind: 'waiting_for_payer' },
  waiting_for_capture: { kind: 'processing' },
  succeeded: { kind: 'succeeded' },
  canceled: { kind: 'declined' },
};

/** An unknown (newer) status waits rather than deciding anything. */
export function classifyPayment(status: unknown): PaymentClass {
  return (typeof status === 'string' ? PAYMENT_CLASSES[status] : undefined) ?? { kind: 'processing' };
}

// cancellation_details.reason → our decline code, and whether the payment may
// not be retried at all (final). YooKassa: a canceled payment cannot be
// resumed, but the payer may pay again by another card or method — so only
// reasons that say the order itself is refused are final.
const DECLINES: Readonly<Record<string, { readonly declineCode: string; readonly final: boolean }>> = {
  '3d_secure_failed': { declineCode: 'authentication_failed', final: false },
  call_issuer: { declineCode: 'card_declined', final: false },
  canceled_by_merchant: { declineCode: 'canceled', final: false },
  card_expired: { declineCode: 'expired_card', final: false },
  country_forbidden: { declineCode: 'country_forbidden', final: false },
  expired_on_capture: { declineCode: 'expired', final: false },
  expired_on_confirmation: { declineCode: 'expired', final: false },
  fraud_suspected: { declineCode: 'suspected_fraud', final: false },
  general_decline: { declineCode: 'card_declined', final: false },
  identification_required: { declineCode: 'limit_exceeded', final: false },
  insufficient_funds: { declineCode: 'insufficient_funds', final: false },
  internal_timeout: { declineCode: 'processing_error', final: false },
  invalid_card_number: { declineCode: 'invalid_card', final: false },
  invalid_csc: { declineCode: 'invalid_card', final: false },
  issuer_unavailable: { declineCode: 'processing_error', final: false },
  payment_method_limit_exceeded: { declineCode: 'limit_exceeded', final: false },
  payment_method_restricted: { declineCode: 'card_declined', final: false },
  permission_revoked: { declineCode: 'card_declined', final: false },
  unsupported_mobile_operator: { declineCode: 'card_declined', final: false },
};

/** Our decline of a canceled payment: an unknown reason is a plain `card_declined`. */
export function declineFor(reason: unknown): { readonly declineCode: string; readonly final: boolean } {
  return (typeof reason === 'string' ? DECLINES[reason] : undefined) ?? { declineCode: 'card_declined', final: false };
}

/** A refund's status: `pending`, `succeeded`, `canceled` ("Возврат: статусы"). */
export type RefundClass = 'pending' | 'succeeded' | 'canceled';

export function classifyRefund(status: unknown): RefundClass {
  return status === 'succeeded' || status === 'canceled' ? status : 'pending';
}

// T-Bank's payment statuses (GetState, CheckOrder, notifications) as our
// charge outcomes. The table is docs/connectors.md "## T-Bank"; the statuses
// are those of "Статусная модель платежа", https://www.tbank.ru/kassa/dev/payments/ .
// Charges are one-stage (Init sends PayType O), so CONFIRMED is the capture;
// AUTHORIZED only appears on a terminal forced to two stages and waits.

type StatusClass =
  | { readonly kind: 'waiting_for_payer' }
  | { readonly kind: 'processing' }
  | { readonly kind: 'succeeded' }
  | { readonly kind: 'declined'; readonly declineCode: string };

const STATUS_CLASSES: Readonly<Record<string, StatusClass>> = {
  NEW: { kind: 'waiting_for_payer' },
  FORM_SHOWED: { kind: 'waiting_for_payer' },
  AUTHORIZING: { kind: 'processing' },
  '3DS_CHECKING': { kind: 'processing' },
  '3DS_CHECKED': { kind: 'processing' },
  PAY_CHECKING: { kind: 'processing' },
  AUTHORIZED: { kind: 'processing' },
  CONFIRMING: { kind: 'processing' },
  CONFIRMED: { kind: 'succeeded' },
  // Refunds of a captured charge do not undo the capture: they are refunds.
  REFUNDING: { kind: 'succeeded' },
  PARTIAL_REFUNDED: { kind: 'succeeded' },
  REFUNDED: { kind: 'succeeded' },
  REJECTED: { kind: 'declined', declineCode: 'card_declined' },
  AUTH_FAIL: { kind: 'declined', declineCode: 'authentication_failed' },
  CANCELED: { kind: 'declined', declineCode: 'canceled' },
  DEADLINE_EXPIRED: { kind: 'declined', declineCode: 'expired' },
  REVERSING: { kind: 'declined', declineCode: 'reversed' },
  PARTIAL_REVERSED: { kind: 'declined', declineCode: 'reversed' },
  REVERSED: { kind: 'declined', declineCode: 'reversed' },
};

/** An unknown (newer) status waits rather than deciding anything. */
export function classifyStatus(status: string): StatusClass {
  return STATUS_CLASSES[status] ?? { kind: 'processing' };
}

// ErrorCode of a rejected payment ("Коды ошибок") to our decline codes.
const DECLINE_CODES: ReadonlyArray<readonly [readonly string[], string]> = [
  [['103', '1051'], 'insufficient_funds'],
  [['1004', '1007', '1043', '1059'], 'suspected_fraud'],
  [['1033', '1054'], 'expired_card'],
  [['1014', '1015', '1082'], 'invalid_card'],
  [['101', '106', '108'], 'authentication_failed'],
  [['1013', '1019', '1065'], 'limit_exceeded'],
];

export function declineCodeFor(status: string, errorCode: string | undefined): string {
  const fromError = DECLINE_CODES.find(([codes]) => errorCode !== undefined && codes.includes(errorCode))?.[1];
  const classified = classifyStatus(status);
  return fromError ?? (classified.kind === 'declined' ? classified.declineCode : 'card_declined');
}

/** Statuses that say a refund (Cancel of a CONFIRMED payment) is done or under way. */
export const REFUND_DONE_STATUSES: ReadonlySet<string> = new Set([
  'PARTIAL_REFUNDED',
  'REFUNDED',
  'PARTIAL_REVERSED',
  'REVERSED',
  'CANCELED',
]);
/** Of those, the statuses of a payment returned in full: no refund of it can still be owed. */
export const REFUND_WHOLE_STATUSES: ReadonlySet<string> = new Set(['REFUNDED', 'REVERSED', 'CANCELED']);
/** What a notification after Cancel of a CONFIRMED payment says ("Уведомления об операциях"). */
export const REFUND_NOTIFIED_STATUSES: ReadonlySet<string> = new Set(['PARTIAL_REFUNDED', 'REFUNDED']);
export const REFUND_PENDING_STATUSES: ReadonlySet<string> = new Set(['REFUNDING', 'REVERSING']);

// The T-Bank connector: one shop's terminal (TerminalKey + Password) behind
// the acquirer connector interface. Card pays on T-Bank's hosted form
// (PaymentURL), SBP through GetQr's NSPK link, SberPay through T-Bank's
// SberPay link; outcomes come from GetState, by notification or by lookup.
//
// OrderId is our payment id (at most 36 characters, as T-Bank allows): every
// session of one payment sits under one order, so CheckOrder finds them all.
// The charge key travels in DATA (`PaygateChargeKey`). T-Bank documents no
// idempotency for Init, so a repeated Init opens a second session of the same
// order; a session that is never paid costs nothing, and this connector keeps
// the sessions it opened by charge key so a double-submitted form gets the same one.
import type { Logger } from 'pino';
import type {
  AcquirerConnector,
  AcquirerNotification,
  ChargeOutcome,
  ChargeReference,
  ChargeRequest,
  NotificationResult,
  RefundOutcome,
  RefundRequest,
} from '../acquirer-connector.ts';
import type { PaymentMethod } from '../../payment-tables.ts';
import { notificationSources } from '../notification-sources.ts';
import { TBankApiError, type TBankClient, type TBankResponse } from './tbank-client.ts';
import {
  classifyStatus,
  declineCodeFor,
  REFUND_DONE_STATUSES,
  REFUND_NOTIFIED_STATUSES,
  REFUND_PENDING_STATUSES,
  REFUND_WHOLE_STATUSES,
} from './tbank-status.ts';
import { hasValidTbankToken } from './tbank-token.ts';

/** T-Bank's published notification networks ("Уведомления об операциях"), test environment included. */
export const TBANK_NOTIFICATION_NETWORKS: readonly string[] = [
  '91.194.226.0/23',
  '91.218.132.0/24',
  '91.218.133.0/24',
  '91.218.134.0/24',
  '91.218.135.0/24',
  '212.49.24.0/24',
  '212.233.80.0/24',
  '212.233.81.0/24',
  '212.233.82.0/24',
  '212.233.83.0/24',
  '91.194.226.181/32',
];

const DESCRIPTION_MAX_CHARS = 140;
const DATA_VALUE_MAX_CHARS = 100;
const NOTIFICATION_MAX_CHARS = 64 * 1024;
const OPEN_SESSIONS_MAX = 10_000;
// "Ответ на HTTP(s)-уведомление": HTTP 200 with the body OK, nothing else.
const REPLY_OK = { statusCode: 200, contentType: 'text/plain; charset=utf-8', body: 'OK' } as const;
const REPLY_REJECTED = { statusCode: 400, contentType: 'text/plain; charset=utf-8', body: 'REJECTED' } as const;
// Anything but OK makes T-Bank send the notification again later.
const REPLY_RETRY_LATER = { statusCode: 503, contentType: 'text/plain; charset=utf-8', body: 'RETRY' } as const;

type PayerActionOf<T> = T extends { status: 'requires_action'; action: infer A } ? A : never;
type PayerAction = PayerActionOf<ChargeOutcome>;

interface OpenSession {
  readonly paymentId: string;
  readonly action: PayerAction;
}

export interface TBankConnectorDeps {
  readonly name: string;
  readonly methods: readonly PaymentMethod[];
  readonly client: TBankClient;
  readonly password: string;
  readonly notificationUrl: string;
  readonly notificationSources: readonly string[];
  readonly logger: Pick<Logger, 'info' | 'warn'>;
}

function text(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  return undefined;
}

export function createTBankConnector(deps: TBankConnectorDeps): AcquirerConnector {
  const { client } = deps;
  const sources = notificationSources(deps.notificationSources);
  const openSessions = new Map<string, OpenSession>();

  function remember(chargeKey: string, session: OpenSession): void {
    if (openSessions.size >= OPEN_SESSIONS_MAX) {
      const oldest = openSessions.keys().next().value;
      if (oldest !== undefined) openSessions.delete(oldest);
    }
    openSessions.set(chargeKey, session);
  }

  function outcomeOfStatus(
    chargeKey: string,
    paymentId: string,
    status: string,
    errorCode: string | undefined,
    storedAction?: PayerAction,
  ): ChargeOutcome {
    const classified = classifyStatus(status);
    const providerReference = paymentId;
    switch (classified.kind) {
      case 'succeeded':
        return { status: 'succeeded', chargeKey, providerReference };
      case 'declined':
        // T-Bank: after REJECTED "провести платеж заново"; the payer may try again.
        return {
          status: 'declined',
          chargeKey,
          declineCode: declineCodeFor(status, errorCode),
          final: false,
          providerReference,
        };
      case 'waiting_for_payer': {
        // This process's session, or (after a restart, or in another instance) the action the attempt stored.
        const open = openSessions.get(chargeKey);
        const action = open && open.paymentId === paymentId ? open.action : storedAction;
        if (action) return { status: 'requires_action', chargeKey, action, providerReference };
        return { status: 'processing', chargeKey, providerReference };
      }
      case 'processing':
        return { status: 'processing', chargeKey, providerReference };
    }
  }

  async function payerAction(method: PaymentMethod, paymentId: string, init: TBankResponse): Promise<PayerAction> {
    if (method === 'sbp') {
      const qr = await client.post('GetQr', { PaymentId: paymentId, DataType: 'PAYLOAD' });
      const payload = text(qr['Data']);
      if (!payload) throw new TBankApiError('GetQr', 'no_data', 'GetQr answered without Data', undefined);
      // The NSPK link is both what the QR carries and what opens the bank app on a phone.
      return { kind: 'qr', payload, deepLink: payload };
    }
    if (method === 'sberpay') {
      const link = await client.get(`SberPay/transactions/${encodeURIComponent(paymentId)}/link`);
      const params = link['Params'];
      const url =
        typeof params === 'object' && params !== null
          ? text((params as Record<string, unknown>)['RedirectUrl'])
          : undefined;
      if (!url)
        throw new TBankApiError('SberPay/link', 'no_url', 'the SberPay link answer has no RedirectUrl', undefined);
      return { kind: 'qr', payload: url, deepLink: url };
    }
    const paymentUrl = text(init['PaymentURL']);
    if (!paymentUrl) throw new TBankApiError('Init', 'no_url', 'Init answered without PaymentURL', undefined);
    return { kind: 'redirect', url: paymentUrl };
  }

  async function getState(paymentId: string): Promise<TBankResponse | undefined> {
    try {
      return await client.post('GetState', { PaymentId: paymentId });
    } catch (error) {
      if (!(error instanceof TBankApiError)) throw error;
      // The docs do not say whether a rejected payment's GetState is itself
      // Success false: an answer that names the payment's Status is a state.
      if (error.answer && typeof error.answer['Status'] === 'string' && text(error.answer['PaymentId']) === paymentId) {
        return error.answer;
      }
      // Any other refusal is "no such payment here" (e.g. 255 Платеж не найден).
      return undefined;
    }
  }

  async function charge(request: ChargeRequest): Promise<ChargeOutcome> {
    const open = openSessions.get(request.chargeKey);
    if (open) {
      const known = await lookup({ ...request, providerReference: open.paymentId });
      if (known) return known;
    }
    let init: TBankResponse;
    try {
      init = await client.post('Init', {
        Amount: Number(request.amountKopecks),
        OrderId: request.paymentId,
        Description: request.description.slice(0, DESCRIPTION_MAX_CHARS),
        PayType: 'O',
        NotificationURL: deps.notificationUrl,
        SuccessURL: request.returnUrl,
        FailURL: request.returnUrl,
        DATA: {
          PaygateChargeKey: request.chargeKey.slice(0, DATA_VALUE_MAX_CHARS),
          ...(request.method === 'sbp' ? { QR: 'true' } : {}),
        },
      });
    } catch (error) {
      if (!(error instanceof TBankApiError)) throw error;
      deps.logger.warn({ errorCode: error.errorCode, connector: deps.name }, 'T-Bank refused Init');
      return {
        status: 'declined',
        chargeKey: request.chargeKey,
        declineCode: `tbank_${error.errorCode}`,
        final: false,
      };
    }
    const paymentId = text(init['PaymentId']);
    if (!paymentId) throw new TBankApiError('Init', 'no_payment_id', 'Init answered without PaymentId', undefined);
    const action = await payerAction(request.method, paymentId, init);
    remember(request.chargeKey, { paymentId, action });
    return { status: 'requires_action', chargeKey: request.chargeKey, action, providerReference: paymentId };
  }

  async function lookup(reference: ChargeReference): Promise<ChargeOutcome | undefined> {
    const knownPaymentId = reference.providerReference ?? openSessions.get(reference.chargeKey)?.paymentId;
    if (knownPaymentId) {
      const state = await getState(knownPaymentId);
      if (!state) return undefined;
      const storedAction = reference.providerReference === knownPaymentId ? reference.payerAction : undefined;
      return outcomeOfStatus(
        reference.chargeKey,
        knownPaymentId,
        String(state['Status']),
        text(state['ErrorCode']),
        storedAction,
      );
    }
    // No PaymentId recorded (a crash right after Init): the order's sessions of
    // this amount; only an unambiguous one is taken for this charge.
    let order: TBankResponse;
    try {
      order = await client.post('CheckOrder', { OrderId: reference.paymentId });
    } catch (error) {
      if (error instanceof TBankApiError) return undefined;
      throw error;
    }
    const payments = Array.isArray(order['Payments']) ? (order['Payments'] as Record<string, unknown>[]) : [];
    const matching = payments.filter((payment) => text(payment['Amount']) === reference.amountKopecks.toString());
    const only = matching.length === 1 ? matching[0] : undefined;
    const paymentId = only ? text(only['PaymentId']) : undefined;
    if (!only || !paymentId) return undefined;
    return outcomeOfStatus(reference.chargeKey, paymentId, String(only['Status']), text(only['ErrorCode']));
  }

  async function refund(request: RefundRequest): Promise<RefundOutcome> {
    if (!request.providerReference) {
      return { status: 'refused', refundKey: request.refundKey, reason: 'no T-Bank PaymentId recorded for the charge' };
    }
    try {
      // ExternalRequestId makes a repeated Cancel answer the first one's state
      // instead of refunding again (the Cancel method's documentation).
      const answer = await client.post('Cancel', {
        PaymentId: request.providerReference,
        Amount: Number(request.amountKopecks),
        ExternalRequestId: request.refundKey,
      });
      const status = String(answer['Status']);
      const providerRefundReference = request.providerReference;
      if (REFUND_DONE_STATUSES.has(status))
        return { status: 'succeeded', refundKey: request.refundKey, providerRefundReference };
      return { status: 'pending', refundKey: request.refundKey, providerRefundReference };
    } catch (error) {
      if (!(error instanceof TBankApiError)) throw error;
      return { status: 'refused', refundKey: request.refundKey, reason: `${error.errorCode}: ${error.message}` };
    }
  }

  async function lookupRefund(request: RefundRequest): Promise<RefundOutcome | undefined> {
    if (!request.providerReference) return undefined;
    const state = await getState(request.providerReference);
    if (!state) return undefined;
    const status = String(state['Status']);
    const providerRefundReference = request.providerReference;
    if (REFUND_PENDING_STATUSES.has(status))
      return { status: 'pending', refundKey: request.refundKey, providerRefundReference };
    // GetState reports the payment, not each refund. Wholly returned, every refund of it is done;
    // partly returned may be an earlier refund only, so this one is not known: the caller's
    // Cancel under the same ExternalRequestId answers the first one's result or does it now.
    if (REFUND_WHOLE_STATUSES.has(status))
      return { status: 'succeeded', refundKey: request.refundKey, providerRefundReference };
    return undefined;
  }

  async function handleNotification(notification: AcquirerNotification): Promise<NotificationResult> {
    if (!sources.allows(notification.remoteAddress)) {
      return { reply: REPLY_REJECTED, kind: 'ignored', reason: `source ${notification.remoteAddress} is not T-Bank's` };
    }
    if (notification.rawBody.length > NOTIFICATION_MAX_CHARS) {
      return { reply: REPLY_REJECTED, kind: 'ignored', reason: 'notification too large' };
    }
    let body: unknown;
    try {
      body = JSON.parse(notification.rawBody);
    } catch {
      return { reply: REPLY_REJECTED, kind: 'ignored', reason: 'notification is not JSON' };
    }
    if (typeof body !== 'object' || body === null || Array.isArray(body)) {
      return { reply: REPLY_REJECTED, kind: 'ignored', reason: 'notification is not an object' };
    }
    const fields = body as Record<string, unknown>;
    if (fields['TerminalKey'] !== client.terminalKey || !hasValidTbankToken(fields, deps.password)) {
      return { reply: REPLY_REJECTED, kind: 'ignored', reason: 'wrong TerminalKey or Token' };
    }
    const paymentId = text(fields['PaymentId']);
    if (!paymentId) return { reply: REPLY_OK, kind: 'ignored', reason: 'no PaymentId (not a payment notification)' };
    const notifiedStatus = String(fields['Status']);
    const refundNotified = REFUND_NOTIFIED_STATUSES.has(notifiedStatus);
    if (REFUND_DONE_STATUSES.has(notifiedStatus) && notifiedStatus !== 'CANCELED' && !refundNotified) {
      // A reversal undoes an authorization; one-stage charges (PayType O) have none to undo.
      return { reply: REPLY_OK, kind: 'ignored', reason: `reversal status ${notifiedStatus}` };
    }
    // Nothing in the notification is believed: GetState decides.
    let state: TBankResponse | undefined;
    try {
      state = await getState(paymentId);
    } catch (error) {
      deps.logger.warn({ err: error, connector: deps.name }, 'T-Bank GetState failed while confirming a notification');
      return { reply: REPLY_RETRY_LATER, kind: 'ignored', reason: 'GetState unavailable' };
    }
    if (!state) return { reply: REPLY_OK, kind: 'ignored', reason: `T-Bank does not know PaymentId ${paymentId}` };
    const status = String(state['Status']);
    if (refundNotified) return refundsConfirmed(paymentId, notifiedStatus, status);
    const chargeKey = openChargeKeyOf(paymentId) ?? '';
    // GetState decides the outcome; a decline's reason may only be in the (signed) notification.
    const stateErrorCode = text(state['ErrorCode']);
    const errorCode = stateErrorCode && stateErrorCode !== '0' ? stateErrorCode : text(fields['ErrorCode']);
    const outcome = outcomeOfStatus(chargeKey, paymentId, status, errorCode);
    if (outcome.status !== 'succeeded' && outcome.status !== 'declined') {
      // Notified before GetState shows it: not OK, so T-Bank sends it again.
      return { reply: REPLY_RETRY_LATER, kind: 'ignored', reason: `GetState still says ${status}` };
    }
    return { reply: REPLY_OK, kind: 'charge', reference: { providerReference: paymentId }, outcome };
  }

  /**
   * A refund notification names no refund (Cancel's ExternalRequestId is not in it):
   * once GetState shows the payment returned in part or in full, the gateway looks
   * up the charge's pending refunds, each by the same rules as the refund worker.
   */
  function refundsConfirmed(paymentId: string, notifiedStatus: string, status: string): NotificationResult {
    if (REFUND_NOTIFIED_STATUSES.has(status)) {
      return { reply: REPLY_OK, kind: 'charge_refunds', reference: { providerReference: paymentId } };
    }
    if (status === 'CONFIRMED' || REFUND_PENDING_STATUSES.has(status)) {
      // Notified before GetState shows the refund: not OK, so T-Bank sends it again.
      return {
        reply: REPLY_RETRY_LATER,
        kind: 'ignored',
        reason: `${notifiedStatus} notified, GetState says ${status}`,
      };
    }
    return { reply: REPLY_OK, kind: 'ignored', reason: `${notifiedStatus} notified, GetState says ${status}` };
  }

  function openChargeKeyOf(paymentId: string): string | undefined {
    for (const [chargeKey, session] of openSessions) if (session.paymentId === paymentId) return chargeKey;
    return undefined;
  }

  return {
    name: deps.name,
    methods: deps.methods,
    charge,
    // T-Bank's own form does 3-D Secure; there is no confirmation step of ours.
    async confirm(chargeKey: string): Promise<ChargeOutcome> {
      const open = openSessions.get(chargeKey);
      if (open) {
        const state = await getState(open.paymentId);
        if (state) return outcomeOfStatus(chargeKey, open.paymentId, String(state['Status']), text(state['ErrorCode']));
      }
      return { status: 'processing', chargeKey };
    },
    lookup,
    refund,
    lookupRefund,
    handleNotification,
  };
}

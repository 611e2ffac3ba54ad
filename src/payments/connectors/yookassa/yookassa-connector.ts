// The YooKassa connector: one shop's YooKassa account (shopId + secret key)
// behind the acquirer connector interface. A charge is `POST /v3/payments`
// (one stage, `capture: true`) under the charge key as Idempotence-Key: card
// and SberPay pay on YooKassa's page (`redirect`), SBP by a QR (`qr`).
// Outcomes come from `GET /v3/payments/{id}`, by notification or by lookup.
//
// The payment's metadata carries our payment id and charge key, so a charge
// whose answer never came back is found in YooKassa's list of payments created
// around the attempt's time (`GET /v3/payments?created_at.gte=…`), without
// creating anything; refunds carry our refund key the same way.
import type { Logger } from 'pino';
import { formatMinor, parseMinor } from '../../../money/decimal.ts';
import type { PaymentMethod } from '../../payment-tables.ts';
import type {
  AcquirerConnector,
  AcquirerNotification,
  ChargeOutcome,
  ChargeReference,
  ChargeRequest,
  NotificationResult,
  ProviderCharge,
  RefundOutcome,
  RefundRequest,
} from '../acquirer-connector.ts';
import { notificationSources } from '../notification-sources.ts';
import { YooKassaApiError, type YooKassaClient, type YooKassaObject } from './yookassa-client.ts';
import { classifyPayment, classifyRefund, declineFor } from './yookassa-status.ts';

/** YooKassa's published notification addresses ("Входящие уведомления", IP authentication). */
export const YOOKASSA_NOTIFICATION_NETWORKS: readonly string[] = [
  '185.71.76.0/27',
  '185.71.77.0/27',
  '77.75.153.0/25',
  '77.75.156.11',
  '77.75.156.35',
  '77.75.154.128/25',
  '2a02:5180::/32',
];

/** "description: не более 128 символов". */
const DESCRIPTION_MAX_CHARS = 128;
/** "metadata: значение ключа — не более 512 символов". */
const METADATA_VALUE_MAX_CHARS = 512;
const NOTIFICATION_MAX_CHARS = 256 * 1024;
/** The list call's largest page ("limit: от 1 до 100"). */
const LIST_PAGE_LIMIT = 100;
/** A bound on any listing: pages of 100 read before giving up. */
const LIST_PAGES_MAX = 100;
/** Around an attempt's time: a charge call (with retries) ends well within a minute; clocks may differ. */
const LOOKUP_WINDOW_BEFORE_MS = 10 * 60_000;
const LOOKUP_WINDOW_AFTER_MS = 15 * 60_000;

const METADATA_PAYMENT_ID = 'paygate_payment_id';
const METADATA_CHARGE_KEY = 'paygate_charge_key';
const METADATA_REFUND_KEY = 'paygate_refund_key';

const REPLY_OK = { statusCode: 200, contentType: 'text/plain; charset=utf-8', body: '' } as const;
const REPLY_REJECTED = { statusCode: 403, contentType: 'text/plain; charset=utf-8', body: 'REJECTED' } as const;
const REPLY_BAD = { statusCode: 400, contentType: 'text/plain; charset=utf-8', body: 'BAD REQUEST' } as const;
// Anything but 200 makes YooKassa send the notification again (for 24 hours).
const REPLY_RETRY_LATER = { statusCode: 503, contentType: 'text/plain; charset=utf-8', body: 'RETRY' } as const;

/** YooKassa's `payment_method_data.type` of our methods. */
const PAYMENT_METHOD_TYPES: Readonly<Record<PaymentMethod, string>> = {
  card: 'bank_card',
  sbp: 'sbp',
  sberpay: 'sberbank',
};

export interface YooKassaConnectorDeps {
  readonly name: string;
  readonly methods: readonly PaymentMethod[];
  readonly client: YooKassaClient;
  readonly notificationSources: readonly string[];
  readonly logger: Pick<Logger, 'info' | 'warn'>;
}

function field(object: unknown, key: string): unknown {
  return typeof object === 'object' && object !== null && !Array.isArray(object)
    ? (object as Record<string, unknown>)[key]
    : undefined;
}

function text(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

/** `{value: "123.45", currency: "RUB"}` from kopecks, exactly. */
export function yookassaAmount(kopecks: bigint): { readonly value: string; readonly currency: 'RUB' } {
  return { value: formatMinor(kopecks, 'RUB'), currency: 'RUB' };
}

/** Kopecks of a YooKassa amount; undefined when it is not a RUB decimal string. */
export function kopecksOf(amount: unknown): bigint | undefined {
  const value = text(field(amount, 'value'));
  if (value === undefined || field(amount, 'currency') !== 'RUB') return undefined;
  const parsed = parseMinor(value, 'RUB', 'decimal-string');
  return parsed.ok ? parsed.minor : undefined;
}

/** The body of `POST /v3/payments` for a charge: built from the request alone. */
export function paymentBody(request: ChargeRequest): Record<string, unknown> {
  const confirmation = request.method === 'sbp' ? { type: 'qr' } : { type: 'redirect', return_url: request.returnUrl };
  return {
    amount: yookassaAmount(request.amountKopecks),
    capture: true,
    confirmation,
    payment_method_data: { type: PAYMENT_METHOD_TYPES[request.method] },
    description: request.description.slice(0, DESCRIPTION_MAX_CHARS),
    metadata: {
      [METADATA_PAYMENT_ID]: request.paymentId.slice(0, METADATA_VALUE_MAX_CHARS),
      [METADATA_CHARGE_KEY]: request.chargeKey.slice(0, METADATA_VALUE_MAX_CHARS),
    },
  };
}

type PayerAction = Extract<ChargeOutcome, { status: 'requires_action' }>['action'];

/** What the payer must do, from a pending payment's `confirmation`. */
function payerActionOf(payment: YooKassaObject): PayerAction | undefined {
  const confirmation = payment['confirmation'];
  const type = field(confirmation, 'type');
  if (type === 'redirect') {
    const url = text(field(confirmation, 'confirmation_url'));
    return url ? { kind: 'redirect', url } : undefined;
  }
  if (type === 'qr') {
    // The SBP link (qr.nspk.ru) is what the QR carries, and it opens the bank app on a phone.
    const payload = text(field(confirmation, 'confirmation_data'));
    return payload ? { kind: 'qr', payload, deepLink: payload } : undefined;
  }
  return undefined;
}

/** Our outcome of a YooKassa payment object. */
export function outcomeOfPayment(payment: YooKassaObject, fallbackChargeKey: string): ChargeOutcome {
  const chargeKey = text(field(payment['metadata'], METADATA_CHARGE_KEY)) ?? fallbackChargeKey;
  const providerReference = text(payment['id']);
  const classified = classifyPayment(payment['status']);
  switch (classified.kind) {
    case 'succeeded':
      return { status: 'succeeded', chargeKey, providerReference };
    case 'declined': {
      const { declineCode, final } = declineFor(field(payment['cancellation_details'], 'reason'));
      return { status: 'declined', chargeKey, declineCode, final, providerReference };
    }
    case 'waiting_for_payer': {
      const action = payerActionOf(payment);
      if (action) return { status: 'requires_action', chargeKey, action, providerReference };
      return { status: 'processing', chargeKey, providerReference };
    }
    case 'processing':
      return { status: 'processing', chargeKey, providerReference };
  }
}

const METHODS_OF_TYPES: Readonly<Record<string, PaymentMethod>> = Object.fromEntries(
  Object.entries(PAYMENT_METHOD_TYPES).map(([method, type]) => [type, method as PaymentMethod]),
);

/**
 * The charge a confirmed payment object names: by our charge key from its
 * metadata (we set it; the object came from the API), so an attempt whose
 * answer was lost is found too; by YooKassa's id when the metadata lacks it.
 */
function referenceOf(payment: YooKassaObject, id: string): ChargeReference | { readonly providerReference: string } {
  const chargeKey = text(field(payment['metadata'], METADATA_CHARGE_KEY));
  const paymentId = text(field(payment['metadata'], METADATA_PAYMENT_ID));
  const method = METHODS_OF_TYPES[String(field(payment['payment_method'], 'type'))];
  const amountKopecks = kopecksOf(payment['amount']);
  if (!chargeKey || !paymentId || !method || amountKopecks === undefined) return { providerReference: id };
  return { chargeKey, paymentId, method, amountKopecks, providerReference: id };
}

function refundOutcomeOf(refund: YooKassaObject, refundKey: string): RefundOutcome {
  const providerRefundReference = text(refund['id']);
  switch (classifyRefund(refund['status'])) {
    case 'succeeded':
      return { status: 'succeeded', refundKey, providerRefundReference };
    case 'canceled':
      return {
        status: 'refused',
        refundKey,
        reason: `YooKassa canceled the refund: ${text(field(refund['cancellation_details'], 'reason')) ?? 'no reason'}`,
      };
    case 'pending':
      return { status: 'pending', refundKey, providerRefundReference };
  }
}

function listItems(page: YooKassaObject): YooKassaObject[] {
  const items = page['items'];
  return Array.isArray(items)
    ? items.filter((item): item is YooKassaObject => typeof item === 'object' && item !== null)
    : [];
}

export function createYooKassaConnector(deps: YooKassaConnectorDeps): AcquirerConnector {
  const { client } = deps;
  const sources = notificationSources(deps.notificationSources);

  /** Every object of a list call, page by page (bounded). */
  async function* list(path: string, query: Readonly<Record<string, string>>): AsyncGenerator<YooKassaObject> {
    let cursor: string | undefined;
    for (let page = 0; page < LIST_PAGES_MAX; page += 1) {
      const answer = await client.get(path, {
        ...query,
        limit: String(LIST_PAGE_LIMIT),
        ...(cursor ? { cursor } : {}),
      });
      yield* listItems(answer);
      cursor = text(answer['next_cursor']);
      if (!cursor) return;
    }
    deps.logger.warn({ connector: deps.name, path }, `YooKassa list longer than ${LIST_PAGES_MAX} pages; rest unread`);
  }

  /** The object at `path`, or undefined when YooKassa has none (404). */
  async function find(path: string): Promise<YooKassaObject | undefined> {
    try {
      return await client.get(path);
    } catch (error) {
      if (error instanceof YooKassaApiError && error.statusCode === 404) return undefined;
      throw error;
    }
  }

  async function charge(request: ChargeRequest): Promise<ChargeOutcome> {
    let payment: YooKassaObject;
    try {
      payment = await client.post('/payments', paymentBody(request), request.chargeKey);
    } catch (error) {
      if (!(error instanceof YooKassaApiError)) throw error;
      if (error.parameter === 'Idempotence-Key') {
        // The key was used with another body (e.g. the shop renamed between two submits of one form):
        // the payment made under it is the charge.
        const known = await lookup({ ...request, createdAt: undefined });
        if (known) return known;
      }
      deps.logger.warn(
        { code: error.code, parameter: error.parameter, connector: deps.name },
        'YooKassa refused a payment',
      );
      return {
        status: 'declined',
        chargeKey: request.chargeKey,
        declineCode: `yookassa_${error.code}`,
        final: false,
      };
    }
    return outcomeOfPayment(payment, request.chargeKey);
  }

  /** A payment whose id never came back: listed around the attempt's time, matched by our charge key. */
  async function findByChargeKey(reference: ChargeReference): Promise<YooKassaObject | undefined> {
    const around = reference.createdAt ?? new Date();
    const query = {
      'created_at.gte': new Date(around.getTime() - LOOKUP_WINDOW_BEFORE_MS).toISOString(),
      'created_at.lt': new Date(around.getTime() + LOOKUP_WINDOW_AFTER_MS).toISOString(),
    };
    for await (const payment of list('/payments', query)) {
      if (text(field(payment['metadata'], METADATA_CHARGE_KEY)) === reference.chargeKey) return payment;
    }
    return undefined;
  }

  async function lookup(reference: ChargeReference): Promise<ChargeOutcome | undefined> {
    const payment = reference.providerReference
      ? await find(`/payments/${encodeURIComponent(reference.providerReference)}`)
      : await findByChargeKey(reference);
    return payment ? outcomeOfPayment(payment, reference.chargeKey) : undefined;
  }

  async function refund(request: RefundRequest): Promise<RefundOutcome> {
    if (!request.providerReference) {
      return {
        status: 'refused',
        refundKey: request.refundKey,
        reason: 'no YooKassa payment id recorded for the charge',
      };
    }
    try {
      const answer = await client.post(
        '/refunds',
        {
          payment_id: request.providerReference,
          amount: yookassaAmount(request.amountKopecks),
          metadata: { [METADATA_REFUND_KEY]: request.refundKey.slice(0, METADATA_VALUE_MAX_CHARS) },
        },
        request.refundKey,
      );
      return refundOutcomeOf(answer, request.refundKey);
    } catch (error) {
      if (!(error instanceof YooKassaApiError)) throw error;
      return { status: 'refused', refundKey: request.refundKey, reason: error.message };
    }
  }

  async function lookupRefund(
    request: RefundRequest & { readonly providerRefundReference?: string | undefined },
  ): Promise<RefundOutcome | undefined> {
    if (request.providerRefundReference) {
      const found = await find(`/refunds/${encodeURIComponent(request.providerRefundReference)}`);
      return found ? refundOutcomeOf(found, request.refundKey) : undefined;
    }
    if (!request.providerReference) return undefined;
    // The refund's id never came back: the payment's refunds, matched by our refund key.
    for await (const found of list('/refunds', { payment_id: request.providerReference })) {
      if (text(field(found['metadata'], METADATA_REFUND_KEY)) === request.refundKey) {
        return refundOutcomeOf(found, request.refundKey);
      }
    }
    return undefined;
  }

  async function confirmPayment(notified: YooKassaObject, id: string): Promise<NotificationResult> {
    const payment = await find(`/payments/${encodeURIComponent(id)}`);
    if (!payment) return { reply: REPLY_OK, kind: 'ignored', reason: `YooKassa does not know payment ${id}` };
    const outcome = outcomeOfPayment(payment, '');
    if (outcome.status === 'succeeded' || outcome.status === 'declined') {
      return { reply: REPLY_OK, kind: 'charge', reference: referenceOf(payment, id), outcome };
    }
    if (notified['event'] === 'payment.waiting_for_capture') {
      // One-stage payments never wait for capture; a two-stage shop's payment is captured (or not) at YooKassa.
      return { reply: REPLY_OK, kind: 'ignored', reason: 'payment.waiting_for_capture: nothing final' };
    }
    // Notified before the API shows it: not 200, so YooKassa sends it again.
    return { reply: REPLY_RETRY_LATER, kind: 'ignored', reason: `the API still says ${String(payment['status'])}` };
  }

  async function confirmRefund(id: string): Promise<NotificationResult> {
    const found = await find(`/refunds/${encodeURIComponent(id)}`);
    if (!found) return { reply: REPLY_OK, kind: 'ignored', reason: `YooKassa does not know refund ${id}` };
    const refundKey = text(field(found['metadata'], METADATA_REFUND_KEY));
    if (!refundKey) return { reply: REPLY_OK, kind: 'ignored', reason: `refund ${id} carries no refund key of ours` };
    const outcome = refundOutcomeOf(found, refundKey);
    if (outcome.status === 'pending') {
      return { reply: REPLY_RETRY_LATER, kind: 'ignored', reason: 'the API still says the refund is pending' };
    }
    return { reply: REPLY_OK, kind: 'refund', refundKey, outcome };
  }

  function parseNotification(rawBody: string): YooKassaObject | string {
    if (rawBody.length > NOTIFICATION_MAX_CHARS) return 'notification too large';
    let body: unknown;
    try {
      body = JSON.parse(rawBody);
    } catch {
      return 'notification is not JSON';
    }
    if (typeof body !== 'object' || body === null || Array.isArray(body)) return 'notification is not an object';
    return body as YooKassaObject;
  }

  async function handleNotification(notification: AcquirerNotification): Promise<NotificationResult> {
    if (!sources.allows(notification.remoteAddress)) {
      return {
        reply: REPLY_REJECTED,
        kind: 'ignored',
        reason: `source ${notification.remoteAddress} is not YooKassa's`,
      };
    }
    const body = parseNotification(notification.rawBody);
    if (typeof body === 'string') return { reply: REPLY_BAD, kind: 'ignored', reason: body };
    const event = text(body['event']);
    const id = text(field(body['object'], 'id'));
    if (body['type'] !== 'notification' || !event || !id) {
      return { reply: REPLY_BAD, kind: 'ignored', reason: 'not a YooKassa notification' };
    }
    // Nothing in the notification is believed: the API's object decides.
    try {
      if (event.startsWith('payment.')) return await confirmPayment(body, id);
      if (event.startsWith('refund.')) return await confirmRefund(id);
    } catch (error) {
      deps.logger.warn({ err: error, connector: deps.name }, 'YooKassa API failed while confirming a notification');
      return { reply: REPLY_RETRY_LATER, kind: 'ignored', reason: 'YooKassa API unavailable' };
    }
    return { reply: REPLY_OK, kind: 'ignored', reason: `event ${event} is not one we act on` };
  }

  async function* listCharges(range: { readonly from: Date; readonly to: Date }): AsyncIterable<ProviderCharge> {
    const query = { 'created_at.gte': range.from.toISOString(), 'created_at.lt': range.to.toISOString() };
    for await (const payment of list('/payments', query)) {
      const providerReference = text(payment['id']);
      const amountKopecks = kopecksOf(payment['amount']);
      if (!providerReference || amountKopecks === undefined) {
        // Not silently: a charge the comparison cannot read is one it cannot vouch for.
        deps.logger.warn(
          { connector: deps.name, provider_reference: providerReference },
          'YooKassa listed a payment without an id or a RUB decimal-string amount; left out of the comparison',
        );
        continue;
      }
      const classified = classifyPayment(payment['status']);
      yield {
        providerReference,
        chargeKey: text(field(payment['metadata'], METADATA_CHARGE_KEY)),
        paymentId: text(field(payment['metadata'], METADATA_PAYMENT_ID)),
        status: classified.kind === 'succeeded' ? 'succeeded' : classified.kind === 'declined' ? 'declined' : 'pending',
        amountKopecks,
      };
    }
  }

  return {
    name: deps.name,
    methods: deps.methods,
    charge,
    // YooKassa's own page does 3-D Secure; there is no confirmation step of ours.
    async confirm(chargeKey: string): Promise<ChargeOutcome> {
      return { status: 'processing', chargeKey };
    },
    lookup,
    refund,
    lookupRefund,
    handleNotification,
    listCharges,
  };
}

// The simulator's book and its API v3 methods (payments, refunds, their lists,
// /me), answering with the JSON shapes, errors and idempotence rules of
// https://yookassa.ru/developers/api : an error is
// `{"type":"error","id":…,"code":…,"description":…,"parameter":…}`; a POST
// needs an Idempotence-Key, the same key and body answer the first answer again,
// the same key with another body is 400 "Idempotence key duplicated".
import { createHash, randomUUID } from 'node:crypto';
import { formatMinor, parseMinor } from '../../../../money/decimal.ts';

export interface SimulatedShop {
  readonly shopId: string;
  readonly secretKey: string;
}

export type ApiObject = Record<string, unknown>;

export interface ApiAnswer {
  readonly statusCode: number;
  readonly body: ApiObject;
}

export interface SimulatedPayment {
  readonly id: string;
  readonly shopId: string;
  readonly amountKopecks: bigint;
  readonly methodType: 'bank_card' | 'sbp' | 'sberbank';
  readonly confirmationType: 'redirect' | 'qr';
  readonly returnUrl: string;
  readonly description: string | undefined;
  readonly metadata: Readonly<Record<string, string>>;
  readonly createdAt: Date;
  /** What the payment is; `visibleStatus` is what GET shows (a fault may hold it back). */
  status: 'pending' | 'succeeded' | 'canceled';
  visibleStatus: 'pending' | 'succeeded' | 'canceled';
  cancellationReason: string | undefined;
  /** The payer reached the 3-D Secure step. */
  challenged: boolean;
  capturedAt: Date | undefined;
  refundedKopecks: bigint;
}

export interface SimulatedRefund {
  readonly id: string;
  readonly paymentId: string;
  readonly amountKopecks: bigint;
  readonly metadata: Readonly<Record<string, string>> | undefined;
  readonly createdAt: Date;
  status: 'pending' | 'succeeded' | 'canceled';
}

const DESCRIPTION_MAX_CHARS = 128;
const METADATA_KEYS_MAX = 16;
const METADATA_KEY_MAX_CHARS = 32;
const METADATA_VALUE_MAX_CHARS = 512;
const LIST_LIMIT_DEFAULT = 10;
const LIST_LIMIT_MAX = 100;
const METHOD_TYPES = ['bank_card', 'sbp', 'sberbank'] as const;

export function apiError(statusCode: number, code: string, description: string, parameter?: string): ApiAnswer {
  return {
    statusCode,
    body: { type: 'error', id: randomUUID(), code, description, ...(parameter ? { parameter } : {}) },
  };
}

function invalid(description: string, parameter: string): ApiAnswer {
  return apiError(400, 'invalid_request', description, parameter);
}

function amountJson(kopecks: bigint): { value: string; currency: 'RUB' } {
  return { value: formatMinor(kopecks, 'RUB'), currency: 'RUB' };
}

function record(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}

/** A positive RUB amount `{value: "1.00", currency: "RUB"}`, or the error naming `parameter`. */
function parseAmount(value: unknown, parameter: string): bigint | ApiAnswer {
  const amount = record(value);
  if (!amount) return invalid('Amount is required', parameter);
  if (amount['currency'] !== 'RUB') return invalid('Currency is not supported', `${parameter}.currency`);
  const parsed = typeof amount['value'] === 'string' ? parseMinor(amount['value'], 'RUB', 'decimal-string') : undefined;
  if (!parsed?.ok || parsed.minor <= 0n) return invalid('Invalid amount value', `${parameter}.value`);
  return parsed.minor;
}

function parseMetadata(value: unknown): Record<string, string> | ApiAnswer | undefined {
  if (value === undefined) return undefined;
  const metadata = record(value);
  const entries = metadata ? Object.entries(metadata) : [];
  const valid =
    metadata !== undefined &&
    entries.length <= METADATA_KEYS_MAX &&
    entries.every(
      ([key, entry]) =>
        key.length <= METADATA_KEY_MAX_CHARS && typeof entry === 'string' && entry.length <= METADATA_VALUE_MAX_CHARS,
    );
  if (!valid) return invalid('Invalid metadata', 'metadata');
  return Object.fromEntries(entries) as Record<string, string>;
}

function isAnswer(value: unknown): value is ApiAnswer {
  return typeof value === 'object' && value !== null && 'statusCode' in value && 'body' in value;
}

interface StoredAnswer {
  readonly fingerprint: string;
  readonly answer: ApiAnswer;
}

export function createSimulatorBook(shops: readonly SimulatedShop[], now: () => Date = () => new Date()) {
  const payments = new Map<string, SimulatedPayment>();
  const refunds = new Map<string, SimulatedRefund>();
  const idempotence = new Map<string, StoredAnswer>();

  /** HTTP Basic shopId:secretKey; 401 invalid_credentials otherwise. */
  function authenticate(authorization: string | undefined): SimulatedShop | ApiAnswer {
    const match = /^Basic ([A-Za-z0-9+/=]+)$/.exec(authorization ?? '');
    const decoded = match?.[1] ? Buffer.from(match[1], 'base64').toString('utf8') : '';
    const separator = decoded.indexOf(':');
    const shop = shops.find(
      (candidate) =>
        separator > 0 &&
        candidate.shopId === decoded.slice(0, separator) &&
        candidate.secretKey === decoded.slice(separator + 1),
    );
    return (
      shop ??
      apiError(
        401,
        'invalid_credentials',
        'Authentication by given credentials failed. Check Shop ID and Secret key.',
        'Authorization',
      )
    );
  }

  /** Runs `create` once per shop, key and body; a repeat answers the first answer again. */
  function idempotent(
    shop: SimulatedShop,
    key: string | undefined,
    path: string,
    rawBody: string,
    create: () => ApiAnswer,
  ): ApiAnswer {
    if (!key || key.length > 64) {
      return invalid(key ? 'Idempotence key is too long' : 'Idempotence key is required', 'Idempotence-Key');
    }
    const slot = `${shop.shopId}\n${key}`;
    const fingerprint = createHash('sha256').update(`${path}\n${rawBody}`).digest('hex');
    const stored = idempotence.get(slot);
    if (stored) {
      return stored.fingerprint === fingerprint
        ? stored.answer
        : invalid('Idempotence key duplicated', 'Idempotence-Key');
    }
    const answer = create();
    // A 5xx would not be stored: the caller must be able to learn the result with the same key.
    if (answer.statusCode < 500) idempotence.set(slot, { fingerprint, answer });
    return answer;
  }

  /** The payment object as the API shows it, or (`status`) as a notification of its change carries it. */
  function paymentJson(
    payment: SimulatedPayment,
    baseUrl: string,
    status: SimulatedPayment['status'] = payment.visibleStatus,
  ): ApiObject {
    const paid = status === 'succeeded';
    const confirmation =
      payment.confirmationType === 'qr'
        ? { type: 'qr', confirmation_data: `${baseUrl}/sbp/${payment.id}?type=02&sum=${payment.amountKopecks}&cur=RUB` }
        : {
            type: 'redirect',
            confirmation_url: `${baseUrl}/checkout/payments/v2/contract?orderId=${payment.id}`,
            return_url: payment.returnUrl,
          };
    return {
      id: payment.id,
      status,
      paid,
      amount: amountJson(payment.amountKopecks),
      ...(paid ? { income_amount: amountJson(payment.amountKopecks - (payment.amountKopecks * 35n) / 1000n) } : {}),
      ...(status === 'pending' ? { confirmation } : {}),
      created_at: payment.createdAt.toISOString(),
      ...(paid && payment.capturedAt ? { captured_at: payment.capturedAt.toISOString() } : {}),
      ...(payment.description !== undefined ? { description: payment.description } : {}),
      metadata: payment.metadata,
      payment_method: {
        type: payment.methodType,
        id: payment.id,
        saved: false,
        ...(payment.methodType === 'bank_card' && paid
          ? {
              title: 'Bank card *4477',
              card: {
                first6: '555555',
                last4: '4477',
                expiry_year: '2030',
                expiry_month: '12',
                card_type: 'MasterCard',
                issuer_country: 'RU',
              },
            }
          : {}),
      },
      // A paid card payment carries its authorization, as in the official SDKs' examples.
      ...(payment.methodType === 'bank_card' && paid
        ? { authorization_details: { rrn: '603668680243', auth_code: '000000', three_d_secure: { applied: true } } }
        : {}),
      recipient: { account_id: payment.shopId, gateway_id: '100700' },
      refundable: paid,
      ...(paid ? { refunded_amount: amountJson(payment.refundedKopecks) } : {}),
      ...(status === 'canceled'
        ? {
            cancellation_details: { party: 'payment_network', reason: payment.cancellationReason ?? 'general_decline' },
          }
        : {}),
      test: true,
    };
  }

  function refundJson(refund: SimulatedRefund): ApiObject {
    return {
      id: refund.id,
      payment_id: refund.paymentId,
      status: refund.status,
      created_at: refund.createdAt.toISOString(),
      amount: amountJson(refund.amountKopecks),
      ...(refund.metadata ? { metadata: refund.metadata } : {}),
    };
  }

  function createPayment(shop: SimulatedShop, params: ApiObject, baseUrl: string): ApiAnswer {
    const amount = parseAmount(params['amount'], 'amount');
    if (isAnswer(amount)) return amount;
    const methodType = record(params['payment_method_data'])?.['type'] ?? 'bank_card';
    if (!METHOD_TYPES.includes(methodType as (typeof METHOD_TYPES)[number])) {
      return invalid('Payment method is not supported', 'payment_method_data.type');
    }
    const confirmation = record(params['confirmation']);
    const confirmationType = confirmation?.['type'];
    if (confirmationType !== 'redirect' && confirmationType !== 'qr') {
      return invalid('Confirmation type is not supported', 'confirmation.type');
    }
    const returnUrl = confirmation?.['return_url'];
    if (confirmationType === 'redirect' && (typeof returnUrl !== 'string' || !/^https?:\/\//.test(returnUrl))) {
      return invalid('Return URL is required for the redirect confirmation', 'confirmation.return_url');
    }
    if (confirmationType === 'qr' && methodType === 'bank_card') {
      return invalid('QR confirmation is not supported for bank_card', 'confirmation.type');
    }
    const description = params['description'];
    if (description !== undefined && (typeof description !== 'string' || description.length > DESCRIPTION_MAX_CHARS)) {
      return invalid('Description is too long', 'description');
    }
    const metadata = parseMetadata(params['metadata']);
    if (isAnswer(metadata)) return metadata;
    if (params['capture'] !== true) return invalid('Only capture: true payments are simulated', 'capture');
    const payment: SimulatedPayment = {
      id: randomUUID().replace(/^(.{8})-(.{4})/, '$1-000f'),
      shopId: shop.shopId,
      amountKopecks: amount,
      methodType: methodType as SimulatedPayment['methodType'],
      confirmationType,
      returnUrl: typeof returnUrl === 'string' ? returnUrl : '',
      description,
      metadata: metadata ?? {},
      createdAt: now(),
      status: 'pending',
      visibleStatus: 'pending',
      cancellationReason: undefined,
      challenged: false,
      capturedAt: undefined,
      refundedKopecks: 0n,
    };
    payments.set(payment.id, payment);
    return { statusCode: 200, body: paymentJson(payment, baseUrl) };
  }

  function getPayment(shop: SimulatedShop, id: string, baseUrl: string): ApiAnswer {
    const payment = payments.get(id);
    if (!payment || payment.shopId !== shop.shopId)
      return apiError(404, 'not_found', 'Payment not found', 'payment_id');
    return { statusCode: 200, body: paymentJson(payment, baseUrl) };
  }

  /** `created_at.gte|gt|lte|lt`, `limit`, `cursor`: newest first, as YooKassa lists. */
  function page<T extends { createdAt: Date }>(
    all: readonly T[],
    query: URLSearchParams,
    json: (item: T) => ApiObject,
  ): ApiAnswer {
    const limitText = query.get('limit');
    const limit = limitText === null ? LIST_LIMIT_DEFAULT : Number(limitText);
    if (!Number.isInteger(limit) || limit < 1 || limit > LIST_LIMIT_MAX) return invalid('Invalid limit', 'limit');
    const bounds: Array<[string, (at: number, bound: number) => boolean]> = [
      ['created_at.gte', (at, bound) => at >= bound],
      ['created_at.gt', (at, bound) => at > bound],
      ['created_at.lte', (at, bound) => at <= bound],
      ['created_at.lt', (at, bound) => at < bound],
    ];
    let items = [...all];
    for (const [name, keep] of bounds) {
      const text = query.get(name);
      if (text === null) continue;
      const bound = Date.parse(text);
      if (Number.isNaN(bound)) return invalid(`Invalid ${name}`, name);
      items = items.filter((item) => keep(item.createdAt.getTime(), bound));
    }
    items.sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime());
    const cursorText = query.get('cursor');
    const offset = cursorText === null ? 0 : Number(Buffer.from(cursorText, 'base64url').toString('utf8'));
    if (!Number.isInteger(offset) || offset < 0) return invalid('Invalid cursor', 'cursor');
    const slice = items.slice(offset, offset + limit);
    const next = offset + limit < items.length ? Buffer.from(String(offset + limit)).toString('base64url') : undefined;
    return { statusCode: 200, body: { type: 'list', items: slice.map(json), ...(next ? { next_cursor: next } : {}) } };
  }

  function listPayments(shop: SimulatedShop, query: URLSearchParams, baseUrl: string): ApiAnswer {
    const status = query.get('status');
    const mine = [...payments.values()].filter(
      (payment) => payment.shopId === shop.shopId && (status === null || payment.visibleStatus === status),
    );
    return page(mine, query, (payment) => paymentJson(payment, baseUrl));
  }

  function createRefund(shop: SimulatedShop, params: ApiObject): { answer: ApiAnswer; created?: SimulatedRefund } {
    const paymentId = params['payment_id'];
    const payment = typeof paymentId === 'string' ? payments.get(paymentId) : undefined;
    if (!payment || payment.shopId !== shop.shopId) {
      return { answer: invalid('Payment not found', 'payment_id') };
    }
    const amount = parseAmount(params['amount'], 'amount');
    if (isAnswer(amount)) return { answer: amount };
    const metadata = parseMetadata(params['metadata']);
    if (isAnswer(metadata)) return { answer: metadata };
    if (payment.status !== 'succeeded') {
      return { answer: invalid('Refund is possible only for a succeeded payment', 'payment_id') };
    }
    if (amount > payment.amountKopecks - payment.refundedKopecks) {
      return { answer: invalid('Refund amount exceeds the amount left to refund', 'amount.value') };
    }
    payment.refundedKopecks += amount;
    const refund: SimulatedRefund = {
      id: randomUUID().replace(/^(.{8})-(.{4})/, '$1-0015'),
      paymentId: payment.id,
      amountKopecks: amount,
      metadata,
      createdAt: now(),
      status: 'succeeded',
    };
    refunds.set(refund.id, refund);
    return { answer: { statusCode: 200, body: refundJson(refund) }, created: refund };
  }

  function refundOf(shop: SimulatedShop, id: string): SimulatedRefund | undefined {
    const refund = refunds.get(id);
    return refund && payments.get(refund.paymentId)?.shopId === shop.shopId ? refund : undefined;
  }

  function getRefund(shop: SimulatedShop, id: string): ApiAnswer {
    const refund = refundOf(shop, id);
    return refund
      ? { statusCode: 200, body: refundJson(refund) }
      : apiError(404, 'not_found', 'Refund not found', 'refund_id');
  }

  function listRefunds(shop: SimulatedShop, query: URLSearchParams): ApiAnswer {
    const paymentId = query.get('payment_id');
    const mine = [...refunds.values()].filter(
      (refund) =>
        payments.get(refund.paymentId)?.shopId === shop.shopId &&
        (paymentId === null || refund.paymentId === paymentId),
    );
    return page(mine, query, refundJson);
  }

  function me(shop: SimulatedShop): ApiAnswer {
    return {
      statusCode: 200,
      body: {
        account_id: shop.shopId,
        test: true,
        fiscalization_enabled: false,
        payment_methods: [...METHOD_TYPES],
        status: 'enabled',
      },
    };
  }

  return {
    payments: payments as ReadonlyMap<string, SimulatedPayment>,
    refunds: refunds as ReadonlyMap<string, SimulatedRefund>,
    authenticate,
    idempotent,
    paymentJson,
    refundJson,
    createPayment,
    getPayment,
    listPayments,
    createRefund,
    getRefund,
    listRefunds,
    me,
  };
}

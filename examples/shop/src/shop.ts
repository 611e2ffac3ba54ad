// The example shop: a Fastify app that sells through Paygate with @paygate/node.
// POST /checkout makes an order and its RUB payment (the buyer goes to
// payment_url); POST /checkout/crypto makes a USDT invoice; POST /webhooks/paygate
// verifies each webhook with the SDK on the exact bytes received, drops repeats
// by webhook-id, and marks the order paid. Orders live in memory: a real shop
// keeps them in its database.
import { randomUUID } from 'node:crypto';
import Fastify, { type FastifyInstance } from 'fastify';
import { PaygateError, WebhookVerificationError, type Paygate, type WebhookEvent } from '@paygate/node';

export interface Order {
  readonly id: string;
  readonly kind: 'card' | 'crypto';
  /** RUB for a card order, USDT for a crypto one, as decimal strings. */
  readonly amount: string;
  status: 'awaiting_payment' | 'paid' | 'failed' | 'expired';
  payment_id?: string;
  invoice_id?: string;
  /** The payment page (card) or the `tron:` payment URI (crypto). */
  pay_url?: string;
  /** Where a crypto order's USDT goes. */
  address?: string;
}

export interface ShopOptions {
  readonly paygate: Paygate;
  /** The shop's `whsec_…` webhook secret. */
  readonly webhookSecret: string;
  /** Where Paygate reaches this shop (`https://shop.example.com`), for callback_url. */
  readonly publicUrl: string;
  /** Called after each verified, first-seen webhook is applied. */
  readonly onWebhook?: (event: WebhookEvent) => void;
}

const AMOUNT = /^\d{1,9}(\.\d{1,6})?$/;
const checkoutSchema = {
  body: {
    type: 'object',
    required: ['amount'],
    additionalProperties: false,
    properties: { amount: { type: 'string', pattern: AMOUNT.source, maxLength: 20 } },
  },
} as const;

export function createShop(options: ShopOptions): FastifyInstance {
  const { paygate } = options;
  const orders = new Map<string, Order>();
  const seenEvents = new Set<string>();
  const app = Fastify({ logger: false });

  app.post<{ Body: { amount: string } }>('/checkout', { schema: checkoutSchema }, async (request, reply) => {
    const order: Order = { id: randomUUID(), kind: 'card', amount: request.body.amount, status: 'awaiting_payment' };
    // The API takes RUB as a JSON number with at most two decimals.
    const payment = await paygate.payments.create({
      amount: Number(order.amount),
      currency: 'RUB',
      order_id: order.id,
      callback_url: new URL('/webhooks/paygate', options.publicUrl).href,
    });
    Object.assign(order, { payment_id: payment.payment_id, pay_url: payment.payment_url });
    orders.set(order.id, order);
    return reply.code(201).send(order);
  });

  app.post<{ Body: { amount: string } }>('/checkout/crypto', { schema: checkoutSchema }, async (request, reply) => {
    const order: Order = { id: randomUUID(), kind: 'crypto', amount: request.body.amount, status: 'awaiting_payment' };
    const invoice = await paygate.crypto.invoices.create({
      external_id: order.id,
      amount: order.amount,
      network: 'TRC20',
      callback_url: new URL('/webhooks/paygate', options.publicUrl).href,
    });
    Object.assign(order, { invoice_id: invoice.invoice_id, pay_url: invoice.payment_uri, address: invoice.address });
    orders.set(order.id, order);
    return reply.code(201).send(order);
  });

  app.get<{ Params: { id: string } }>('/orders/:id', async (request, reply) => {
    const order = orders.get(request.params.id);
    return order === undefined ? reply.code(404).send({ error: 'not_found' }) : order;
  });

  app.register(async (hooks) => {
    // The signature covers the exact bytes: keep the body as a Buffer, never re-serialize it.
    hooks.addContentTypeParser('application/json', { parseAs: 'buffer', bodyLimit: 1_048_576 }, (_, body, done) =>
      done(null, body),
    );
    hooks.post<{ Body: Buffer }>('/webhooks/paygate', async (request, reply) => {
      let event: WebhookEvent;
      try {
        event = paygate.webhooks.verify(request.body, request.headers, options.webhookSecret);
      } catch (error) {
        if (error instanceof WebhookVerificationError) return reply.code(400).send({ error: 'invalid_signature' });
        throw error;
      }
      // Retries and resends carry the same id: apply each event once.
      if (seenEvents.has(event.id)) return reply.code(200).send({ received: true, duplicate: true });
      seenEvents.add(event.id);
      applyEvent(orders, event);
      options.onWebhook?.(event);
      return reply.code(200).send({ received: true });
    });
  });

  app.setErrorHandler((error, _request, reply) => {
    if (error instanceof PaygateError) {
      // The gateway refused or could not be reached: show its code and request id, which its operator can look up.
      return reply
        .code(502)
        .send({ error: 'payment_gateway', gateway_error: error.error, request_id: error.request_id });
    }
    return reply.send(error);
  });
  return app;
}

/** A payment's or invoice's webhook moves its order; events of other orders and kinds are ignored. */
function applyEvent(orders: Map<string, Order>, event: WebhookEvent): void {
  const data = event.data;
  const orderId = typeof data.order_id === 'string' ? data.order_id : data.external_id;
  const order = typeof orderId === 'string' ? orders.get(orderId) : undefined;
  if (order === undefined) return;
  if (event.type === 'payment.paid') order.status = 'paid';
  else if (event.type === 'payment.failed') order.status = 'failed';
  else if (event.type === 'payment.expired') order.status = 'expired';
  else if (event.type === 'crypto.invoice.updated') {
    if (data.status === 'paid' || data.status === 'overpaid') order.status = 'paid';
    else if (data.status === 'expired') order.status = 'expired';
  }
}

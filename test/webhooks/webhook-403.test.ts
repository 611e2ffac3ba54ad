// Who may call each webhook route: reading the log is open to every scope;
// the endpoint, the signing secret, resends, test sends and the event stream need `webhooks`.
import { afterAll, beforeAll } from 'vitest';
import { findShopWebhookSettings } from '../../src/webhooks/webhook-repository.ts';
import { authorized, scopeMatrix, type MatrixShop, type RouteCall } from '../support/scope-matrix.ts';
import { startReceiver, type Receiver } from './receiver.ts';

let receiver: Receiver;
beforeAll(async () => {
  receiver = await startReceiver();
});
afterAll(() => receiver.close());

/** A payment.paid event of the shop, made the way a merchant would: pay a payment with a callback_url. */
async function eventOf(shop: MatrixShop): Promise<string> {
  const created = await authorized(shop, {
    method: 'POST',
    url: '/v1/payments',
    payload: { amount: 100, currency: 'RUB', callback_url: receiver.url },
  });
  await authorized(shop, { method: 'POST', url: `/v1/test_helpers/payments/${created.json().payment_id}/pay` });
  const events = await authorized(shop, { method: 'GET', url: '/v1/webhooks/events' });
  return events.json().data[0].id;
}

/** Everything a webhook write could change: where webhooks go, what signs them, the events and what was sent. */
async function webhookState(shop: MatrixShop) {
  const row = await findShopWebhookSettings(shop.testApp.context.db, shop.merchant.shop_id);
  const events = await authorized(shop, { method: 'GET', url: '/v1/webhooks/events' });
  return {
    url: row?.webhook_url,
    secret: row?.webhook_secret,
    previousSecret: row?.previous_webhook_secret,
    events: events.json(),
    sent: receiver.requests.length,
  };
}

const calls: Record<string, RouteCall> = {
  'GET /v1/webhooks/events': { request: async () => ({ url: '/v1/webhooks/events' }), successStatus: 200 },
  'GET /v1/webhooks/events/:event_id': {
    request: async (shop) => ({ url: `/v1/webhooks/events/${await eventOf(shop)}` }),
    successStatus: 200,
  },
  'GET /v1/webhooks/events/:event_id/attempts': {
    request: async (shop) => ({ url: `/v1/webhooks/events/${await eventOf(shop)}/attempts` }),
    successStatus: 200,
  },
  'POST /v1/webhooks/events/:event_id/resend': {
    request: async (shop) => ({ url: `/v1/webhooks/events/${await eventOf(shop)}/resend` }),
    successStatus: 202,
    observe: webhookState,
  },
  'GET /v1/webhooks/endpoint': { request: async () => ({ url: '/v1/webhooks/endpoint' }), successStatus: 200 },
  'PUT /v1/webhooks/endpoint': {
    request: async () => ({ url: '/v1/webhooks/endpoint', payload: { url: 'https://attacker.example/hooks' } }),
    successStatus: 200,
    observe: webhookState,
  },
  'POST /v1/webhooks/secret/rotate': {
    request: async () => ({ url: '/v1/webhooks/secret/rotate' }),
    successStatus: 200,
    observe: webhookState,
  },
  'POST /v1/webhooks/test': {
    request: async () => ({ url: '/v1/webhooks/test', payload: { url: receiver.url } }),
    successStatus: 200,
    observe: webhookState,
  },
  'GET /v1/webhooks/stream': {
    request: async () => ({ url: '/v1/webhooks/stream' }),
    successStatus: 200,
    streamed: true,
  },
};

scopeMatrix('webhooks', calls);

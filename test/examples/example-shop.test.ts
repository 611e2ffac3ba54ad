// The example shop (examples/shop) end to end against a real gateway on a real
// port, both talking HTTP on loopback: checkout creates a payment through the
// SDK, the sandbox test helper pays it, the gateway's delivery worker sends
// payment.paid to the shop's receiver, which verifies it with the SDK and marks
// the order paid. The same for a USDT invoice paid on the simulated chain.
import type { AddressInfo } from 'node:net';
import { Paygate, type WebhookEvent } from '@paygate/node';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createShop, type Order } from '../../examples/shop/src/shop.ts';
import { createChainWatcher } from '../../src/crypto/receiving/chain-watcher.ts';
import { createDeliveryWorker } from '../../src/webhooks/delivery-worker.ts';
import { createTestApp, type TestApp } from '../support/app.ts';
import { backends } from '../support/databases.ts';

/** Solidification is at head − 18: a deposit is final once 19 blocks include it and follow. */
const BLOCKS_TO_FINALITY = 19;
const WATCHER_PASSES_MAX = 10;

describe.each(backends)('the example shop against the gateway on %s', (backend) => {
  let testApp: TestApp;
  let shop: FastifyInstance;
  let shopUrl: string;
  let paygate: Paygate;
  const received: WebhookEvent[] = [];

  beforeAll(async () => {
    testApp = await createTestApp(backend);
    // Signatures carry the gateway clock's time; the shop checks it against the real time.
    testApp.clock.set(new Date());
    await testApp.app.listen({ host: '127.0.0.1', port: 0 });
    const gatewayUrl = `http://127.0.0.1:${(testApp.app.server.address() as AddressInfo).port}`;
    const merchant = await testApp.createMerchant();
    paygate = new Paygate({ baseUrl: gatewayUrl, apiKey: merchant.api_key });
    // The shop's public URL is known once it listens: a placeholder port first, then the real one.
    let publicUrl = 'http://127.0.0.1';
    shop = createShop({
      paygate,
      webhookSecret: merchant.webhook_secret,
      get publicUrl() {
        return publicUrl;
      },
      onWebhook: (event) => received.push(event),
    });
    await shop.listen({ host: '127.0.0.1', port: 0 });
    shopUrl = `http://127.0.0.1:${(shop.server.address() as AddressInfo).port}`;
    publicUrl = shopUrl;
  });
  afterAll(async () => {
    await shop?.close();
    await testApp?.close();
  });

  async function shopCall(method: 'GET' | 'POST', path: string, body?: unknown) {
    const response = await fetch(`${shopUrl}${path}`, {
      method,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: response.status, body: (await response.json()) as Order & Record<string, unknown> };
  }

  const deliver = () => createDeliveryWorker(testApp.context).drain();

  it('checkout → payment → sandbox pay → payment.paid verified by the shop → order paid', async () => {
    const checkout = await shopCall('POST', '/checkout', { amount: '1490.50' });
    expect(checkout.status).toBe(201);
    const order = checkout.body;
    expect(order).toMatchObject({ kind: 'card', status: 'awaiting_payment', payment_id: expect.any(String) });
    const payment = await paygate.payments.retrieve(order.payment_id!);
    expect(payment).toMatchObject({ amount: 1490.5, order_id: order.id, payment_url: order.pay_url });

    await paygate.testHelpers.payments.pay(order.payment_id!);
    expect(await deliver()).toBe(1);

    expect(received.map((event) => [event.type, event.data.order_id])).toEqual([['payment.paid', order.id]]);
    expect((await shopCall('GET', `/orders/${order.id}`)).body.status).toBe('paid');
    const [event] = await paygate.webhooks.events.list({ type: 'payment.paid' }).toArray();
    expect(event).toMatchObject({ id: received[0]!.id });
  });

  it('refuses a webhook whose signature does not verify, and applies a resent event once', async () => {
    const forged = await fetch(`${shopUrl}/webhooks/paygate`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'webhook-id': 'evt_forged',
        'webhook-timestamp': String(Math.floor(Date.now() / 1000)),
        'webhook-signature': `v1,${Buffer.alloc(32).toString('base64')}`,
      },
      body: JSON.stringify({ id: 'evt_forged', type: 'payment.paid', data: {} }),
    });
    expect(forged.status).toBe(400);
    const before = received.length;
    await paygate.webhooks.events.resend(received[0]!.id);
    await deliver();
    expect(received).toHaveLength(before);
  });

  it('crypto checkout → USDT invoice → deposit on the simulated chain → crypto.invoice.updated paid → order paid', async () => {
    const checkout = await shopCall('POST', '/checkout/crypto', { amount: '25' });
    expect(checkout.status).toBe(201);
    const order = checkout.body;
    expect(order).toMatchObject({ kind: 'crypto', invoice_id: expect.any(String), address: expect.any(String) });

    await paygate.testHelpers.crypto.deposit({ address: order.address!, amount: '25' });
    await paygate.testHelpers.crypto.mineBlocks({ count: BLOCKS_TO_FINALITY + 1 });
    const watcher = createChainWatcher({
      db: testApp.context.db,
      clock: testApp.context.clock,
      logger: testApp.context.logger,
      access: await testApp.crypto.chain.forMode('sandbox'),
    });
    for (let pass = 0; pass < WATCHER_PASSES_MAX; pass++) {
      const result = await watcher.runPass();
      if (result.blocksScanned === 0 && result.depositsSettled === 0) break;
    }
    expect((await paygate.crypto.invoices.retrieve(order.invoice_id!)).status).toBe('paid');
    await deliver();

    const updates = received.filter((event) => event.type === 'crypto.invoice.updated');
    expect(updates.map((event) => event.data.status)).toContain('paid');
    expect((await shopCall('GET', `/orders/${order.id}`)).body.status).toBe('paid');
  });
});

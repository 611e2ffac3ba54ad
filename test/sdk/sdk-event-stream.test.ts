// @paygate/node's webhookEvents.stream against the real gateway on a real port:
// events made by API calls arrive with their ids, types and exact webhook
// bodies; a new stream with lastEventId resumes after it; a refusal is a PaygateError.
import { Paygate, PaygateError, type StreamedWebhookEvent } from '@paygate/node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/app.ts';
import { backends } from '../support/databases.ts';

describe.each(backends)('@paygate/node event stream on %s', (backend) => {
  let testApp: TestApp;
  let baseUrl: string;
  beforeAll(async () => {
    testApp = await createTestApp(backend);
    testApp.clock.set(new Date());
    baseUrl = await testApp.app.listen({ host: '127.0.0.1', port: 0 });
  });
  afterAll(async () => {
    // The global fetch's pool may hold a connection it opened and never sent a request on; Node
    // counts such a one active until its headers timeout (60 s), which would hold the close.
    testApp.app.server.closeAllConnections();
    await testApp.close();
  });

  async function take(stream: AsyncGenerator<StreamedWebhookEvent>, count: number): Promise<StreamedWebhookEvent[]> {
    const events: StreamedWebhookEvent[] = [];
    for await (const event of stream) {
      events.push(event);
      if (events.length === count) break;
    }
    return events;
  }

  it('yields the events of API calls as they commit, and resumes after lastEventId', async () => {
    const merchant = await testApp.createMerchant();
    const paygate = new Paygate({ baseUrl, apiKey: merchant.api_key });
    const pay = async () => {
      const payment = await paygate.payments.create({
        amount: 100,
        currency: 'RUB',
        callback_url: 'http://127.0.0.1:9/hooks',
      });
      await paygate.testHelpers.payments.pay(payment.payment_id);
      return payment.payment_id;
    };
    const abort = new AbortController();
    // The stream starts from now: the payments are made once it is open.
    const stream = await paygate.webhooks.events.stream({ types: ['payment.*'], signal: abort.signal });
    const paymentIds = [await pay(), await pay()];
    const events = await take(stream, 2);
    abort.abort();
    expect(events.map((event) => event.type)).toEqual(['payment.paid', 'payment.paid']);
    expect(events.map((event) => JSON.parse(event.body).data.payment_id)).toEqual(paymentIds);
    for (const event of events) expect(JSON.parse(event.body).id).toBe(event.id);

    const third = await pay();
    const stop = new AbortController();
    const resumed = await take(
      await paygate.webhooks.events.stream({ lastEventId: events[0]!.id, signal: stop.signal }),
      2,
    );
    stop.abort();
    expect(resumed.map((event) => event.id)).toEqual([events[1]!.id, expect.any(String)]);
    expect(JSON.parse(resumed[1]!.body).data.payment_id).toBe(third);
  });

  it('throws a PaygateError when the key may not stream', async () => {
    const merchant = await testApp.createMerchant();
    const key = await testApp.createKey(merchant.shop_id, ['read']);
    const paygate = new Paygate({ baseUrl, apiKey: key });
    const refused = await paygate.webhooks.events.stream().catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(PaygateError);
    expect((refused as PaygateError).status).toBe(403);
  });
});

// paygate.webhooks.verify on the gateway's real webhooks: a test webhook sent to a
// loopback receiver verifies and parses; a changed byte, a wrong secret, a stale
// or future timestamp, a missing header or an unknown signature version is
// refused; during a secret rotation either secret verifies. The standardwebhooks
// package agrees on the same bytes.
import { Paygate, WebhookVerificationError, verifyWebhook } from '@paygate/node';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDeliveryWorker } from '../../src/webhooks/delivery-worker.ts';
import { createTestApp, type TestApp } from '../support/app.ts';
import { backends } from '../support/databases.ts';
import { startReceiver, type Receiver } from '../webhooks/receiver.ts';

describe.each(backends)('webhook verification with @paygate/node on %s', (backend) => {
  let testApp: TestApp;
  let receiver: Receiver;
  let paygate: Paygate;
  let secret: string;

  beforeAll(async () => {
    testApp = await createTestApp(backend);
    // Signatures carry the clock's time; verification compares it with the real time.
    testApp.clock.set(new Date());
    await testApp.app.listen({ host: '127.0.0.1', port: 0 });
    const address = testApp.app.server.address();
    const port = typeof address === 'object' && address !== null ? address.port : 0;
    const merchant = await testApp.createMerchant();
    secret = merchant.webhook_secret;
    receiver = await startReceiver();
    paygate = new Paygate({ baseUrl: `http://127.0.0.1:${port}`, apiKey: merchant.api_key });
    await paygate.webhooks.endpoint.update({ url: receiver.url });
  });
  afterAll(async () => {
    await receiver?.close();
    await testApp?.close();
  });

  async function receiveTestWebhook() {
    receiver.requests.length = 0;
    await paygate.webhooks.endpoint.sendTest();
    await createDeliveryWorker(testApp.context).drain();
    expect(receiver.requests).toHaveLength(1);
    return receiver.requests[0]!;
  }

  it('verifies a real webhook and returns its event; standardwebhooks agrees', async () => {
    const received = await receiveTestWebhook();
    const event = paygate.webhooks.verify(received.body, received.headers, secret);
    expect(event).toMatchObject({ id: received.headers['webhook-id'], type: 'webhook.test', data: expect.any(Object) });
    expect(verifyWebhook(Buffer.from(received.body), received.headers, secret)).toEqual(event);
    expect(new Webhook(secret).verify(received.body, received.headers as Record<string, string>)).toEqual(event);
    const fetchHeaders = new Headers(received.headers as Record<string, string>);
    expect(paygate.webhooks.verify(received.body, fetchHeaders, secret)).toEqual(event);
  });

  it('refuses a changed body, a wrong secret, a stale or future timestamp, a missing header, another version', async () => {
    const { body, headers } = await receiveTestWebhook();
    const refused = (payload: string, given: Record<string, unknown>, key = secret, now?: Date) => {
      try {
        paygate.webhooks.verify(payload, given as Record<string, string>, key, now === undefined ? {} : { now });
      } catch (error) {
        expect(error).toBeInstanceOf(WebhookVerificationError);
        return (error as Error).message;
      }
      throw new Error('verified');
    };
    expect(refused(body.replace('webhook.test', 'webhook.tesT'), headers)).toMatch(/signature/);
    expect(refused(body, headers, `whsec_${Buffer.from('another secret').toString('base64')}`)).toMatch(/signature/);
    const sentAt = Number(headers['webhook-timestamp']) * 1000;
    expect(refused(body, headers, secret, new Date(sentAt + 301_000))).toMatch(/tolerance/);
    expect(refused(body, headers, secret, new Date(sentAt - 301_000))).toMatch(/tolerance/);
    expect(
      paygate.webhooks.verify(body, headers as Record<string, string>, secret, { now: new Date(sentAt + 299_000) }),
    ).toBeDefined();
    expect(refused(body, { ...headers, 'webhook-signature': undefined })).toMatch(/Missing/);
    const signature = String(headers['webhook-signature']);
    expect(refused(body, { ...headers, 'webhook-signature': signature.replace('v1,', 'v2,') })).toMatch(/signature/);
    expect(refused(body, { ...headers, 'webhook-timestamp': '12abc' })).toMatch(/timestamp/);
  });

  it('verifies with the old or the new secret while a rotation carries two signatures', async () => {
    const rotated = await paygate.webhooks.endpoint.rotateSecret();
    const { body, headers } = await receiveTestWebhook();
    expect(String(headers['webhook-signature']).split(' ')).toHaveLength(2);
    const event = paygate.webhooks.verify(body, headers, rotated.webhook_secret);
    expect(paygate.webhooks.verify(body, headers, secret)).toEqual(event);
    secret = rotated.webhook_secret;
  });
});

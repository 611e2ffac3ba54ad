import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inTransaction } from '../../src/db/transaction.ts';
import { createDeliveryWorker } from '../../src/webhooks/delivery-worker.ts';
import { emit } from '../../src/webhooks/outbox.ts';
import { blockedAddressReason, webhookUrlProblem } from '../../src/webhooks/url-guard.ts';
import { backends } from '../support/databases.ts';
import { createTestApp, type TestApp } from '../support/app.ts';
import { startReceiver, type Receiver } from './receiver.ts';

describe('webhook URL rule', () => {
  it.each([
    ['https://merchant.example/hooks', false, null],
    ['http://merchant.example/hooks', false, 'must use https'],
    ['http://merchant.example/hooks', true, null],
    ['ftp://merchant.example/hooks', true, 'must use https or http'],
    ['not a url', true, 'is not a valid URL'],
    ['https://user:pass@merchant.example/hooks', false, 'must not contain credentials'],
    [`https://merchant.example/${'a'.repeat(2100)}`, false, 'must be at most 2048 characters'],
  ])('%s with http allowed=%s → %s', (url, allowHttpWebhooks, problem) => {
    expect(webhookUrlProblem(url, { allowHttpWebhooks, webhookAllowPrivate: false })).toBe(problem);
  });

  it.each([
    ['http://127.0.0.1:8080/hooks', 'must not point to 127.0.0.1 (loopback address)'],
    ['https://LOCALHOST/hooks', 'must not point to localhost (loopback address)'],
    ['https://shop.localhost./hooks', 'must not point to shop.localhost (loopback address)'],
    ['https://169.254.169.254/', 'must not point to 169.254.169.254 (link-local (cloud metadata) address)'],
    ['https://[fd00::1]/', 'must not point to fd00::1 (private (unique local) address)'],
    ['https://[::ffff:10.1.2.3]/', 'must not point to ::ffff:a01:203 (private (IPv4 10.1.2.3 inside IPv6) address)'],
    ['https://3232235777/', 'must not point to 192.168.1.1 (private address)'],
    ['https://93.184.215.14/hooks', null],
    ['https://internal.example/hooks', null],
  ])('when given, %s → %s (no DNS lookup; names are checked when connecting)', (url, problem) => {
    expect(webhookUrlProblem(url, { allowHttpWebhooks: true, webhookAllowPrivate: false })).toBe(problem);
  });

  it('PAYGATE_WEBHOOK_ALLOW_PRIVATE lifts the address rule, not the URL rule', () => {
    const rules = { allowHttpWebhooks: false, webhookAllowPrivate: true };
    expect(webhookUrlProblem('https://127.0.0.1/hooks', rules)).toBeNull();
    expect(webhookUrlProblem('http://127.0.0.1/hooks', rules)).toBe('must use https');
  });
});

describe('address guard', () => {
  it.each([
    '127.0.0.1',
    '127.255.0.7',
    '10.1.2.3',
    '172.16.0.1',
    '172.31.255.255',
    '192.168.1.1',
    '169.254.169.254',
    '100.64.0.1',
    '0.0.0.0',
    '224.0.0.1',
    '255.255.255.255',
    '::1',
    '::',
    'fe80::1',
    'fc00::1',
    'fd00:ec2::254',
    'ff02::1',
    '::ffff:127.0.0.1',
    '::ffff:7f00:1',
    '::ffff:169.254.169.254',
    '::ffff:10.0.0.1',
    '64:ff9b::a9fe:a9fe',
    '2002:c0a8:0101::1',
  ])('refuses %s', (address) => {
    expect(blockedAddressReason(address)).not.toBeNull();
  });

  it.each(['93.184.215.14', '8.8.8.8', '172.32.0.1', '2606:4700:4700::1111', '::ffff:8.8.8.8'])(
    'allows public %s',
    (address) => {
      expect(blockedAddressReason(address)).toBeNull();
    },
  );
});

describe.each(backends)('SSRF refusals during delivery on %s', (backend) => {
  let testApp: TestApp;
  let receiver: Receiver;
  beforeAll(async () => {
    testApp = await createTestApp(backend, { config: { webhookAllowPrivate: false } });
    receiver = await startReceiver();
  });
  afterAll(async () => {
    await receiver.close();
    await testApp.close();
  });

  it.each([
    ['an IP literal on loopback', (url: string) => url, 'loopback'],
    [
      'a name resolving to loopback',
      (url: string) => url.replace('127.0.0.1', 'localhost'),
      'it resolves to a loopback address',
    ],
    ['the cloud metadata address', () => 'http://169.254.169.254/latest/meta-data/', 'link-local'],
    ['an IPv4-mapped IPv6 loopback', (url: string) => url.replace('127.0.0.1', '[::ffff:127.0.0.1]'), 'loopback'],
  ])('%s is refused: a failed attempt with the reason, and nothing is sent', async (label, toUrl, reason) => {
    const merchant = await testApp.createMerchant();
    const event = await inTransaction(testApp.context.db, (tx) =>
      emit(tx, testApp.clock, {
        shopId: merchant.shop_id,
        type: 'payment.paid',
        data: {},
        destination: toUrl(receiver.url),
      }),
    );
    const worker = createDeliveryWorker(testApp.context, { concurrency: 2, attemptTimeoutMs: 2_000 });
    try {
      await worker.drain();
    } finally {
      await worker.stop();
    }
    const attempts = await testApp.context.db
      .selectFrom('webhook_attempts')
      .selectAll()
      .where('event_id', '=', event.id)
      .execute();
    expect(attempts).toMatchObject([{ outcome: 'refused', status_code: null }]);
    expect(attempts[0]!.error).toContain(reason);
    // The merchant sees the attempt log: what a name resolved to is not in it.
    if (label.startsWith('a name')) expect(attempts[0]!.error).not.toMatch(/127\.0\.0\.1|::1/);
    expect(receiver.requests).toHaveLength(0);
    const delivery = await testApp.context.db
      .selectFrom('webhook_deliveries')
      .selectAll()
      .where('event_id', '=', event.id)
      .executeTakeFirstOrThrow();
    expect(delivery).toMatchObject({ status: 'pending', attempt_count: 1 });
  });

  it('a plain-http URL is refused when http webhooks are not allowed', async () => {
    const strict = await createTestApp(backend, { config: { webhookAllowPrivate: true, allowHttpWebhooks: false } });
    try {
      const merchant = await strict.createMerchant();
      const event = await inTransaction(strict.context.db, (tx) =>
        emit(tx, strict.clock, { shopId: merchant.shop_id, type: 'payment.paid', data: {}, destination: receiver.url }),
      );
      const worker = createDeliveryWorker(strict.context, { concurrency: 1 });
      await worker.drain();
      await worker.stop();
      const attempts = await strict.context.db
        .selectFrom('webhook_attempts')
        .selectAll()
        .where('event_id', '=', event.id)
        .execute();
      expect(attempts).toMatchObject([{ outcome: 'refused', error: 'the URL must use https' }]);
      expect(receiver.requests).toHaveLength(0);
    } finally {
      await strict.close();
    }
  });
});

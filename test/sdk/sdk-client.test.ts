// @paygate/node against the real gateway on a real port (through a loopback relay
// that can lose answers and answer 503/429 itself): typed resource methods,
// lists iterated across pages, one Idempotency-Key per logical call kept across
// its retries, Retry-After honoured within the bound, typed errors with the request id.
import type { AddressInfo } from 'node:net';
import { Paygate, PaygateConnectionError, PaygateError } from '@paygate/node';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/app.ts';
import { backends } from '../support/databases.ts';
import { startFlakyRelay, type FlakyRelay } from './flaky-relay.ts';

describe.each(backends)('@paygate/node against the gateway on %s', (backend) => {
  let testApp: TestApp;
  let relay: FlakyRelay;
  let paygate: Paygate;
  let apiKey: string;

  beforeAll(async () => {
    testApp = await createTestApp(backend);
    await testApp.app.listen({ host: '127.0.0.1', port: 0 });
    const { port } = testApp.app.server.address() as AddressInfo;
    relay = await startFlakyRelay(`http://127.0.0.1:${port}`);
    apiKey = (await testApp.createMerchant()).api_key;
    // Back-off without Retry-After stays under a millisecond: the relay decides what happens, never time.
    paygate = new Paygate({ baseUrl: relay.url, apiKey, maxRetryDelayMs: 1 });
  });
  beforeEach(() => {
    relay.requests.length = 0;
  });
  afterAll(async () => {
    await relay?.close();
    await testApp?.close();
  });

  const keysOf = (path: string) =>
    relay.requests.filter((request) => request.path === path).map((request) => request.headers['idempotency-key']);

  it('creates, reads and pays a payment with typed results, and lists every page through the async iterator', async () => {
    const created = [];
    for (let index = 0; index < 5; index++) {
      created.push(await paygate.payments.create({ amount: 100 + index, currency: 'RUB', order_id: `page-${index}` }));
    }
    expect(created[0]).toMatchObject({ status: 'pending', amount: 100, currency: 'RUB', order_id: 'page-0' });
    expect(await paygate.payments.retrieve(created[0]!.payment_id)).toEqual(created[0]);
    const paid = await paygate.testHelpers.payments.pay(created[1]!.payment_id);
    expect(paid.status).toBe('paid');

    const seen: string[] = [];
    for await (const payment of paygate.payments.list({ limit: 2 })) seen.push(payment.payment_id);
    // Made at one instant of the test clock: newest first is no order among them, so compare as sets.
    expect(seen.toSorted()).toEqual(created.map((payment) => payment.payment_id).toSorted());
    const pages = relay.requests.filter((request) => request.path.startsWith('/v1/payments?'));
    expect(pages).toHaveLength(3);
    expect(pages[1]!.path).toContain('cursor=');

    const first = await paygate.payments.list({ limit: 2 }).firstPage();
    expect(first.data).toHaveLength(2);
    expect(first.next_cursor).toEqual(expect.any(String));
    expect(await paygate.payments.list({ status: 'paid' }).toArray()).toEqual([paid]);
  });

  it('sends one generated Idempotency-Key per call, and a different one for the next call', async () => {
    await paygate.payments.create({ amount: 10, currency: 'RUB' });
    await paygate.payments.create({ amount: 10, currency: 'RUB' });
    const keys = keysOf('/v1/payments');
    expect(keys).toHaveLength(2);
    expect(keys[0]).toMatch(/^[0-9a-f-]{36}$/);
    expect(keys[1]).not.toBe(keys[0]);
    expect(relay.requests.every((request) => request.headers['user-agent'] === 'paygate-node/0.1.0')).toBe(true);
  });

  it('retries a POST whose answer was lost with the same key, so the gateway makes one payment, not two', async () => {
    relay.plan('forward-then-cut');
    const payment = await paygate.payments.create({ amount: 777, currency: 'RUB', order_id: 'lost-answer' });
    const keys = keysOf('/v1/payments');
    expect(keys).toHaveLength(2);
    expect(keys[1]).toBe(keys[0]);
    expect(await paygate.payments.list({ order_id: 'lost-answer' }).toArray()).toEqual([payment]);
  });

  it('keeps a caller-given Idempotency-Key, and retries a cut connection with it', async () => {
    relay.plan('cut');
    const payment = await paygate.payments.create({ amount: 55, currency: 'RUB' }, { idempotencyKey: 'shop-order-55' });
    expect(keysOf('/v1/payments')).toEqual(['shop-order-55', 'shop-order-55']);
    const again = await paygate.payments.create({ amount: 55, currency: 'RUB' }, { idempotencyKey: 'shop-order-55' });
    expect(again.payment_id).toBe(payment.payment_id);
  });

  it('retries 503 and 429 as Retry-After says, and caps a long Retry-After at maxRetryDelayMs', async () => {
    relay.plan(
      { status: 503, headers: { 'retry-after': '0' } },
      // Retry-After as an HTTP date already past: retry at once.
      { status: 503, headers: { 'retry-after': new Date(0).toUTCString() } },
      // An hour asked; the client's bound (1 ms) wins, so the call does not hang.
      { status: 429, headers: { 'retry-after': '3600' }, body: { error: 'rate_limited', message: 'slow down' } },
    );
    const patient = new Paygate({ baseUrl: relay.url, apiKey, maxRetries: 3, maxRetryDelayMs: 1 });
    const account = await patient.account.retrieve();
    expect(account.mode).toBe('sandbox');
    expect(relay.requests.map((request) => request.path)).toEqual(Array(4).fill('/v1/account'));
  });

  it('gives up after maxRetries with the last refusal as a typed error', async () => {
    const once = new Paygate({ baseUrl: relay.url, apiKey, maxRetries: 1, maxRetryDelayMs: 1 });
    relay.plan(
      { status: 503, headers: { 'retry-after': '0' } },
      {
        status: 429,
        headers: { 'retry-after': '0' },
        body: { error: 'rate_limited', message: 'slow down', request_id: 'r-1' },
      },
    );
    const error = await once.account.retrieve().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(PaygateError);
    expect(error).toMatchObject({ status: 429, error: 'rate_limited', message: 'slow down', request_id: 'r-1' });
    expect(relay.requests).toHaveLength(2);
  });

  it('throws the gateway refusal as PaygateError with error, message, status and the request id, without retrying it', async () => {
    const missing = await paygate.payments.retrieve('0195f3b2-8c1e-7d4a-9b61-2f0c7e5a1d34').catch((caught) => caught);
    expect(missing).toBeInstanceOf(PaygateError);
    expect(missing).toMatchObject({ status: 404, error: 'not_found', request_id: expect.any(String) });
    const invalid = await paygate.payments.create({ amount: 0.001, currency: 'RUB' }).catch((caught) => caught);
    expect(invalid).toMatchObject({ status: 400, error: 'invalid_request' });
    expect(relay.requests).toHaveLength(2);
    const wrongKey = new Paygate({ baseUrl: relay.url, apiKey: 'pg_not_a_key' });
    expect(await wrongKey.account.retrieve().catch((caught) => caught)).toMatchObject({
      status: 401,
      error: 'unauthorized',
    });
  });

  it('throws PaygateConnectionError when no attempt gets an answer', async () => {
    relay.plan('cut', 'cut', 'cut');
    const error = await paygate.account.retrieve().catch((caught) => caught);
    expect(error).toBeInstanceOf(PaygateConnectionError);
    expect(error).toMatchObject({ error: 'connection_error', status: undefined });
    expect(relay.requests).toHaveLength(3);
  });

  it('covers crypto: wallets, invoices with their QR code, the balance, payouts listed as an async iterator', async () => {
    await paygate.testHelpers.crypto.faucet({ usdt: '100', trx: '100' });
    const wallet = await paygate.crypto.wallets.create({ client_id: 'customer-1', network: 'TRC20' });
    expect(await paygate.crypto.wallets.retrieve(wallet.wallet_id)).toMatchObject(wallet);
    const blocked = await paygate.crypto.wallets.block(wallet.wallet_id);
    expect(blocked.status).toBe('blocked');
    expect((await paygate.crypto.wallets.unblock(wallet.wallet_id)).status).toBe('active');

    const invoice = await paygate.crypto.invoices.create({ external_id: 'inv-1', amount: '12.5', network: 'TRC20' });
    expect(invoice).toMatchObject({ external_id: 'inv-1', amount: '12.5', asset: 'USDT', status: 'pending' });
    expect(await paygate.crypto.invoices.list({ external_id: 'inv-1' }).toArray()).toEqual([invoice]);
    expect(await paygate.crypto.invoices.qrSvg(invoice.invoice_id)).toMatch(/^<(\?xml|svg)/);

    const balance = await paygate.crypto.balance.retrieve();
    expect(balance).toEqual(expect.any(Object));
    const payouts = [];
    for await (const payout of paygate.crypto.payouts.list({ limit: 1 })) payouts.push(payout);
    expect(payouts).toEqual([]);
  });
});

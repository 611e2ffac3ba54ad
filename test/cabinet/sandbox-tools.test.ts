// The cabinet's sandbox tools through the real app: a payment paid, failed or
// expired from the page is so through the API too; an unknown payment is refused
// on the page; a live shop has no sandbox page; a viewer may not use the tools.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/app.ts';
import { backends } from '../support/databases.ts';
import { recipient } from '../crypto/payouts/payout-support.ts';
import { getJson, postPayment } from '../payments/payment-test-support.ts';
import { addMember, CabinetClient, createOwner, type CabinetPerson } from './cabinet-client.ts';

describe.each(backends)('cabinet sandbox tools on %s', (backend) => {
  let testApp: TestApp;
  beforeAll(async () => {
    testApp = await createTestApp(backend);
  });
  afterAll(() => testApp?.close());

  async function signedIn(person: CabinetPerson): Promise<CabinetClient> {
    const client = new CabinetClient(testApp.app);
    expect((await client.signIn(person.email)).statusCode).toBe(303);
    return client;
  }

  it('pay, fail and expire from the page move the payments, as the API then shows', async () => {
    const owner = await createOwner(testApp);
    const client = await signedIn(owner);
    for (const [action, status] of [
      ['pay', 'paid'],
      ['fail', 'failed'],
      ['expire', 'expired'],
    ] as const) {
      const created = await postPayment(testApp, owner.apiKey, { amount: 150, currency: 'RUB' });
      const paymentId = created.json().payment_id as string;
      expect((await client.get(`/cabinet/shops/${owner.shopId}/sandbox`)).statusCode).toBe(200);
      const done = await client.post(`/cabinet/shops/${owner.shopId}/sandbox/payment`, {
        payment_id: paymentId,
        action,
      });
      expect(done.statusCode, done.body).toBe(200);
      expect(done.body).toContain('notice ok');
      expect(done.body).toContain(paymentId);
      expect((await getJson(testApp, owner.apiKey, `/v1/payments/${paymentId}`)).json().status).toBe(status);
    }
  });

  it('an unknown payment, or one already paid, is refused on the page with the reason', async () => {
    const owner = await createOwner(testApp);
    const client = await signedIn(owner);
    await client.get(`/cabinet/shops/${owner.shopId}/sandbox`);
    const unknown = await client.post(`/cabinet/shops/${owner.shopId}/sandbox/payment`, {
      payment_id: '00000000-0000-4000-8000-000000000000',
      action: 'pay',
    });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.body).toContain('notice error');
    const created = await postPayment(testApp, owner.apiKey, { amount: 150, currency: 'RUB' });
    const paymentId = created.json().payment_id as string;
    await client.post(`/cabinet/shops/${owner.shopId}/sandbox/payment`, { payment_id: paymentId, action: 'pay' });
    const twice = await client.post(`/cabinet/shops/${owner.shopId}/sandbox/payment`, {
      payment_id: paymentId,
      action: 'fail',
    });
    expect(twice.statusCode).toBe(409);
    expect(twice.body).toContain('paid');
    expect((await getJson(testApp, owner.apiKey, `/v1/payments/${paymentId}`)).json().status).toBe('paid');
  });

  it('the chain tools: a blacklisted address is refused by the payout quote, then taken off; faucet, outcome, reorg and drain report what they did', async () => {
    const owner = await createOwner(testApp);
    const client = await signedIn(owner);
    const tools = `/cabinet/shops/${owner.shopId}/sandbox`;
    await client.get(`/cabinet/language/en?back=${encodeURIComponent(tools)}`);
    let address = '';
    const quote = () =>
      testApp.app.inject({
        method: 'POST',
        url: '/v1/crypto/payouts/quote',
        headers: { authorization: `Bearer ${owner.apiKey}`, 'content-type': 'application/json' },
        payload: JSON.stringify({ network: 'TRC20', amount: '10', address }),
      });
    await client.get(tools);
    // Another's address (here any address the tool did not make for this shop) is refused, and stays off the list.
    const foreign = await client.post(`${tools}/blacklist`, { address: recipient(), listed: 'on' });
    expect(foreign.body).toContain('is not one of this sandbox shop');
    // Without an address the tool makes one for the shop.
    const listed = await client.post(`${tools}/blacklist`, { listed: 'on' });
    expect(listed.body).toContain('notice ok');
    address = /Address blacklisted: (T\w+)/.exec(listed.body)![1]!;
    expect((await quote()).json().error).toBe('address_blacklisted');
    // Taken off again (the quote's cached answer about the address ages out on its own schedule).
    expect((await client.post(`${tools}/blacklist`, { address })).body).toContain(
      `Address taken off the blacklist: ${address}`,
    );

    const funded = await client.post(`${tools}/faucet`, { address, usdt: '12.5', trx: '3' });
    expect(funded.statusCode, funded.body).toBe(200);
    expect(funded.body).toMatch(/The address now holds 12\.5\d* USDT, 3(\.0+)? TRX/);
    const armed = await client.post(`${tools}/next-transfer`, { address, outcome: 'revert' });
    expect(armed.body).toContain(`${address}: reverted by the contract`);
    await client.post(`${tools}/blocks`, { count: '3' });
    const reorganized = await client.post(`${tools}/reorg`, { depth: '2' });
    expect(reorganized.statusCode, reorganized.body).toBe(200);
    expect(reorganized.body).toContain('Blocks replaced');
    const drained = await client.post(`${tools}/drain`, {});
    expect(drained.body).toContain('The hot wallet has no TRX now');
    await client.post(`${tools}/faucet`, { trx: '1000' });
  });

  it.each([
    ['next-transfer', { address: 'not-an-address', outcome: 'revert' }],
    ['next-transfer', { address: 'TJRyWwFs9wTFGZg3JbrVriFbNfCug5tDeC', outcome: 'explode' }],
    ['faucet', { usdt: '-1' }],
    ['faucet', {}],
    ['reorg', { depth: '1000' }],
  ])('the chain tool %s refuses %j with the reason', async (tool, fields) => {
    const owner = await createOwner(testApp);
    const client = await signedIn(owner);
    await client.get(`/cabinet/shops/${owner.shopId}/sandbox`);
    const refused = await client.post(`/cabinet/shops/${owner.shopId}/sandbox/${tool}`, fields);
    expect(refused.statusCode).toBeGreaterThanOrEqual(400);
    expect(refused.statusCode).toBeLessThan(500);
    expect(refused.body).toContain('notice error');
  });

  it('a live shop has no sandbox page: 404 for the page and its forms', async () => {
    const owner = await createOwner(testApp, { live: true });
    const client = await signedIn(owner);
    expect((await client.get(`/cabinet/shops/${owner.shopId}/sandbox`)).statusCode).toBe(404);
    await client.get('/cabinet/shops');
    expect((await client.post(`/cabinet/shops/${owner.shopId}/sandbox/blocks`, { count: '1' })).statusCode).toBe(404);
  });

  it('a viewer gets 403 for the tools', async () => {
    const owner = await createOwner(testApp);
    const viewer = await addMember(testApp, owner, 'viewer');
    const client = await signedIn(viewer);
    expect((await client.get(`/cabinet/shops/${owner.shopId}/sandbox`)).statusCode).toBe(403);
  });
});

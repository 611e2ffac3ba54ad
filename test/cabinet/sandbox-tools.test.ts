// The cabinet's sandbox tools through the real app: a payment paid, failed or
// expired from the page is so through the API too; an unknown payment is refused
// on the page; a live shop has no sandbox page; a viewer may not use the tools.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/app.ts';
import { backends } from '../support/databases.ts';
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

// The cabinet's payment methods page through the real app: a method switched off
// there is refused at payment creation and gone from the payment page; bad
// amounts and fees are refused as the CLI refuses them and change nothing; each
// change is audited with before and after; a viewer sees the settings but cannot
// change them; the CLI's change is audited too, with the operator as actor.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OPERATOR } from '../../src/audit/audit-service.ts';
import { shopMethodSettings, updateShopMethod } from '../../src/payments/payment-methods.ts';
import { createTestApp, type TestApp } from '../support/app.ts';
import { backends } from '../support/databases.ts';
import { postPayment } from '../payments/payment-test-support.ts';
import { addMember, CabinetClient, createOwner, type CabinetPerson } from './cabinet-client.ts';

describe.each(backends)('cabinet payment methods on %s', (backend) => {
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

  const methodForm = (overrides: Record<string, string> = {}) => ({
    enabled: 'on',
    min: '1.00',
    max: '1000000.00',
    fee_percent: '0.00',
    ...overrides,
  });

  function auditRows(shopId: string) {
    return testApp.context.db
      .selectFrom('audit_events')
      .selectAll()
      .where('shop_id', '=', shopId)
      .where('action', '=', 'method.changed')
      .orderBy('created_at')
      .execute();
  }

  it('the owner switches SBP off: creating a payment with it gets method_unavailable and the payment page no longer offers it', async () => {
    const owner = await createOwner(testApp);
    const client = await signedIn(owner);
    const page = await client.get(`/cabinet/shops/${owner.shopId}/methods`);
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain(`action="/cabinet/shops/${owner.shopId}/methods/sbp"`);

    const unbound = await postPayment(testApp, owner.apiKey, { amount: 100, currency: 'RUB' });
    expect(unbound.statusCode).toBe(201);
    const before = await testApp.app.inject({ method: 'GET', url: `/pay/${unbound.json().order_code}` });
    expect(before.body).toContain('data-method="sbp"');

    const saved = await client.post(`/cabinet/shops/${owner.shopId}/methods/sbp`, methodForm({ enabled: '' }));
    expect(saved.statusCode, saved.body).toBe(303);
    expect(saved.headers.location).toBe(`/cabinet/shops/${owner.shopId}/methods?saved=sbp`);
    expect((await client.get(saved.headers.location!)).body).toContain('notice ok');

    const refused = await postPayment(testApp, owner.apiKey, { amount: 100, currency: 'RUB', method: 'sbp' });
    expect(refused.statusCode).toBe(400);
    expect(refused.json().error).toBe('method_unavailable');
    const after = await testApp.app.inject({ method: 'GET', url: `/pay/${unbound.json().order_code}` });
    expect(after.body).not.toContain('data-method="sbp"');
    expect(after.body).toContain('data-method="card"');
  });

  it('range and payer fee are saved in RUB and percent, and the audit row holds before and after with the user as actor', async () => {
    const owner = await createOwner(testApp);
    const client = await signedIn(owner);
    await client.get(`/cabinet/shops/${owner.shopId}/methods`);
    const saved = await client.post(
      `/cabinet/shops/${owner.shopId}/methods/card`,
      methodForm({ min: '10', max: '5000.50', fee_percent: '2.5' }),
      { 'user-agent': 'methods-test-browser' },
    );
    expect(saved.statusCode, saved.body).toBe(303);
    const card = (await shopMethodSettings(testApp.context.db, owner.shopId)).find((entry) => entry.method === 'card');
    expect(card).toMatchObject({ enabled: true, minKopecks: 1_000n, maxKopecks: 500_050n, feeBasisPoints: 250 });
    const created = await postPayment(testApp, owner.apiKey, { amount: 100, currency: 'RUB', method: 'card' });
    expect(created.json().amount_total).toBe(102.5);

    const rows = await auditRows(owner.shopId);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      merchant_id: owner.merchantId,
      actor_kind: 'user',
      actor_id: owner.userId,
      actor_label: owner.email,
      target: 'card',
      user_agent: 'methods-test-browser',
    });
    expect(rows[0]!.details).toEqual({
      before: { method: 'card', enabled: true, min_amount: '1.00', max_amount: '1000000.00', fee_percent: '0.00' },
      after: { method: 'card', enabled: true, min_amount: '10.00', max_amount: '5000.50', fee_percent: '2.50' },
    });
    const page = await client.get(`/cabinet/shops/${owner.shopId}/methods`);
    expect(page.body).toContain('value="5000.50"');
    expect(page.body).toContain('value="2.50"');
  });

  it.each([
    ['three decimals', { min: '1.001' }, 'at most 2 decimals'],
    ['a word for an amount', { max: 'lots' }, 'at most 2 decimals'],
    ['min above max', { min: '500', max: '100' }, 'min &lt;= max'],
    ['max above 1 000 000', { max: '1000000.01' }, 'min &lt;= max'],
    ['min below 1.00', { min: '0.99' }, 'min &lt;= max'],
    ['a fee over 100 %', { fee_percent: '100.01' }, '0 to 100'],
    ['a fee with three decimals', { fee_percent: '1.234' }, 'at most 2 decimals'],
  ])('%s is refused with the reason on the page, and nothing changes or is audited', async (_name, fields, reason) => {
    const owner = await createOwner(testApp);
    const client = await signedIn(owner);
    await client.get(`/cabinet/shops/${owner.shopId}/methods`);
    const before = await shopMethodSettings(testApp.context.db, owner.shopId);
    const refused = await client.post(`/cabinet/shops/${owner.shopId}/methods/card`, methodForm(fields));
    expect(refused.statusCode).toBe(400);
    expect(refused.body).toContain('notice error');
    expect(refused.body).toContain(reason);
    expect(await shopMethodSettings(testApp.context.db, owner.shopId)).toEqual(before);
    expect(await auditRows(owner.shopId)).toHaveLength(0);
  });

  it('an unknown method is refused and a shop of another merchant is 404', async () => {
    const owner = await createOwner(testApp);
    const stranger = await createOwner(testApp);
    const client = await signedIn(owner);
    await client.get(`/cabinet/shops/${owner.shopId}/methods`);
    expect((await client.post(`/cabinet/shops/${owner.shopId}/methods/cash`, methodForm())).statusCode).toBe(400);
    expect((await client.get(`/cabinet/shops/${stranger.shopId}/methods`)).statusCode).toBe(404);
    await client.get(`/cabinet/shops/${owner.shopId}/methods`);
    expect((await client.post(`/cabinet/shops/${stranger.shopId}/methods/card`, methodForm())).statusCode).toBe(404);
    expect(await auditRows(stranger.shopId)).toHaveLength(0);
  });

  it('a viewer sees the settings without a form and gets 403 when posting a change', async () => {
    const owner = await createOwner(testApp);
    const viewer = await addMember(testApp, owner, 'viewer');
    const client = await signedIn(viewer);
    const page = await client.get(`/cabinet/shops/${owner.shopId}/methods`);
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('1000000.00');
    expect(page.body).not.toContain('/methods/card"');
    const refused = await client.post(`/cabinet/shops/${owner.shopId}/methods/card`, methodForm({ enabled: '' }));
    expect(refused.statusCode).toBe(403);
    const card = (await shopMethodSettings(testApp.context.db, owner.shopId)).find((entry) => entry.method === 'card');
    expect(card?.enabled).toBe(true);
    expect(await auditRows(owner.shopId)).toHaveLength(0);
  });

  it('a change made as the CLI makes it is audited with the operator as actor', async () => {
    const owner = await createOwner(testApp);
    await updateShopMethod(testApp.context, owner.shopId, 'sberpay', { enabled: false }, OPERATOR);
    const rows = await auditRows(owner.shopId);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ actor_kind: 'operator', actor_label: 'operator', target: 'sberpay' });
    expect(rows[0]!.details).toMatchObject({ before: { enabled: true }, after: { enabled: false } });
  });
});

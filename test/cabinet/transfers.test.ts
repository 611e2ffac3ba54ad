// Moving money between the merchant's own accounts from the cabinet: the same
// ledger transfer as POST /v1/crypto/balance/transfers, once per form (a form
// sent twice moves the money once), refused with a message and no change when
// the money is not there, audited in its transaction; owners and finance move
// it (after enrolling a second factor), a viewer sees the accounts only, a
// developer not even that.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/app.ts';
import { backends } from '../support/databases.ts';
import { getJson, paidPayment } from '../payments/payment-test-support.ts';
import { addMember, CabinetClient, createOwner, type CabinetPerson } from './cabinet-client.ts';
import { enrol } from './two-factor-support.ts';

async function rubBalances(testApp: TestApp, person: CabinetPerson): Promise<Record<string, string>> {
  const body = (await getJson(testApp, person.apiKey, '/v1/crypto/balance')).json() as {
    accounts: Array<{ currency: string; kind: string; available: string }>;
  };
  return Object.fromEntries(
    body.accounts.filter((account) => account.currency === 'RUB').map((account) => [account.kind, account.available]),
  );
}

function externalIdOn(page: string): string {
  const match = /name="external_id" value="([^"]+)"/.exec(page);
  if (!match?.[1]) throw new Error('no external_id on the transfer form');
  return match[1];
}

describe.each(backends)('cabinet transfers between accounts on %s', (backend) => {
  let testApp: TestApp;
  beforeAll(async () => {
    testApp = await createTestApp(backend);
  });
  afterAll(() => testApp?.close());

  async function enrolledClient(person: CabinetPerson): Promise<CabinetClient> {
    const client = new CabinetClient(testApp.app);
    await client.signIn(person.email);
    await enrol(client, () => testApp.clock.now());
    return client;
  }

  it('the owner moves 40.50 RUB from main to payout once, though the form is sent twice; audited', async () => {
    const owner = await createOwner(testApp);
    await paidPayment(testApp, owner.apiKey, 100);
    const client = await enrolledClient(owner);
    const page = await client.get(`/cabinet/shops/${owner.shopId}/transfers`);
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('data-account="RUB:main"');
    const form = { direction: 'RUB:main>payout', amount: '40.50', external_id: externalIdOn(page.body) };
    const first = await client.post(`/cabinet/shops/${owner.shopId}/transfers`, form);
    const again = await client.post(`/cabinet/shops/${owner.shopId}/transfers`, form);
    expect(first.headers.location).toBe(`/cabinet/shops/${owner.shopId}/transfers?done=1`);
    expect(again.headers.location).toBe(`/cabinet/shops/${owner.shopId}/transfers?done=1`);
    expect(await rubBalances(testApp, owner)).toEqual({ main: '59.50', payout: '40.50' });
    const audited = await testApp.context.db
      .selectFrom('audit_events')
      .selectAll()
      .where('merchant_id', '=', owner.merchantId)
      .where('action', '=', 'balance.transferred')
      .execute();
    expect(audited).toHaveLength(1);
    expect(audited[0]).toMatchObject({ actor_kind: 'user', actor_id: owner.userId });
    expect(audited[0]!.details).toMatchObject({ from: 'RUB:main', to: 'RUB:payout', amount: '40.50' });
  });

  it.each([
    [{ direction: 'RUB:main>payout', amount: '100.01' }, 'not enough'],
    [{ direction: 'RUB:main>payout', amount: '1.001' }, 'decimal places'],
    [{ direction: 'RUB:main>main', amount: '1' }, 'Choose where'],
    [{ direction: 'RUB:main>payout', amount: '' }, 'amount'],
  ])('%j is refused with a message and moves nothing', async (fields, message) => {
    const owner = await createOwner(testApp);
    await paidPayment(testApp, owner.apiKey, 100);
    const client = await enrolledClient(owner);
    const page = await client.get(`/cabinet/shops/${owner.shopId}/transfers`);
    const refused = await client.post(`/cabinet/shops/${owner.shopId}/transfers`, {
      ...fields,
      external_id: externalIdOn(page.body),
    });
    expect(refused.statusCode).toBe(400);
    expect(refused.body).toContain('notice error');
    expect(refused.body.toLowerCase()).toContain(message.toLowerCase());
    expect(await rubBalances(testApp, owner)).toEqual({ main: '100.00', payout: '0.00' });
  });

  it('an owner without a second factor is sent to enrol first; a viewer sees the accounts but no form and gets 403; a developer gets 403', async () => {
    const owner = await createOwner(testApp);
    const plain = new CabinetClient(testApp.app);
    await plain.signIn(owner.email);
    const page = await plain.get(`/cabinet/shops/${owner.shopId}/transfers`);
    const sent = await plain.post(`/cabinet/shops/${owner.shopId}/transfers`, {
      direction: 'RUB:main>payout',
      amount: '1',
      external_id: externalIdOn(page.body),
    });
    expect(sent.headers.location).toBe('/cabinet/account/two-factor?required=1');

    const viewer = await addMember(testApp, owner, 'viewer');
    const viewerClient = new CabinetClient(testApp.app);
    await viewerClient.signIn(viewer.email);
    const seen = await viewerClient.get(`/cabinet/shops/${owner.shopId}/transfers`);
    expect(seen.statusCode).toBe(200);
    expect(seen.body).toContain('data-account="USDT:payout"');
    expect(seen.body).not.toContain('name="direction"');
    const forbidden = await viewerClient.post(`/cabinet/shops/${owner.shopId}/transfers`, {
      direction: 'RUB:main>payout',
      amount: '1',
      external_id: 'x',
    });
    expect(forbidden.statusCode).toBe(403);

    const developer = await addMember(testApp, owner, 'developer');
    const developerClient = new CabinetClient(testApp.app);
    await developerClient.signIn(developer.email);
    expect((await developerClient.get(`/cabinet/shops/${owner.shopId}/transfers`)).statusCode).toBe(403);
    expect(await rubBalances(testApp, owner)).toEqual({ main: '0.00', payout: '0.00' });
  });
});

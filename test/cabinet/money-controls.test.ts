// The controls around money leaving the merchant, tried as an attacker with a
// stolen or a rogue member's session: an address taken out of the book is not
// paid by a request that still waits; another merchant's withdrawals and addresses are out
// of reach; a TOTP code works in one money form only.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { backends } from '../support/databases.ts';
import { recipient, type PayoutShop } from '../crypto/payouts/payout-support.ts';
import { createChainTestApp, type ChainTestApp } from '../crypto/refunds/refund-support.ts';
import { addMember, CabinetClient, createOwner, type CabinetPerson } from './cabinet-client.ts';
import { enrol, totpCode } from './two-factor-support.ts';

const COOLDOWN_MS = 10 * 60_000;

describe.each(backends)('cabinet money controls on %s', (backend) => {
  let testApp: ChainTestApp;
  beforeAll(async () => {
    testApp = await createChainTestApp(backend, { config: { withdrawalAddressCooldownMs: COOLDOWN_MS } });
  });
  afterEach(() => testApp.expectLedgerGreen());
  afterAll(() => testApp?.close());

  interface Member {
    readonly person: CabinetPerson;
    readonly client: CabinetClient;
    readonly secret: string;
  }

  function englishClient(): CabinetClient {
    const client = new CabinetClient(testApp.app);
    client.cookies.set('paygate_lang', 'en');
    return client;
  }

  async function send(client: CabinetClient, path: string, fields: Record<string, string> = {}) {
    if (!/name="csrf"/.test(client.lastPage)) await client.get('/cabinet/account');
    return client.post(path, fields);
  }

  async function member(person: CabinetPerson): Promise<Member> {
    const client = englishClient();
    expect((await client.signIn(person.email)).statusCode).toBe(303);
    const { secret } = await enrol(client, () => testApp.clock.now());
    return { person, client, secret };
  }

  function nextCode(who: Member): string {
    testApp.clock.advance(30_000);
    return totpCode(who.secret, testApp.clock.now());
  }

  async function team(): Promise<{ owner: Member; finance: Member; shop: PayoutShop; ownerPerson: CabinetPerson }> {
    const ownerPerson = await createOwner(testApp);
    const shop = { shopId: ownerPerson.shopId, merchantId: ownerPerson.merchantId, key: ownerPerson.apiKey };
    await testApp.fund(shop, 1_000_000_000n);
    await testApp.post(shop, '/v1/test_helpers/crypto/faucet', { usdt: '100000', trx: '100000' });
    const owner = await member(ownerPerson);
    const finance = await member(await addMember(testApp, ownerPerson, 'finance'));
    return { owner, finance, shop, ownerPerson };
  }

  const base = (shop: PayoutShop) => `/cabinet/shops/${shop.shopId}/withdrawals`;

  async function usableAddress(who: Member, shop: PayoutShop, address = recipient()): Promise<string> {
    await who.client.get(`${base(shop)}/addresses`);
    const added = await send(who.client, `${base(shop)}/addresses`, {
      label: 'Treasury',
      address,
      code: nextCode(who),
    });
    expect(added.statusCode, added.body).toBe(303);
    const page = await who.client.get(`${base(shop)}/addresses`);
    const id = new RegExp(`data-address="(wda_[0-9a-z]+)"[^]*?${address}`).exec(page.body)![1]!;
    testApp.clock.advance(COOLDOWN_MS);
    return id;
  }

  async function request(who: Member, shop: PayoutShop, addressId: string, amount: string): Promise<string> {
    await who.client.get(base(shop));
    const key = /name="external_id" value="([^"]+)"/.exec(who.client.lastPage)![1]!;
    const confirmed = await send(who.client, base(shop), { amount, address_id: addressId, note: '', external_id: key });
    expect(confirmed.statusCode, confirmed.body).toBe(303);
    return /\/withdrawals\/(wd_[0-9a-z]+)/.exec(String(confirmed.headers.location))![1]!;
  }

  const statusOf = async (id: string) =>
    (
      await testApp.context.db
        .selectFrom('crypto_withdrawals')
        .select('status')
        .where('id', '=', id)
        .executeTakeFirstOrThrow()
    ).status;

  it('an address removed from the book is no longer paid by a withdrawal that still awaits approval', async () => {
    const { owner, finance, shop } = await team();
    const addressId = await usableAddress(owner, shop);
    const id = await request(finance, shop, addressId, '50');
    expect(await statusOf(id)).toBe('awaiting_approval');
    await owner.client.get(`${base(shop)}/addresses`);
    const removed = await send(owner.client, `${base(shop)}/addresses/${addressId}/remove`, {});
    expect(removed.statusCode, removed.body).toBe(303);
    await owner.client.get(`${base(shop)}/${id}`);
    const approved = await send(owner.client, `${base(shop)}/${id}/approve`, { code: nextCode(owner) });
    // Approving now would send to an address the merchant took out of its book.
    expect(approved.statusCode).toBe(409);
    expect(await statusOf(id)).toBe('awaiting_approval');
  });

  it("another merchant's withdrawal and address are out of reach through one's own shop (page, decisions, removal)", async () => {
    const a = await team();
    const b = await team();
    const addressId = await usableAddress(a.owner, a.shop);
    const id = await request(a.finance, a.shop, addressId, '5');
    const failures: string[] = [];
    await b.owner.client.get(base(b.shop));
    const page = await b.owner.client.get(`${base(b.shop)}/${id}`);
    if (page.statusCode !== 404) failures.push(`page ${page.statusCode}`);
    for (const action of ['approve', 'reject', 'cancel']) {
      const sent = await send(b.owner.client, `${base(b.shop)}/${id}/${action}`, {
        code: nextCode(b.owner),
        reason: 'x',
      });
      if (sent.statusCode !== 404) failures.push(`${action} ${sent.statusCode}`);
    }
    const removed = await send(b.owner.client, `${base(b.shop)}/addresses/${addressId}/remove`, {});
    if (removed.statusCode !== 404) failures.push(`remove ${removed.statusCode}`);
    await b.finance.client.get(base(b.shop));
    const key = /name="external_id" value="([^"]+)"/.exec(b.finance.client.lastPage)?.[1] ?? 'cab_x';
    const borrowed = await send(b.finance.client, base(b.shop), {
      amount: '5',
      address_id: addressId,
      note: '',
      external_id: key,
    });
    if (borrowed.statusCode !== 400) failures.push(`request with A's address ${borrowed.statusCode}`);
    expect(failures).toEqual([]);
    expect(await statusOf(id)).toBe('awaiting_approval');
  });

  it('a TOTP code accepted by one money form is refused by another (address book, then the rule)', async () => {
    const { owner, shop } = await team();
    await owner.client.get(`${base(shop)}/addresses`);
    const code = nextCode(owner);
    const added = await send(owner.client, `${base(shop)}/addresses`, { label: 'Cold', address: recipient(), code });
    expect(added.statusCode, added.body).toBe(303);
    await owner.client.get(base(shop));
    const replayed = await send(owner.client, `${base(shop)}/rule`, { limit: '5', code });
    expect(replayed.statusCode).toBe(400);
    const rules = await testApp.context.db
      .selectFrom('crypto_withdrawal_rules')
      .select('single_person_max_micro')
      .where('merchant_id', '=', shop.merchantId)
      .execute();
    expect(rules).toEqual([]);
  });
});

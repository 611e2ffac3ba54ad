// The set-up the cabinet withdrawal tests share: a merchant with a funded USDT
// balance and a hot wallet that can pay, its members signed in with a second
// factor, an address book entry past its cool-down, and a request sent as the
// form sends it (preview, then confirm with the requester's TOTP code).
import { expect } from 'vitest';
import { recipient, type PayoutShop } from '../crypto/payouts/payout-support.ts';
import type { ChainTestApp } from '../crypto/refunds/refund-support.ts';
import { addMember, CabinetClient, createOwner, type CabinetPerson } from './cabinet-client.ts';
import { enrol, totpCode } from './two-factor-support.ts';

export interface WithdrawalMember {
  readonly person: CabinetPerson;
  readonly client: CabinetClient;
  readonly secret: string;
}

export interface WithdrawalTeam {
  readonly owner: WithdrawalMember;
  readonly finance: WithdrawalMember;
  readonly shop: PayoutShop;
}

export const withdrawalsBase = (shop: PayoutShop): string => `/cabinet/shops/${shop.shopId}/withdrawals`;

/** The form's idempotency key, as the request form on the last page read carries it. */
export function formKeyOn(page: string): string {
  const key = /name="external_id" value="([^"]+)"/.exec(page)?.[1];
  if (!key) throw new Error(`no request form on the page:\n${page.slice(0, 2000)}`);
  return key;
}

/** The helpers, bound to the suite's app (made in its beforeAll, hence a getter) and its cool-down. */
export function withdrawalSupport(app: () => ChainTestApp, cooldownMs: number) {
  /** A client reading the cabinet in English. */
  function englishClient(): CabinetClient {
    const client = new CabinetClient(app().app);
    client.cookies.set('paygate_lang', 'en');
    return client;
  }

  /** Posts a form with the session's CSRF token (read from a page first: an error page has no form). */
  async function send(client: CabinetClient, path: string, fields: Record<string, string> = {}) {
    if (!/name="csrf"/.test(client.lastPage)) await client.get('/cabinet/account');
    return client.post(path, fields);
  }

  /** A member signed in with a second factor enrolled (owners and finance need one for money actions). */
  async function member(person: CabinetPerson): Promise<WithdrawalMember> {
    const client = englishClient();
    expect((await client.signIn(person.email)).statusCode).toBe(303);
    const { secret } = await enrol(client, () => app().clock.now());
    return { person, client, secret };
  }

  /** The next TOTP code: a step later than any accepted before (a code is accepted once). */
  function nextCode(who: WithdrawalMember): string {
    app().clock.advance(30_000);
    return totpCode(who.secret, app().clock.now());
  }

  /** Signs the member in again, password then a TOTP code (a session ends; the clock may pass its end). */
  async function signInAgain(who: WithdrawalMember): Promise<void> {
    expect((await who.client.signIn(who.person.email)).statusCode).toBe(303);
    await who.client.get('/cabinet/sign-in/two-factor');
    const completed = await who.client.post('/cabinet/sign-in/two-factor', { code: nextCode(who) });
    expect(completed.statusCode, completed.body).toBe(303);
  }

  /** A merchant with a funded USDT balance and a hot wallet that can pay, its owner and a finance member. */
  async function team(): Promise<WithdrawalTeam> {
    const ownerPerson = await createOwner(app());
    const shop = { shopId: ownerPerson.shopId, merchantId: ownerPerson.merchantId, key: ownerPerson.apiKey };
    await app().fund(shop, 1_000_000_000n);
    await app().post(shop, '/v1/test_helpers/crypto/faucet', { usdt: '100000', trx: '100000' });
    const owner = await member(ownerPerson);
    const finance = await member(await addMember(app(), ownerPerson, 'finance'));
    return { owner, finance, shop };
  }

  /** Adds an address through the book's form; returns its id (usable once the cool-down passes). */
  async function addAddress(who: WithdrawalMember, shop: PayoutShop, address = recipient()): Promise<string> {
    const base = withdrawalsBase(shop);
    await who.client.get(`${base}/addresses`);
    const added = await send(who.client, `${base}/addresses`, { label: 'Treasury', address, code: nextCode(who) });
    expect(added.statusCode, added.body).toBe(303);
    const page = await who.client.get(`${base}/addresses`);
    const id = new RegExp(`data-address="(wda_[0-9a-z]+)"[^]*?${address}`).exec(page.body)?.[1];
    expect(id).toBeDefined();
    return id!;
  }

  /** An address of the book past its cool-down (the injected clock is moved past it). */
  async function usableAddress(who: WithdrawalMember, shop: PayoutShop, address = recipient()): Promise<string> {
    const id = await addAddress(who, shop, address);
    app().clock.advance(cooldownMs);
    return id;
  }

  /** Preview then confirm with the requester's code, as the form does; returns the new withdrawal's id. */
  async function request(who: WithdrawalMember, shop: PayoutShop, addressId: string, amount: string): Promise<string> {
    const base = withdrawalsBase(shop);
    const list = await who.client.get(base);
    expect(list.statusCode, String(list.headers.location)).toBe(200);
    const externalId = formKeyOn(who.client.lastPage);
    const preview = await send(who.client, `${base}/preview`, { amount, address_id: addressId, note: 'rent' });
    expect(preview.statusCode, preview.body).toBe(200);
    const confirmed = await send(who.client, base, {
      amount,
      address_id: addressId,
      note: 'rent',
      external_id: externalId,
      code: nextCode(who),
    });
    expect(confirmed.statusCode, confirmed.body).toBe(303);
    return /\/withdrawals\/(wd_[0-9a-z]+)/.exec(String(confirmed.headers.location))![1]!;
  }

  async function statusOf(id: string): Promise<string> {
    const row = await app()
      .context.db.selectFrom('crypto_withdrawals')
      .select('status')
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    return row.status;
  }

  async function withdrawalCount(shop: PayoutShop): Promise<number> {
    const rows = await app()
      .context.db.selectFrom('crypto_withdrawals')
      .select('id')
      .where('shop_id', '=', shop.shopId)
      .execute();
    return rows.length;
  }

  return {
    englishClient,
    send,
    member,
    nextCode,
    signInAgain,
    team,
    addAddress,
    usableAddress,
    request,
    statusOf,
    withdrawalCount,
  };
}

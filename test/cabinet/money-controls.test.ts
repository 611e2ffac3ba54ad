// The controls around money leaving the merchant, tried as an attacker with a
// stolen or a rogue member's session: an address taken out of the book is not
// paid by a request that still waits; another merchant's withdrawals and addresses are out
// of reach; a TOTP code works in one money form only; the single-person limit is a rolling
// 24 h budget per requester (splitting does not escape it, nor do two requests at once);
// a request is confirmed with the requester's own code, and a confirm sent twice makes one.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { backends } from '../support/databases.ts';
import {
  approveWithdrawal,
  createWithdrawal,
  SINGLE_PERSON_WINDOW_MS,
  type CreateWithdrawalInput,
} from '../../src/crypto/withdrawals/withdrawal-service.ts';
import { recipient, type PayoutShop } from '../crypto/payouts/payout-support.ts';
import { createChainTestApp, type ChainTestApp } from '../crypto/refunds/refund-support.ts';
import { totpCode } from './two-factor-support.ts';
import { formKeyOn, withdrawalsBase, withdrawalSupport, type WithdrawalMember } from './withdrawal-support.ts';

const COOLDOWN_MS = 10 * 60_000;

describe.each(backends)('cabinet money controls on %s', (backend) => {
  let testApp: ChainTestApp;
  beforeAll(async () => {
    testApp = await createChainTestApp(backend, { config: { withdrawalAddressCooldownMs: COOLDOWN_MS } });
  });
  afterEach(() => testApp.expectLedgerGreen());
  afterAll(() => testApp?.close());

  const { send, team, usableAddress, request, statusOf, nextCode, signInAgain, withdrawalCount } = withdrawalSupport(
    () => testApp,
    COOLDOWN_MS,
  );
  const base = withdrawalsBase;

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
    const borrowed = await send(b.finance.client, base(b.shop), {
      amount: '5',
      address_id: addressId,
      note: '',
      // B's book is empty, so its page has no form: any key will do.
      external_id: 'cab_borrowed',
      code: nextCode(b.finance),
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

  /** The owner sets the single-person limit through the rule form. */
  async function setLimit(owner: WithdrawalMember, shop: PayoutShop, limit: string): Promise<void> {
    await owner.client.get(base(shop));
    const set = await send(owner.client, `${base(shop)}/rule`, { limit, code: nextCode(owner) });
    expect(set.statusCode, set.body).toBe(303);
  }

  it('the single-person limit counts what one requester sent alone in 24 h: a split request waits for a second person', async () => {
    const { owner, finance, shop } = await team();
    const addressId = await usableAddress(owner, shop);
    await setLimit(owner, shop, '10');
    expect(await statusOf(await request(finance, shop, addressId, '6'))).toBe('pending');
    expect(await statusOf(await request(finance, shop, addressId, '4'))).toBe('pending');
    // 6 + 4 spent the 10: the preview says so, and the next slice waits however small.
    await finance.client.get(base(shop));
    const preview = await send(finance.client, `${base(shop)}/preview`, { amount: '0.01', address_id: addressId });
    expect(preview.body).toContain('Above the single-person limit');
    const slice = await request(finance, shop, addressId, '0.01');
    expect(await statusOf(slice)).toBe('awaiting_approval');
    // A waiting request spends nothing, and the budget is each requester's own.
    expect(await statusOf(await request(owner, shop, addressId, '10'))).toBe('pending');
    // 24 h after the first two, finance's budget is free again (their session ended meanwhile).
    testApp.clock.advance(SINGLE_PERSON_WINDOW_MS);
    await signInAgain(finance);
    expect(await statusOf(await request(finance, shop, addressId, '10'))).toBe('pending');
  });

  it('two requests at once that together exceed the limit: only one is sent alone, the other waits', async () => {
    const { owner, finance, shop } = await team();
    await setLimit(owner, shop, '10');
    const deps = { ...testApp.context, chain: testApp.crypto.chain };
    const asked = (externalId: string): CreateWithdrawalInput => ({
      merchantId: shop.merchantId,
      shopId: shop.shopId,
      externalId,
      amount: '6',
      address: recipient(),
      requestedBy: finance.person.email,
      requestedByUserId: finance.person.userId,
    });
    const made = await Promise.all([createWithdrawal(deps, asked('race-a')), createWithdrawal(deps, asked('race-b'))]);
    expect(made.map((view) => view.status).sort()).toEqual(['awaiting_approval', 'pending']);
  });

  it('a failed withdrawal gives its amount back to the budget; one a second person approved never counted', async () => {
    const { owner, finance, shop } = await team();
    await setLimit(owner, shop, '10');
    const deps = { ...testApp.context, chain: testApp.crypto.chain };
    const asked = (externalId: string, amount: string, address = recipient()): CreateWithdrawalInput => ({
      merchantId: shop.merchantId,
      shopId: shop.shopId,
      externalId,
      amount,
      address,
      requestedBy: finance.person.email,
      requestedByUserId: finance.person.userId,
    });
    const reverting = recipient();
    await testApp.post(shop, '/v1/test_helpers/crypto/next_transfer_outcome', {
      address: reverting,
      outcome: 'revert',
    });
    const reverted = await createWithdrawal(deps, asked('budget-1', '8', reverting));
    expect(reverted.status).toBe('pending');
    await testApp.carryToFinal(shop);
    expect(await statusOf(reverted.withdrawal_id)).toBe('failed');
    expect((await createWithdrawal(deps, asked('budget-2', '8'))).status).toBe('pending');
    const approved = await createWithdrawal(deps, asked('budget-3', '5'));
    expect(approved.status).toBe('awaiting_approval');
    const person = { name: owner.person.email, userId: owner.person.userId };
    expect((await approveWithdrawal(deps, approved.withdrawal_id, person)).status).toBe('pending');
    // 8 sent alone (the failed 8 and the approved 5 are not finance's alone): 2 more fit exactly.
    expect((await createWithdrawal(deps, asked('budget-4', '2'))).status).toBe('pending');
    expect((await createWithdrawal(deps, asked('budget-5', '0.01'))).status).toBe('awaiting_approval');
  });

  it('the confirm asks for the requester’s TOTP code: missing or wrong, 400 and nothing created or reserved', async () => {
    const { owner, finance, shop } = await team();
    const addressId = await usableAddress(owner, shop);
    await finance.client.get(base(shop));
    const form = { amount: '3', address_id: addressId, note: '', external_id: formKeyOn(finance.client.lastPage) };
    const before = await testApp.balance(shop);
    const missing = await send(finance.client, base(shop), form);
    expect(missing.statusCode).toBe(400);
    expect(missing.body).toContain('Type the 6-digit code');
    // A code of ten minutes ago is outside the accepted steps: wrong.
    const stale = totpCode(finance.secret, new Date(testApp.clock.now().getTime() - 10 * 60_000));
    const wrong = await send(finance.client, base(shop), { ...form, code: stale });
    expect(wrong.statusCode).toBe(400);
    expect(wrong.body).toContain('The code is wrong');
    // Another member's code is not the requester's.
    const borrowed = await send(finance.client, base(shop), { ...form, code: nextCode(owner) });
    expect(borrowed.statusCode).toBe(400);
    expect(await withdrawalCount(shop)).toBe(0);
    expect(await testApp.balance(shop)).toEqual(before);
    const confirmed = await send(finance.client, base(shop), { ...form, code: nextCode(finance) });
    expect(confirmed.statusCode, confirmed.body).toBe(303);
    expect(await withdrawalCount(shop)).toBe(1);
  });

  it('a confirm sent twice at once, then retried, makes one withdrawal and every answer that succeeds names it', async () => {
    const { owner, finance, shop } = await team();
    const addressId = await usableAddress(owner, shop);
    await finance.client.get(base(shop));
    const form = {
      amount: '2',
      address_id: addressId,
      note: '',
      external_id: formKeyOn(finance.client.lastPage),
      code: nextCode(finance),
    };
    const twins = await Promise.all([send(finance.client, base(shop), form), send(finance.client, base(shop), form)]);
    const retried = await send(finance.client, base(shop), form);
    expect(await withdrawalCount(shop)).toBe(1);
    const [row] = await testApp.context.db
      .selectFrom('crypto_withdrawals')
      .select('id')
      .where('shop_id', '=', shop.shopId)
      .execute();
    const location = `${base(shop)}/${row!.id}?done=requested`;
    // The retry comes after the first commit: it is answered with the withdrawal, not with the spent code.
    expect(retried.statusCode).toBe(303);
    expect(retried.headers.location).toBe(location);
    // Of the twins, one made it; the other answered it too, or (when it checked its code before the
    // first committed) refused the spent code — never a second withdrawal.
    expect(twins.filter((sent) => sent.statusCode === 303).length).toBeGreaterThanOrEqual(1);
    for (const sent of twins) {
      if (sent.statusCode === 303) expect(sent.headers.location).toBe(location);
      else expect(sent.statusCode).toBe(400);
    }
  });
});

// Cabinet withdrawals through the real app on the simulated chain: the address
// book's cool-down (refused inside it, accepted once the injected clock passes
// it; the owners mailed through a real SMTP receiver, the addition audited), the
// request previewed, confirmed with the requester's TOTP code and reserved once
// however often the form is sent, a second
// person's approval with a TOTP code (never the requester's own, never a replayed
// code), rejection and cancellation voiding the reservation, the single-person
// limit an owner sets, a viewer kept to reading, and the operator's CLI approval
// under the same rule.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  approveWithdrawal,
  createWithdrawal,
  getWithdrawal,
  setWithdrawalApproval,
} from '../../src/crypto/withdrawals/withdrawal-service.ts';
import { AppError } from '../../src/errors.ts';
import { backends } from '../support/databases.ts';
import { startSmtpReceiver, type SmtpReceiver } from '../support/smtp-receiver.ts';
import { micro, recipient } from '../crypto/payouts/payout-support.ts';
import { createChainTestApp, type ChainTestApp } from '../crypto/refunds/refund-support.ts';
import { addMember } from './cabinet-client.ts';
import { formKeyOn, withdrawalsBase, withdrawalSupport } from './withdrawal-support.ts';

const COOLDOWN_MS = 10 * 60_000;

describe.each(backends)('cabinet withdrawals on %s', (backend) => {
  let testApp: ChainTestApp;
  let smtp: SmtpReceiver;

  beforeAll(async () => {
    smtp = await startSmtpReceiver();
    testApp = await createChainTestApp(backend, {
      config: { smtpUrl: smtp.url, withdrawalAddressCooldownMs: COOLDOWN_MS },
    });
  });
  afterEach(() => testApp.expectLedgerGreen());
  afterAll(async () => {
    await testApp?.close();
    await smtp?.close();
  });

  const { englishClient, send, team, addAddress, usableAddress, request, nextCode, withdrawalCount } =
    withdrawalSupport(() => testApp, COOLDOWN_MS);
  const base = withdrawalsBase;

  it('an address inside its cool-down is refused and changes nothing; past it the request is previewed and reserved once', async () => {
    const { owner, finance, shop } = await team();
    const address = recipient();
    const addressId = await addAddress(finance, shop, address);

    // The owner is mailed and the audit log has the addition.
    const mail = await smtp.next();
    expect(mail.to).toEqual([owner.person.email]);
    expect(mail.raw).toContain(address);
    const audited = await testApp.context.db
      .selectFrom('audit_events')
      .select(['actor_id', 'details'])
      .where('merchant_id', '=', shop.merchantId)
      .where('action', '=', 'withdrawal_address.added')
      .execute();
    expect(audited).toHaveLength(1);
    expect(audited[0]!.actor_id).toBe(finance.person.userId);

    // Inside the cool-down: not offered, and a POST naming it is refused with the reason.
    const page = await finance.client.get(base(shop));
    expect(page.body).not.toContain(`value="${addressId}"`);
    const before = await testApp.balance(shop);
    for (const path of [`${base(shop)}/preview`, base(shop)]) {
      const refused = await send(finance.client, path, {
        amount: '10',
        address_id: addressId,
        note: '',
        external_id: 'early-1',
      });
      expect(refused.statusCode).toBe(400);
      expect(refused.body).toContain('cool-down');
    }
    expect(await withdrawalCount(shop)).toBe(0);
    expect(await testApp.balance(shop)).toEqual(before);

    // Past it: offered, previewed with the fee, and the confirm reserves total_debit once, however often sent.
    testApp.clock.advance(COOLDOWN_MS);
    await finance.client.get(base(shop));
    expect(finance.client.lastPage).toContain(`value="${addressId}"`);
    const externalId = formKeyOn(finance.client.lastPage);
    const preview = await send(finance.client, `${base(shop)}/preview`, {
      amount: '10.5',
      address_id: addressId,
      note: 'rent',
    });
    expect(preview.statusCode).toBe(200);
    const total = /id="total-debit">([\d.]+) USDT/.exec(preview.body)![1]!;
    expect(micro(total)).toBeGreaterThan(10_500_000n);
    expect(await withdrawalCount(shop)).toBe(0);
    const form = {
      amount: '10.5',
      address_id: addressId,
      note: 'rent',
      external_id: externalId,
      code: nextCode(finance),
    };
    const first = await send(finance.client, base(shop), form);
    const second = await send(finance.client, base(shop), form);
    expect(first.statusCode).toBe(303);
    expect(second.headers.location).toBe(first.headers.location);
    expect(await withdrawalCount(shop)).toBe(1);
    expect((await testApp.balance(shop)).available).toBe(before.available - micro(total));
    const id = /(wd_[0-9a-z]+)/.exec(String(first.headers.location))![1]!;
    expect(await getWithdrawal(testApp.context.db, id)).toMatchObject({
      status: 'awaiting_approval',
      note: 'rent',
      recipient_address: address,
      requested_by_user_id: finance.person.userId,
    });
    const detail = await finance.client.get(`${base(shop)}/${id}`);
    expect(detail.statusCode).toBe(200);
    expect(detail.body).toContain('another member must approve it');
  });

  it('the requester cannot approve their own (403, nothing changes); another member approves with a TOTP code', async () => {
    const { owner, finance, shop } = await team();
    const addressId = await usableAddress(finance, shop);
    const id = await request(finance, shop, addressId, '12');
    await finance.client.get(`${base(shop)}/${id}`);
    const own = await send(finance.client, `${base(shop)}/${id}/approve`, { code: nextCode(finance) });
    expect(own.statusCode).toBe(403);
    expect((await getWithdrawal(testApp.context.db, id)).status).toBe('awaiting_approval');

    await owner.client.get(`${base(shop)}/${id}`);
    const noCode = await send(owner.client, `${base(shop)}/${id}/approve`, { code: '' });
    expect(noCode.statusCode).toBe(400);
    expect((await getWithdrawal(testApp.context.db, id)).status).toBe('awaiting_approval');
    const approved = await send(owner.client, `${base(shop)}/${id}/approve`, { code: nextCode(owner) });
    expect(approved.statusCode, approved.body).toBe(303);
    expect(await getWithdrawal(testApp.context.db, id)).toMatchObject({
      status: 'pending',
      decision: { by: owner.person.email, user_id: owner.person.userId, approved: true },
    });
  });

  it('a TOTP code already accepted is refused when replayed (400, nothing changes)', async () => {
    const { owner, finance, shop } = await team();
    const addressId = await usableAddress(finance, shop);
    const id = await request(finance, shop, addressId, '3');
    const code = nextCode(owner);
    await owner.client.get(`${base(shop)}/addresses`);
    const added = await send(owner.client, `${base(shop)}/addresses`, { label: 'Cold', address: recipient(), code });
    expect(added.statusCode).toBe(303);
    await owner.client.get(`${base(shop)}/${id}`);
    const replayed = await send(owner.client, `${base(shop)}/${id}/approve`, { code });
    expect(replayed.statusCode).toBe(400);
    expect(replayed.body).toContain('already used');
    expect((await getWithdrawal(testApp.context.db, id)).status).toBe('awaiting_approval');
  });

  it('a viewer sees the balance and the list but no request form, and its POSTs are 403', async () => {
    const { finance, shop } = await team();
    const addressId = await usableAddress(finance, shop);
    const id = await request(finance, shop, addressId, '2');
    const viewerPerson = await addMember(
      testApp,
      { ...finance.person, shopId: shop.shopId, merchantId: shop.merchantId },
      'viewer',
    );
    const viewer = englishClient();
    expect((await viewer.signIn(viewerPerson.email)).statusCode).toBe(303);
    const page = await viewer.get(base(shop));
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('id="usdt-available"');
    expect(page.body).toContain(id);
    expect(page.body).not.toContain('id="withdrawal-request"');
    expect((await viewer.get(`${base(shop)}/addresses`)).statusCode).toBe(200);
    expect((await viewer.get(`${base(shop)}/${id}`)).body).not.toContain('/approve"');
    const before = await withdrawalCount(shop);
    for (const [path, fields] of [
      [base(shop), { amount: '1', address_id: addressId, external_id: 'viewer-1' }],
      [`${base(shop)}/preview`, { amount: '1', address_id: addressId }],
      [`${base(shop)}/addresses`, { label: 'x', address: recipient(), code: '000000' }],
      [`${base(shop)}/${id}/approve`, { code: '000000' }],
      [`${base(shop)}/${id}/cancel`, {}],
    ] as const) {
      expect((await send(viewer, path, fields)).statusCode, path).toBe(403);
    }
    expect(await withdrawalCount(shop)).toBe(before);
    expect((await getWithdrawal(testApp.context.db, id)).status).toBe('awaiting_approval');
  });

  it('reject and cancel void the reservation (available restored) and report the final status once', async () => {
    const { owner, finance, shop } = await team();
    const addressId = await usableAddress(finance, shop);
    const before = await testApp.balance(shop);
    const rejectedId = await request(finance, shop, addressId, '7');
    const cancelledId = await request(finance, shop, addressId, '8');
    expect((await testApp.balance(shop)).available).toBeLessThan(before.available);

    await owner.client.get(`${base(shop)}/${rejectedId}`);
    const rejected = await send(owner.client, `${base(shop)}/${rejectedId}/reject`, { reason: 'unknown address' });
    expect(rejected.statusCode).toBe(303);
    await finance.client.get(`${base(shop)}/${cancelledId}`);
    const cancelled = await send(finance.client, `${base(shop)}/${cancelledId}/cancel`);
    expect(cancelled.statusCode).toBe(303);

    expect((await testApp.balance(shop)).available).toBe(before.available);
    const events = async (id: string) => testApp.eventsOf(shop, 'cabinet.withdrawal.completed', 'withdrawal_id', id);
    expect(await events(rejectedId)).toEqual([
      expect.objectContaining({
        status: 'rejected',
        decision: expect.objectContaining({ by: owner.person.email, reason: 'unknown address' }),
      }),
    ]);
    expect(await events(cancelledId)).toEqual([
      expect.objectContaining({ status: 'cancelled', decision: expect.objectContaining({ approved: false }) }),
    ]);
    // Final: no second decision.
    await owner.client.get(`${base(shop)}/${cancelledId}`);
    expect(
      (await send(owner.client, `${base(shop)}/${cancelledId}/approve`, { code: nextCode(owner) })).statusCode,
    ).toBe(409);
  });

  it('the single-person limit: only an owner sets it (with TOTP, audited); up to it one person sends at once', async () => {
    const { owner, finance, shop } = await team();
    const addressId = await usableAddress(finance, shop);
    await finance.client.get(base(shop));
    expect(finance.client.lastPage).not.toContain('name="limit"');
    expect((await send(finance.client, `${base(shop)}/rule`, { limit: '5', code: nextCode(finance) })).statusCode).toBe(
      403,
    );
    await owner.client.get(base(shop));
    expect((await send(owner.client, `${base(shop)}/rule`, { limit: '5', code: '' })).statusCode).toBe(400);
    const set = await send(owner.client, `${base(shop)}/rule`, { limit: '5', code: nextCode(owner) });
    expect(set.statusCode).toBe(303);
    expect((await owner.client.get(base(shop))).body).toContain('up to 5 USDT');

    const small = await request(finance, shop, addressId, '5');
    const large = await request(finance, shop, addressId, '5.01');
    expect((await getWithdrawal(testApp.context.db, small)).status).toBe('pending');
    expect((await getWithdrawal(testApp.context.db, large)).status).toBe('awaiting_approval');
    const rule = await testApp.context.db
      .selectFrom('audit_events')
      .select(['actor_id', 'details'])
      .where('merchant_id', '=', shop.merchantId)
      .where('action', '=', 'withdrawal.rule_set')
      .execute();
    expect(rule).toHaveLength(1);
    expect(rule[0]!.actor_id).toBe(owner.person.userId);
  });

  it('the operator (CLI) approves a member’s request as an operator, never counted as the requester; its own request it cannot', async () => {
    const { finance, shop } = await team();
    const addressId = await usableAddress(finance, shop);
    const id = await request(finance, shop, addressId, '4');
    const approved = await approveWithdrawal(testApp.context, id, 'cli:alice');
    expect(approved).toMatchObject({ status: 'pending', decision: { by: 'cli:alice', user_id: null } });
    const audit = await testApp.context.db
      .selectFrom('audit_events')
      .select(['actor_kind', 'actor_label'])
      .where('target', '=', id)
      .where('action', '=', 'withdrawal.approved')
      .executeTakeFirstOrThrow();
    expect(audit).toEqual({ actor_kind: 'operator', actor_label: 'cli:alice' });

    // An operator's own request (CLI create) waits under the same rule and needs another person.
    await setWithdrawalApproval(testApp.context, shop.shopId, true);
    const own = await createWithdrawal(
      { ...testApp.context, chain: testApp.crypto.chain },
      {
        merchantId: shop.merchantId,
        shopId: shop.shopId,
        externalId: 'cli-own-1',
        amount: '1',
        address: recipient(),
        requestedBy: 'cli:alice',
      },
    );
    expect(own.status).toBe('awaiting_approval');
    const refused = await approveWithdrawal(testApp.context, own.withdrawal_id, 'CLI:Alice').catch((error) => error);
    expect(refused).toBeInstanceOf(AppError);
    expect((refused as AppError).code).toBe('forbidden');
    expect((await approveWithdrawal(testApp.context, own.withdrawal_id, 'cli:bob')).status).toBe('pending');
  });
});

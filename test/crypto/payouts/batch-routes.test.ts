// POST/GET /v1/crypto/payouts/batch through the real app: every item validated
// first (the message names the first bad item, index 499 included), accepted
// whole or not at all, item external_ids unique in the batch and against the
// shop's payouts, idempotency by the batch's external_id, and another shop's batch.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backends } from '../../support/databases.ts';
import {
  createPayoutTestApp,
  externalId,
  micro,
  payoutBody,
  recipient,
  type PayoutShop,
  type PayoutTestApp,
} from './payout-support.ts';

describe.each(backends)('batch payout routes on %s', (backend) => {
  let testApp: PayoutTestApp;
  let shop: PayoutShop;

  beforeAll(async () => {
    testApp = await createPayoutTestApp(backend);
    shop = await testApp.payoutShop();
    await testApp.fund(shop, 100_000_000_000n);
  });
  afterAll(async () => {
    await testApp.expectLedgerGreen();
    await testApp.close();
  });

  const items = (count: number, amount = '1') =>
    Array.from({ length: count }, () => ({ external_id: externalId('item'), amount, address: recipient() }));
  const batchBody = <T>(payouts: T[], overrides: Record<string, unknown> = {}) => ({
    external_id: externalId('batch'),
    network: 'TRC20',
    payouts,
    ...overrides,
  });
  const create = (body: unknown, key = shop.key) => testApp.call(key, 'POST', '/v1/crypto/payouts/batch', body);

  async function expectNothingStored(
    body: { payouts: { external_id: string }[] },
    before: Awaited<ReturnType<PayoutTestApp['balance']>>,
  ) {
    expect(await testApp.balance(shop)).toEqual(before);
    for (const item of [body.payouts[0]!, body.payouts.at(-1)!].filter((candidate) => candidate.external_id !== '')) {
      expect(
        (await testApp.call(shop.key, 'GET', `/v1/crypto/payouts?external_id=${item.external_id}`)).json().data,
      ).toEqual([]);
    }
  }

  it('500 items: 201 with every item pending, each total_debit reserved, in the order given', async () => {
    const before = await testApp.balance(shop);
    const body = batchBody(items(500));
    const response = await create(body);
    expect(response.statusCode, response.body.slice(0, 500)).toBe(201);
    const batch = response.json();
    expect(batch).toMatchObject({
      external_id: body.external_id,
      status: 'pending',
      network: 'TRC20',
      asset: 'USDT',
      item_count: 500,
      completed_at: null,
    });
    expect(batch.batch_id).toMatch(/^pob_/);
    expect(batch.counts).toEqual({ pending: 500, processing: 0, completed: 0, failed: 0 });
    expect(batch.payouts.map((payout: { external_id: string }) => payout.external_id)).toEqual(
      body.payouts.map((item) => item.external_id),
    );
    const sum = batch.payouts.reduce(
      (total: bigint, payout: { total_debit: string }) => total + micro(payout.total_debit),
      0n,
    );
    expect(micro(batch.total_debit)).toBe(sum);
    expect(before.available - (await testApp.balance(shop)).available).toBe(sum);
    const read = await testApp.call(shop.key, 'GET', `/v1/crypto/payouts/batch/${batch.batch_id}`);
    expect(read.statusCode).toBe(200);
    expect(read.json()).toEqual(batch);
    const item = await testApp.call(shop.key, 'GET', `/v1/crypto/payouts/${batch.payouts[499].payout_id}`);
    expect(item.json()).toMatchObject({ batch_id: batch.batch_id, status: 'pending' });
  });

  it('several items to one recipient without USDT: the first is quoted for a new holder, the rest for a holder', async () => {
    const fresh = recipient();
    const other = recipient();
    const payouts = [fresh, other, fresh, fresh].map((address) => ({
      external_id: externalId('item'),
      amount: '2',
      address,
    }));
    const response = await create(batchBody(payouts));
    expect(response.statusCode, response.body.slice(0, 300)).toBe(201);
    const fees = response.json().payouts.map((payout: { network_fee: string }) => micro(payout.network_fee));
    // 130,285 energy for the first transfer to each new holder, 64,285 for the later ones to it.
    expect(fees[0]).toBe(fees[1]);
    expect(fees[2]).toBe(fees[3]);
    expect(fees[2]).toBeLessThan(fees[0]);
    const single = await testApp.call(shop.key, 'POST', '/v1/crypto/payouts/quote', {
      network: 'TRC20',
      amount: '2',
      address: recipient(),
    });
    expect(micro(single.json().network_fee)).toBe(fees[0]);
  });

  it.each([
    ['amount', { amount: '1.001' }],
    ['amount', { amount: '1.010' }],
    ['amount', { amount: 1 }],
    ['address', { address: 'Tnotanaddress' }],
    ['external_id', { external_id: '' }],
  ])('a bad %s at index 499 refuses the whole batch with 400 naming it, storing nothing', async (field, change) => {
    const before = await testApp.balance(shop);
    const payouts = items(500);
    payouts[499] = { ...payouts[499]!, ...change } as (typeof payouts)[number];
    const body = batchBody(payouts);
    const response = await create(body);
    expect(response.statusCode).toBe(400);
    expect(response.json().error).toBe('invalid_request');
    expect(response.json().message).toMatch(new RegExp(`payouts(\\[499\\]|\\.499)\\.${field}`));
    await expectNothingStored(body, before);
  });

  it('an item paying a deposit address of the gateway (at index 7) refuses the whole batch naming payouts[7].address, storing nothing', async () => {
    const before = await testApp.balance(shop);
    const invoice = (
      await testApp.call(shop.key, 'POST', '/v1/crypto/invoices', {
        external_id: externalId('inv'),
        amount: '3',
        network: 'TRC20',
      })
    ).json();
    const payouts = items(20);
    payouts[7] = { ...payouts[7]!, address: invoice.address };
    payouts[12] = { ...payouts[12]!, address: invoice.address };
    const body = batchBody(payouts);
    const response = await create(body);
    expect(response.statusCode, response.body).toBe(400);
    expect(response.json().error).toBe('invalid_request');
    expect(response.json().message).toContain('payouts[7].address');
    expect(response.json().message).toContain('deposit address of this gateway');
    await expectNothingStored(body, before);
  });

  it('an item outside the shop’s limits: 400 amount_not_supported naming it, nothing stored', async () => {
    const before = await testApp.balance(shop);
    const payouts = items(3);
    payouts[2] = { ...payouts[2]!, amount: '0.5' };
    const body = batchBody(payouts);
    const response = await create(body);
    expect(response.statusCode).toBe(400);
    expect(response.json()).toMatchObject({ error: 'amount_not_supported' });
    expect(response.json().message).toContain('payouts[2].amount');
    await expectNothingStored(body, before);
  });

  it('0 and 501 items, a bad network, a repeated item external_id: 400', async () => {
    for (const [body, field] of [
      [batchBody([]), 'payouts'],
      [batchBody(items(501)), 'payouts'],
      [batchBody(items(2), { network: 'ERC20' }), 'network'],
      [batchBody(items(1), { external_id: '' }), 'external_id'],
    ] as const) {
      const response = await create(body);
      expect(response.statusCode, JSON.stringify(body).slice(0, 100)).toBe(400);
      expect(response.json().message).toContain(field);
    }
    const repeated = items(3);
    repeated[2] = { ...repeated[2]!, external_id: repeated[0]!.external_id };
    const response = await create(batchBody(repeated));
    expect(response.statusCode).toBe(400);
    expect(response.json().message).toContain('payouts[2].external_id repeats payouts[0].external_id');
  });

  it('an item external_id that a payout of the shop already holds: 409 duplicate_external_id naming it, nothing stored', async () => {
    const single = await testApp.call(shop.key, 'POST', '/v1/crypto/payouts', payoutBody());
    expect(single.statusCode).toBe(201);
    const before = await testApp.balance(shop);
    const payouts = items(4);
    payouts[3] = { ...payouts[3]!, external_id: single.json().external_id };
    const body = batchBody(payouts);
    const response = await create(body);
    expect(response.statusCode).toBe(409);
    expect(response.json().error).toBe('duplicate_external_id');
    expect(response.json().message).toContain('payouts[3].external_id');
    expect(await testApp.balance(shop)).toEqual(before);
    expect(
      (await testApp.call(shop.key, 'GET', `/v1/crypto/payouts?external_id=${payouts[0]!.external_id}`)).json().data,
    ).toEqual([]);
  });

  it('a single payout with the external_id of a batch item: 409 duplicate_external_id', async () => {
    const batch = (await create(batchBody(items(2)))).json();
    const response = await testApp.call(
      shop.key,
      'POST',
      '/v1/crypto/payouts',
      payoutBody({ external_id: batch.payouts[1].external_id }),
    );
    expect(response.statusCode).toBe(409);
    expect(response.json().error).toBe('duplicate_external_id');
  });

  it('not enough balance for the sum: 400 insufficient_funds, no item stored', async () => {
    const poor = await testApp.payoutShop();
    await testApp.fund(poor, 50_000_000n);
    const body = batchBody(items(10, '5'));
    const response = await create(body, poor.key);
    expect(response.statusCode).toBe(400);
    expect(response.json().error).toBe('insufficient_funds');
    expect((await testApp.call(poor.key, 'GET', '/v1/crypto/payouts')).json().data).toEqual([]);
    expect((await testApp.balance(poor)).available).toBe(50_000_000n);
  });

  it('idempotent by the batch external_id: the same items → 200 and the same batch; other items → 409', async () => {
    const body = batchBody(items(3));
    const first = await create(body);
    expect(first.statusCode).toBe(201);
    const before = await testApp.balance(shop);
    const again = await create(body);
    expect(again.statusCode).toBe(200);
    expect(again.json()).toEqual(first.json());
    const changed = await create({
      ...body,
      payouts: [...body.payouts.slice(0, 2), { ...body.payouts[2]!, amount: '2' }],
    });
    expect(changed.statusCode).toBe(409);
    expect(changed.json().error).toBe('duplicate_external_id');
    expect(await testApp.balance(shop)).toEqual(before);
  });

  it('another shop’s batch, or an unknown id, is 404', async () => {
    const batch = (await create(batchBody(items(1)))).json();
    const other = await testApp.payoutShop();
    expect((await testApp.call(other.key, 'GET', `/v1/crypto/payouts/batch/${batch.batch_id}`)).statusCode).toBe(404);
    expect(
      (await testApp.call(shop.key, 'GET', '/v1/crypto/payouts/batch/pob_00000000000000000000000000')).statusCode,
    ).toBe(404);
  });
});

// Concurrent payouts share their creating statements
// (src/crypto/payouts/creation-batches.ts): through the real app on both
// backends, every request still gets its own answer — 201 with its reservation,
// 400 insufficient_funds with nothing stored beside payouts that were written in
// the same statement, 409 for a duplicate external_id whose statement then runs
// again payout by payout — and every written payout has its outgoing transfer,
// idempotency record and webhook event; one merchant's payouts of one statement
// are taken while its balance affords them. The ledger stays green.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { payoutCreationsStatement, type PayoutCreation } from '../../../src/crypto/payouts/creation-batches.ts';
import { preparedStatementName } from '../../../src/db/prepared-statements.ts';
import { backends } from '../../support/databases.ts';
import { createPayoutTestApp, micro, payoutBody, type PayoutShop, type PayoutTestApp } from './payout-support.ts';

describe.each(backends)('payouts created together on %s', (backend) => {
  let testApp: PayoutTestApp;
  let shops: PayoutShop[];
  let poor: PayoutShop;

  beforeAll(async () => {
    testApp = await createPayoutTestApp(backend);
    shops = await Promise.all(Array.from({ length: 12 }, () => testApp.payoutShop()));
    for (const shop of shops) await testApp.fund(shop, 100_000_000n);
    poor = await testApp.payoutShop();
    await testApp.fund(poor, 1_000_000n);
  });
  afterAll(async () => {
    await testApp.expectLedgerGreen();
    await testApp.close();
  });

  const create = (shop: PayoutShop, body: unknown) => testApp.call(shop.key, 'POST', '/v1/crypto/payouts', body);

  it('many merchants at once: each answered on its own, fewer statements than payouts, every written payout whole', async () => {
    const bodies = shops.map(() => payoutBody({ amount: '10' }));
    const poorBody = payoutBody({ amount: '10' });
    const poorBefore = await testApp.balance(poor);
    const [poorResponse, ...responses] = await Promise.all([
      create(poor, poorBody),
      ...shops.map((shop, index) => create(shop, bodies[index])),
    ]);

    expect(poorResponse!.statusCode, poorResponse!.body).toBe(400);
    expect(poorResponse!.json().error).toBe('insufficient_funds');
    expect(await testApp.balance(poor)).toEqual(poorBefore);
    expect((await testApp.call(poor.key, 'GET', '/v1/crypto/payouts')).json().data).toEqual([]);

    const { db } = testApp.context;
    for (const [index, response] of responses.entries()) {
      expect(response.statusCode, response.body).toBe(201);
      const payout = response.json();
      expect(payout.external_id).toBe(bodies[index]!.external_id);
      expect(payout.recipient_address).toBe(bodies[index]!.address);
      const balance = await testApp.balance(shops[index]!);
      expect(balance.available).toBe(100_000_000n - micro(payout.total_debit));
      const outgoing = await db
        .selectFrom('crypto_outgoing_transfers')
        .selectAll()
        .where('owner_id', '=', payout.payout_id)
        .execute();
      expect(outgoing.map((row) => [row.status, row.to_address, row.amount])).toEqual([
        ['queued', bodies[index]!.address, micro(payout.recipient_amount)],
      ]);
      const record = await db
        .selectFrom('idempotency_records')
        .select(['resource_id', 'state'])
        .where('shop_id', '=', shops[index]!.shopId)
        .where('key', '=', payout.external_id)
        .execute();
      expect(record).toEqual([{ resource_id: payout.payout_id, state: 'completed' }]);
      const events = await db
        .selectFrom('webhook_events')
        .select('payload')
        .where('shop_id', '=', shops[index]!.shopId)
        .where('type', '=', 'crypto.payout.updated')
        .execute();
      expect(events.map((event) => JSON.parse(event.payload).data)).toEqual([payout]);
      const legs = await db
        .selectFrom('ledger_transfers')
        .select(['idempotency_key', 'status'])
        .where('reference_id', '=', payout.payout_id)
        .orderBy('idempotency_key')
        .execute();
      expect(legs.map((leg) => leg.status)).toEqual(legs.map(() => 'pending'));
      expect(legs.length).toBeGreaterThanOrEqual(2);
    }
    // Shared statements: the reservations of one statement carry its one timestamp.
    const ids = responses.map((response) => response.json().payout_id as string);
    const stamps = await db
      .selectFrom('ledger_transfers')
      .select('created_at')
      .where('reference_id', 'in', ids)
      .execute();
    expect(new Set(stamps.map((row) => row.created_at.getTime())).size).toBeLessThan(ids.length);
  });

  it('a duplicate external_id among them: 409 for the loser only, its statement run again payout by payout, the others written', async () => {
    const bodies = shops.map(() => payoutBody({ amount: '5' }));
    const rival = { ...bodies[0]!, amount: '6' };
    const responses = await Promise.all([
      ...shops.map((shop, index) => create(shop, bodies[index])),
      create(shops[0]!, rival),
    ]);
    const [first, ...rest] = [responses[0]!, ...responses.slice(1, shops.length)];
    const duplicate = responses[shops.length]!;
    // One of the two with the same external_id wins, whichever came first; the other is 409.
    expect([first.statusCode, duplicate.statusCode].sort()).toEqual([201, 409]);
    expect((first.statusCode === 409 ? first : duplicate).json().error).toBe('duplicate_external_id');
    for (const response of rest) expect(response.statusCode, response.body).toBe(201);
    const listed = (
      await testApp.call(shops[0]!.key, 'GET', `/v1/crypto/payouts?external_id=${bodies[0]!.external_id}`)
    ).json().data;
    expect(listed).toHaveLength(1);
    const winner = first.statusCode === 201 ? first.json() : duplicate.json();
    expect(listed[0].payout_id).toBe(winner.payout_id);
  });

  it('the same payout asked again by every merchant at once: 200 with each one’s payout, nothing reserved twice', async () => {
    const bodies = shops.map(() => payoutBody({ amount: '3' }));
    const firsts = await Promise.all(shops.map((shop, index) => create(shop, bodies[index])));
    const before = await Promise.all(shops.map((shop) => testApp.balance(shop)));
    const repeats = await Promise.all(shops.map((shop, index) => create(shop, bodies[index])));
    for (const [index, repeat] of repeats.entries()) {
      expect(repeat.statusCode, repeat.body).toBe(200);
      expect(repeat.json().payout_id).toBe(firsts[index]!.json().payout_id);
    }
    expect(await Promise.all(shops.map((shop) => testApp.balance(shop)))).toEqual(before);
  });

  it('one merchant, many payouts of different sizes at once against a short balance: only 201 or insufficient_funds, the money exact, no refused one would fit in what is left', async () => {
    const merchant = await testApp.payoutShop();
    await testApp.fund(merchant, 200_000_000n);
    const bodies = Array.from({ length: 30 }, (_, index) => payoutBody({ amount: String(index + 1) }));
    const responses = await Promise.all(bodies.map((body) => create(merchant, body)));
    const accepted = responses.filter((response) => response.statusCode === 201).map((response) => response.json());
    const refused = responses.filter((response) => response.statusCode !== 201);
    for (const response of refused)
      expect([response.statusCode, response.json().error], response.body).toEqual([400, 'insufficient_funds']);
    expect(accepted.length).toBeGreaterThan(0);
    expect(refused.length).toBeGreaterThan(0);
    const left = (await testApp.balance(merchant)).available;
    expect(200_000_000n - left).toBe(accepted.reduce((sum, payout) => sum + micro(payout.total_debit), 0n));
    // Each refused one did not fit when its turn came, and what is left has only shrunk since.
    const quotes = await Promise.all(
      responses.flatMap((response, index) =>
        response.statusCode === 201
          ? []
          : [
              testApp.call(merchant.key, 'POST', '/v1/crypto/payouts/quote', {
                network: 'TRC20',
                amount: bodies[index]!.amount,
                address: bodies[index]!.address,
              }),
            ],
      ),
    );
    for (const quote of quotes) expect(micro(quote.json().total_debit)).toBeGreaterThan(left);
  });

  it('a retry racing its first request on a balance that affords one: 201 and 200 (other parameters: 409), never insufficient_funds', async () => {
    for (let round = 0; round < 5; round++) {
      const merchant = await testApp.payoutShop();
      const body = payoutBody({ amount: '10' });
      const quote = (
        await testApp.call(merchant.key, 'POST', '/v1/crypto/payouts/quote', {
          network: 'TRC20',
          amount: '10',
          address: body.address,
        })
      ).json();
      await testApp.fund(merchant, micro(quote.total_debit) + 1_000_000n);
      const same = await Promise.all([create(merchant, body), create(merchant, body)]);
      expect(
        same.map((response) => response.statusCode).sort(),
        same.map((response) => response.body).join('\n'),
      ).toEqual([200, 201]);
      expect(same[0]!.json().payout_id).toBe(same[1]!.json().payout_id);

      const other = await testApp.payoutShop();
      await testApp.fund(other, micro(quote.total_debit) + 1_000_000n);
      const rivalBody = payoutBody({ amount: '10' });
      const rivals = await Promise.all([create(other, rivalBody), create(other, { ...rivalBody, amount: '10.5' })]);
      expect(
        rivals.map((response) => response.statusCode).sort(),
        rivals.map((response) => response.body).join('\n'),
      ).toEqual([201, 409]);
    }
  });

  it('the creating statement has one text for 1 or 100 payouts, short enough to be prepared once per connection', () => {
    const creation = (index: number): PayoutCreation => {
      const id = `po_text_${index}`;
      const at = testApp.clock.now();
      return {
        payout: {
          id,
          shop_id: 'shop',
          external_id: `e${index}`,
          batch_id: null,
          batch_index: null,
          network: 'TRC20',
          network_mode: 'testnet',
          chain: 'tron-sandbox',
          recipient_address: payoutBody().address as string,
          amount_micro: 1_000_000n,
          network_fee_micro: 1n,
          service_fee_micro: 1n,
          total_debit_micro: 1_000_002n,
          trx_usdt_rate_micro: 1n,
          network_fee_actual_micro: null,
          status: 'pending',
          outgoing_transfer_id: `ot_text_${index}`,
          tx_hash: null,
          error_code: null,
          error_message: null,
          created_at: at,
          updated_at: at,
          completed_at: null,
        },
        fanOut: {
          debitAccountId: `debit-${index}`,
          legs: [{ id: `payout:${id}:amount`, creditAccountId: 'hot', amount: 1_000_000n, type: 'payout' }],
          reference: { type: 'payout', id },
        },
        outgoing: {
          chain: 'tron-sandbox',
          purpose: 'payout',
          ownerId: id,
          asset: 'USDT',
          from: { kind: 'hot_wallet' },
          to: payoutBody().address as never,
          amount: 1_000_000n,
        },
        record: {
          shop_id: 'shop',
          operation: 'crypto.payout.create',
          key: `e${index}`,
          request_hash: 'h',
          state: 'completed',
          lease_token: 't',
          locked_until: at,
          resource_id: id,
          created_at: at,
        },
      };
    };
    const textOf = (count: number) =>
      payoutCreationsStatement(
        testApp.clock,
        Array.from({ length: count }, (_, index) => creation(index)),
      ).compile(testApp.context.db).sql;
    expect(textOf(100)).toBe(textOf(1));
    expect(preparedStatementName(textOf(1))).toBeDefined();
  });
});

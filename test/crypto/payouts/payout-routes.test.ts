// POST/GET /v1/crypto/payouts and the fee quote through the real app on both
// backends: the resource of spec 2.4, every validation rule on both sides of its
// bound, the reservation of total_debit, idempotency by external_id (50 at once
// too), shop settings (limits, tariff, switched off), the node being down, and
// the ledger's invariants afterwards.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { savePayoutSettings, DEFAULT_PAYOUT_SETTINGS } from '../../../src/crypto/payouts/payout-settings.ts';
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

const CENT = 10_000n;

describe.each(backends)('payout routes on %s', (backend) => {
  let testApp: PayoutTestApp;
  let shop: PayoutShop;

  beforeAll(async () => {
    testApp = await createPayoutTestApp(backend);
    shop = await testApp.payoutShop();
    await testApp.fund(shop, 1_000_000_000n);
  });
  afterAll(async () => {
    await testApp.expectLedgerGreen();
    await testApp.close();
  });

  const create = (body: unknown, key = shop.key) => testApp.call(key, 'POST', '/v1/crypto/payouts', body);

  async function expectRefused(body: unknown, field: string, code = 'invalid_request', status = 400) {
    const before = await testApp.balance(shop);
    const response = await create(body);
    expect(response.statusCode, response.body).toBe(status);
    expect(response.json().error).toBe(code);
    expect(response.json().message).toContain(field);
    expect(await testApp.balance(shop)).toEqual(before);
    if (
      typeof body === 'object' &&
      body !== null &&
      'external_id' in body &&
      typeof body.external_id === 'string' &&
      body.external_id.length <= 100
    ) {
      const listed = await testApp.call(
        shop.key,
        'GET',
        `/v1/crypto/payouts?external_id=${encodeURIComponent(body.external_id)}`,
      );
      if (listed.statusCode === 200) expect(listed.json().data).toEqual([]);
    }
  }

  async function expectRefusedMessage(body: unknown): Promise<string> {
    const response = await create(body);
    expect(response.statusCode, response.body).toBe(400);
    return response.json().message as string;
  }

  describe('creating', () => {
    it('answers 201 with a pending payout of every 2.4 field, total_debit reserved and crypto.payout.updated written', async () => {
      const body = payoutBody({ amount: '25.50' });
      const before = await testApp.balance(shop);
      const response = await create(body);
      expect(response.statusCode, response.body).toBe(201);
      const payout = response.json();
      expect(payout).toMatchObject({
        external_id: body.external_id,
        status: 'pending',
        network: 'TRC20',
        asset: 'USDT',
        recipient_address: body.address,
        recipient_amount: '25.5',
        service_fee: '0',
        tx_hash: null,
        error: null,
        completed_at: null,
        network_fee_actual: null,
        batch_id: null,
      });
      expect(payout.payout_id).toMatch(/^po_[0-9a-z]{26}$/);
      expect(payout.created_at).toBe(testApp.clock.now().toISOString());
      const networkFee = micro(payout.network_fee);
      expect(networkFee).toBeGreaterThan(0n);
      expect(networkFee % CENT).toBe(0n);
      expect(micro(payout.total_debit)).toBe(25_500_000n + networkFee);
      const after = await testApp.balance(shop);
      expect(before.available - after.available).toBe(micro(payout.total_debit));
      expect(after.pending - before.pending).toBe(micro(payout.total_debit));

      const events = await testApp.context.db
        .selectFrom('webhook_events')
        .select(['type', 'payload'])
        .where('shop_id', '=', shop.shopId)
        .where('type', '=', 'crypto.payout.updated')
        .execute();
      expect(
        events.map((event) => JSON.parse(event.payload).data).filter((data) => data.payout_id === payout.payout_id),
      ).toEqual([payout]);
      const transfer = await testApp.context.db
        .selectFrom('crypto_outgoing_transfers')
        .selectAll()
        .where('owner_id', '=', payout.payout_id)
        .execute();
      expect(transfer).toHaveLength(1);
      expect(transfer[0]).toMatchObject({
        purpose: 'payout',
        status: 'queued',
        to_address: body.address,
        amount: 25_500_000n,
        from_kind: 'hot_wallet',
      });
    });

    it.each([
      ['10', 10_000_000n],
      ['10.5', 10_500_000n],
      ['10.50', 10_500_000n],
      ['1', 1_000_000n],
      ['0.01', 10_000n],
    ])('accepts the amount "%s"', async (amount, expectedMicro) => {
      if (expectedMicro < 1_000_000n)
        await savePayoutSettings(
          testApp.context.db,
          shop.shopId,
          { ...DEFAULT_PAYOUT_SETTINGS, minAmountMicro: CENT },
          testApp.clock.now(),
        );
      const response = await create(payoutBody({ amount }));
      await savePayoutSettings(testApp.context.db, shop.shopId, DEFAULT_PAYOUT_SETTINGS, testApp.clock.now());
      expect(response.statusCode, response.body).toBe(201);
      expect(micro(response.json().recipient_amount)).toBe(expectedMicro);
    });

    // Spec 2.3 counts places in the text: trailing zeros past the second place are refused too.
    it.each([
      ['10.001'],
      ['10.010'],
      ['10.000000'],
      ['10.500'],
      ['0.0100'],
      ['1e1'],
      [''],
      ['-1'],
      ['0'],
      ['0.00'],
      ['0.001'],
      ['abc'],
      [' 10'],
      ['10 '],
      ['10,5'],
      ['1000000000.01'],
      ['+10'],
      ['010'],
      ['10.'],
      ['.5'],
      ['-0'],
      ['0x10'],
      ['١٠'],
    ])('refuses the amount "%s" with 400 naming the field, storing nothing', (amount) =>
      expectRefused(payoutBody({ amount }), 'amount'),
    );
    it('refuses an amount sent as a JSON number, null or missing', async () => {
      await expectRefused(payoutBody({ amount: 10 }), 'amount');
      await expectRefused(payoutBody({ amount: null }), 'amount');
      const { amount: _amount, ...without } = payoutBody();
      await expectRefused(without, 'amount');
    });

    it('refuses every network but TRC20', async () => {
      for (const network of ['ERC20', 'trc20', '', 'TRC20 ']) await expectRefused(payoutBody({ network }), 'network');
    });

    it('refuses addresses that are not strict TRON addresses, and the gateway’s own hot wallet', async () => {
      const good = recipient();
      const corrupted = `${good.slice(0, -1)}${good.endsWith('1') ? '2' : '1'}`;
      for (const address of [
        corrupted,
        good.slice(1),
        `${good}1`,
        good.toLowerCase(),
        '0x' + 'ab'.repeat(20),
        '',
        'T' + '1'.repeat(33),
      ]) {
        await expectRefused(payoutBody({ address }), 'address');
      }
      const access = await testApp.crypto.chain.forMode('sandbox');
      await expectRefused(payoutBody({ address: access.addressKey.hotWalletAddress }), 'address');
    });

    it('refuses the gateway’s own deposit addresses (this shop’s, another shop’s, either book) and the USDT contract, storing nothing', async () => {
      const other = await testApp.payoutShop();
      const ownInvoice = (
        await testApp.call(shop.key, 'POST', '/v1/crypto/invoices', {
          external_id: externalId('own'),
          amount: '5',
          network: 'TRC20',
        })
      ).json();
      const otherWallet = (
        await testApp.call(other.key, 'POST', '/v1/crypto/wallets', {
          client_id: externalId('client'),
          network: 'TRC20',
        })
      ).json();
      expect(ownInvoice.address).toMatch(/^T/);
      expect(otherWallet.address).toMatch(/^T/);
      // A live book's address: recorded as the live key's (no live keys are configured here, so written as the watcher would find it).
      const liveAddress = recipient();
      await testApp.context.db
        .insertInto('crypto_addresses')
        .values({
          address: liveAddress,
          key_id: 'live',
          derivation_index: 7n,
          shop_id: other.shopId,
          purpose: 'invoice',
          created_at: testApp.clock.now(),
        })
        .execute();
      const access = await testApp.crypto.chain.forMode('sandbox');
      for (const address of [ownInvoice.address, otherWallet.address, liveAddress, access.usdtContract]) {
        await expectRefused(payoutBody({ address }), 'address');
        const quote = await testApp.call(shop.key, 'POST', '/v1/crypto/payouts/quote', {
          network: 'TRC20',
          amount: '10',
          address,
        });
        expect(quote.statusCode, quote.body).toBe(400);
        expect(quote.json()).toMatchObject({ error: 'invalid_request' });
        expect(quote.json().message).toContain('address');
      }
      expect(await expectRefusedMessage(payoutBody({ address: ownInvoice.address }))).toContain(
        'deposit address of this gateway',
      );
      expect(await expectRefusedMessage(payoutBody({ address: access.usdtContract }))).toContain('USDT contract');
    });

    it('takes an external_id of 1 and of 100 characters and refuses 0 and 101', async () => {
      const fresh = await testApp.payoutShop();
      await testApp.fund(fresh, 100_000_000n);
      expect((await create(payoutBody({ external_id: 'x' }), fresh.key)).statusCode).toBe(201);
      expect((await create(payoutBody({ external_id: externalId('long').padEnd(100, 'x') }))).statusCode).toBe(201);
      await expectRefused(payoutBody({ external_id: '' }), 'external_id');
      await expectRefused(payoutBody({ external_id: 'y'.repeat(101) }), 'external_id');
    });

    it('refuses unknown fields', () => expectRefused(payoutBody({ memo: 'x' }), 'memo'));

    it('answers 401 without a key or with a wrong one, and 403 to a key without the payouts scope', async () => {
      const anonymous = await testApp.app.inject({ method: 'POST', url: '/v1/crypto/payouts', payload: payoutBody() });
      expect(anonymous.statusCode).toBe(401);
      expect(anonymous.json().error).toBe('unauthorized');
      expect((await create(payoutBody(), 'pk_wrong')).statusCode).toBe(401);
      const cryptoOnly = await testApp.createKey(shop.shopId, ['crypto', 'read']);
      const refused = await create(payoutBody(), cryptoOnly);
      expect(refused.statusCode).toBe(403);
      expect(refused.json().error).toBe('forbidden');
    });
  });

  describe('idempotency by external_id', () => {
    it('the same parameters again answer 200 with the same payout and reserve nothing more; other parameters are 409', async () => {
      const body = payoutBody({ amount: '12.34' });
      const first = await create(body);
      expect(first.statusCode).toBe(201);
      const balance = await testApp.balance(shop);
      const again = await create(body);
      expect(again.statusCode).toBe(200);
      expect(again.json()).toEqual(first.json());
      expect(await testApp.balance(shop)).toEqual(balance);
      for (const changed of [{ amount: '12.35' }, { address: recipient() }]) {
        const conflict = await create({ ...body, ...changed });
        expect(conflict.statusCode).toBe(409);
        expect(conflict.json().error).toBe('duplicate_external_id');
      }
      expect(await testApp.balance(shop)).toEqual(balance);
    });

    it('an Idempotency-Key header is accepted and changes nothing: external_id decides', async () => {
      const body = payoutBody();
      const send = (idempotencyKey: string) =>
        testApp.app.inject({
          method: 'POST',
          url: '/v1/crypto/payouts',
          headers: {
            authorization: `Bearer ${shop.key}`,
            'content-type': 'application/json',
            'idempotency-key': idempotencyKey,
          },
          payload: JSON.stringify(body),
        });
      const first = await send('key-1');
      expect(first.statusCode).toBe(201);
      const second = await send('key-2');
      expect(second.statusCode).toBe(200);
      expect(second.json().payout_id).toBe(first.json().payout_id);
    });

    it('50 identical requests at once: one 201, 49 × 200 with the same payout, one reservation', async () => {
      const body = payoutBody({ amount: '7' });
      const before = await testApp.balance(shop);
      const responses = await Promise.all(Array.from({ length: 50 }, () => create(body)));
      const statuses = responses.map((response) => response.statusCode).sort();
      expect(statuses.filter((status) => status === 201)).toHaveLength(1);
      expect(statuses.filter((status) => status === 200)).toHaveLength(49);
      const ids = new Set(responses.map((response) => response.json().payout_id));
      expect(ids.size).toBe(1);
      const after = await testApp.balance(shop);
      expect(before.available - after.available).toBe(micro(responses[0]!.json().total_debit));
      const reservations = await testApp.context.db
        .selectFrom('ledger_transfers')
        .select((eb) => eb.fn.countAll<string>().as('count'))
        .where('idempotency_key', '=', `payout:${[...ids][0]}:amount`)
        .executeTakeFirstOrThrow();
      expect(Number(reservations.count)).toBe(1);
    });
  });

  describe('money and settings', () => {
    it('not enough available balance: 400 insufficient_funds, nothing stored', async () => {
      const poor = await testApp.payoutShop();
      await testApp.fund(poor, 10_000_000n);
      const body = payoutBody({ amount: '10' });
      const response = await create(body, poor.key);
      expect(response.statusCode, response.body).toBe(400);
      expect(response.json().error).toBe('insufficient_funds');
      expect((await testApp.balance(poor)).available).toBe(10_000_000n);
      expect((await testApp.call(poor.key, 'GET', '/v1/crypto/payouts')).json().data).toEqual([]);
      const transfers = await testApp.context.db
        .selectFrom('crypto_outgoing_transfers')
        .select('id')
        .where('amount', '=', 10_000_000n)
        .where('to_address', '=', body.address as string)
        .execute();
      expect(transfers).toEqual([]);
      // The key was not used up: with money, the same request is accepted.
      await testApp.fund(poor, 10_000_000n);
      expect((await create(body, poor.key)).statusCode).toBe(201);
    });

    it('a shop never funded: its first payout is insufficient_funds (nothing but its empty ledger accounts is stored), and once funded the same request is accepted and reserved', async () => {
      const fresh = await testApp.payoutShop();
      const body = payoutBody({ amount: '10' });
      const refused = await create(body, fresh.key);
      expect(refused.statusCode, refused.body).toBe(400);
      expect(refused.json().error).toBe('insufficient_funds');
      expect((await testApp.call(fresh.key, 'GET', '/v1/crypto/payouts')).json().data).toEqual([]);
      const reservations = await testApp.context.db
        .selectFrom('ledger_transfers')
        .select('id')
        .where('reference_type', '=', 'payout')
        .where('idempotency_key', 'like', 'payout:%')
        .execute();
      const before = reservations.length;
      // The accounts it created are committed and empty; the same key is still free.
      await testApp.fund(fresh, 20_000_000n);
      const accepted = await create(body, fresh.key);
      expect(accepted.statusCode, accepted.body).toBe(201);
      const totalDebit = micro(accepted.json().total_debit);
      expect((await testApp.balance(fresh)).available).toBe(20_000_000n - totalDebit);
      const after = await testApp.context.db
        .selectFrom('ledger_transfers')
        .select('id')
        .where('reference_type', '=', 'payout')
        .where('idempotency_key', 'like', 'payout:%')
        .execute();
      expect(after.length - before).toBe(2); // amount and network fee (no service fee by default)
    });

    it('a shop’s limits: amount_not_supported outside them, on both sides of each bound', async () => {
      const limited = await testApp.payoutShop();
      await testApp.fund(limited, 1_000_000_000n);
      await savePayoutSettings(
        testApp.context.db,
        limited.shopId,
        { ...DEFAULT_PAYOUT_SETTINGS, minAmountMicro: 5_000_000n, maxAmountMicro: 100_000_000n },
        testApp.clock.now(),
      );
      for (const [amount, status] of [
        ['4.99', 400],
        ['5', 201],
        ['100', 201],
        ['100.01', 400],
      ] as const) {
        const response = await create(payoutBody({ amount }), limited.key);
        expect(response.statusCode, `${amount}: ${response.body}`).toBe(status);
        if (status === 400) {
          expect(response.json().error).toBe('amount_not_supported');
          expect(response.json().message).toContain('5 to 100');
        }
      }
    });

    it('the default minimum is 1 USDT', async () => {
      const response = await create(payoutBody({ amount: '0.99' }));
      expect(response.statusCode).toBe(400);
      expect(response.json().error).toBe('amount_not_supported');
    });

    it('the service fee follows the tariff (fixed + basis points, rounded up to the cent) and is reserved with the rest', async () => {
      const tariffed = await testApp.payoutShop();
      await testApp.fund(tariffed, 1_000_000_000n);
      await savePayoutSettings(
        testApp.context.db,
        tariffed.shopId,
        { ...DEFAULT_PAYOUT_SETTINGS, serviceFeeFixedMicro: 500_000n, serviceFeeBps: 125 },
        testApp.clock.now(),
      );
      const response = await create(payoutBody({ amount: '10.01' }), tariffed.key);
      expect(response.statusCode).toBe(201);
      const payout = response.json();
      // 0.5 + 1.25 % of 10.01 (0.125125) = 0.625125 → 0.63
      expect(payout.service_fee).toBe('0.63');
      expect(micro(payout.total_debit)).toBe(10_010_000n + micro(payout.network_fee) + 630_000n);
      expect((await testApp.balance(tariffed)).available).toBe(1_000_000_000n - micro(payout.total_debit));
    });

    it('the operation history shows the reservation as payout and payout_fee entries referring to the payout', async () => {
      const tariffed = await testApp.payoutShop();
      await testApp.fund(tariffed, 100_000_000n);
      await savePayoutSettings(
        testApp.context.db,
        tariffed.shopId,
        { ...DEFAULT_PAYOUT_SETTINGS, serviceFeeFixedMicro: 1_000_000n },
        testApp.clock.now(),
      );
      const payout = (await create(payoutBody({ amount: '20' }), tariffed.key)).json();
      const response = await testApp.call(tariffed.key, 'GET', '/v1/crypto/balance/operations');
      expect(response.statusCode, response.body).toBe(200);
      const mine = response
        .json()
        .data.filter((operation: { reference: { id: string } }) => operation.reference.id === payout.payout_id);
      const byAmount = mine.map((operation: { type: string; amount: string; status: string }) => [
        operation.type,
        micro(operation.amount.replace('-', '')),
        operation.status,
      ]);
      expect(byAmount).toEqual(
        expect.arrayContaining([
          ['payout', 20_000_000n, 'pending'],
          ['payout_fee', micro(payout.network_fee), 'pending'],
          ['payout_fee', 1_000_000n, 'pending'],
        ]),
      );
      expect(mine).toHaveLength(3);
    });

    it('payouts switched off for the shop: 503 service_unavailable with Retry-After, nothing stored', async () => {
      const off = await testApp.payoutShop();
      await testApp.fund(off, 100_000_000n);
      await savePayoutSettings(
        testApp.context.db,
        off.shopId,
        { ...DEFAULT_PAYOUT_SETTINGS, enabled: false },
        testApp.clock.now(),
      );
      const response = await create(payoutBody(), off.key);
      expect(response.statusCode).toBe(503);
      expect(response.json().error).toBe('service_unavailable');
      expect(response.headers['retry-after']).toBeDefined();
      expect((await testApp.call(off.key, 'GET', '/v1/crypto/payouts')).json().data).toEqual([]);
      expect((await testApp.balance(off)).available).toBe(100_000_000n);
    });

    it('the network fee is dearer to a recipient without USDT (130k energy) than to one holding some (65k)', async () => {
      const holder = recipient();
      await testApp.call(shop.key, 'POST', '/v1/test_helpers/crypto/deposits', { address: holder, amount: '1' });
      await testApp.call(shop.key, 'POST', '/v1/test_helpers/crypto/blocks', { count: 1 });
      const quote = async (address: string) =>
        (
          await testApp.call(shop.key, 'POST', '/v1/crypto/payouts/quote', { network: 'TRC20', amount: '10', address })
        ).json();
      const toHolder = await quote(holder);
      const toNew = await quote(recipient());
      expect(micro(toNew.network_fee)).toBeGreaterThan(micro(toHolder.network_fee));
    });
  });

  describe('the quote', () => {
    it('answers the breakdown and creates nothing', async () => {
      const before = await testApp.balance(shop);
      const address = recipient();
      const response = await testApp.call(shop.key, 'POST', '/v1/crypto/payouts/quote', {
        network: 'TRC20',
        amount: '50',
        address,
      });
      expect(response.statusCode, response.body).toBe(200);
      const quote = response.json();
      expect(quote).toMatchObject({
        network: 'TRC20',
        asset: 'USDT',
        recipient_address: address,
        recipient_amount: '50',
        service_fee: '0',
      });
      expect(micro(quote.total_debit)).toBe(50_000_000n + micro(quote.network_fee));
      expect(await testApp.balance(shop)).toEqual(before);
      const transfers = await testApp.context.db
        .selectFrom('crypto_outgoing_transfers')
        .select('id')
        .where('to_address', '=', address)
        .execute();
      expect(transfers).toEqual([]);
    });

    it('validates like creation', async () => {
      for (const [body, field] of [
        [{ network: 'TRC20', amount: '10.001', address: recipient() }, 'amount'],
        [{ network: 'TRC20', amount: '10.010', address: recipient() }, 'amount'],
        [{ network: 'ERC20', amount: '10', address: recipient() }, 'network'],
        [{ network: 'TRC20', amount: '10', address: 'Tnope' }, 'address'],
      ] as const) {
        const response = await testApp.call(shop.key, 'POST', '/v1/crypto/payouts/quote', body);
        expect(response.statusCode).toBe(400);
        expect(response.json().message).toContain(field);
      }
    });
  });

  describe('reading', () => {
    it('GET one: the same payout; another shop’s or an unknown id is 404', async () => {
      const created = (await create(payoutBody())).json();
      const read = await testApp.call(shop.key, 'GET', `/v1/crypto/payouts/${created.payout_id}`);
      expect(read.statusCode).toBe(200);
      expect(read.json()).toEqual(created);
      const other = await testApp.payoutShop();
      expect((await testApp.call(other.key, 'GET', `/v1/crypto/payouts/${created.payout_id}`)).statusCode).toBe(404);
      expect((await testApp.call(shop.key, 'GET', '/v1/crypto/payouts/po_00000000000000000000000000')).statusCode).toBe(
        404,
      );
      expect((await testApp.call(shop.key, 'GET', '/v1/crypto/payouts/inv_x')).statusCode).toBe(404);
      const readOnly = await testApp.createKey(shop.shopId, ['read']);
      expect((await testApp.call(readOnly, 'GET', `/v1/crypto/payouts/${created.payout_id}`)).statusCode).toBe(200);
    });

    it('the list: newest first, filters by status and external_id, pages with a cursor', async () => {
      const lister = await testApp.payoutShop();
      await testApp.fund(lister, 1_000_000_000n);
      const made = [];
      for (let index = 0; index < 5; index++) {
        made.push((await create(payoutBody(), lister.key)).json());
        testApp.clock.advance(1_000);
      }
      const seen: string[] = [];
      let cursor: string | null = null;
      do {
        const page: { data: { payout_id: string }[]; next_cursor: string | null } = (
          await testApp.call(lister.key, 'GET', `/v1/crypto/payouts?limit=2${cursor ? `&cursor=${cursor}` : ''}`)
        ).json();
        seen.push(...page.data.map((payout) => payout.payout_id));
        cursor = page.next_cursor;
      } while (cursor);
      expect(seen).toEqual(made.map((payout) => payout.payout_id).reverse());
      const byExternal = (
        await testApp.call(lister.key, 'GET', `/v1/crypto/payouts?external_id=${made[2].external_id}`)
      ).json();
      expect(byExternal.data).toEqual([made[2]]);
      expect((await testApp.call(lister.key, 'GET', '/v1/crypto/payouts?status=pending')).json().data).toHaveLength(5);
      expect((await testApp.call(lister.key, 'GET', '/v1/crypto/payouts?status=completed')).json().data).toEqual([]);
      expect((await testApp.call(lister.key, 'GET', '/v1/crypto/payouts?status=done')).statusCode).toBe(400);
      expect((await testApp.call(lister.key, 'GET', '/v1/crypto/payouts?cursor=bad')).statusCode).toBe(400);
    });
  });
});

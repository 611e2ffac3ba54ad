// POST /v1/crypto/refunds and GET /v1/crypto/refunds/{id} through the real app:
// every refused request answers {error, message} with its documented code and stores
// nothing (no refund, no reservation); bounds are checked on both sides; another
// shop's refund or deposit is 404. The ledger stays sound.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { backends } from '../../support/databases.ts';
import {
  createPayoutTestApp,
  externalId,
  micro,
  recipient,
  type PayoutShop,
  type PayoutTestApp,
} from '../payouts/payout-support.ts';
import { fixtureDeposit } from './refund-fixtures.ts';

describe.each(backends)('refund routes on %s', (backend) => {
  let testApp: PayoutTestApp;
  let shop: PayoutShop;

  beforeAll(async () => {
    testApp = await createPayoutTestApp(backend);
    shop = await testApp.payoutShop();
  });
  afterEach(() => testApp.expectLedgerGreen());
  afterAll(() => testApp.close());

  const fixtureShop = (of: PayoutShop) => ({
    ...of,
    call: (method: 'GET' | 'POST', url: string, body?: unknown) => testApp.call(of.key, method, url, body),
  });
  const deposit = (amountMicro = 20_000_000n, status: 'credited' | 'confirming' = 'credited', of = shop) =>
    fixtureDeposit(testApp.context.db, testApp.clock, fixtureShop(of), amountMicro, status);
  const refund = (body: unknown, key = shop.key) => testApp.call(key, 'POST', '/v1/crypto/refunds', body);
  const refundCount = async () => (await testApp.context.db.selectFrom('crypto_refunds').select('id').execute()).length;

  async function expectRefused(body: unknown, status: number, error: string, messagePart?: string) {
    const refundsBefore = await refundCount();
    const balanceBefore = await testApp.balance(shop);
    const response = await refund(body);
    expect(response.statusCode, response.body).toBe(status);
    const answer = response.json();
    expect(Object.keys(answer).sort()).toEqual(['error', 'message', 'request_id']);
    expect(answer.error).toBe(error);
    if (messagePart) expect(answer.message).toContain(messagePart);
    expect(await refundCount()).toBe(refundsBefore);
    expect(await testApp.balance(shop)).toEqual(balanceBefore);
  }

  it('exactly one of deposit_id and invoice_id: both, or neither, is 400 naming the two fields', async () => {
    const { depositId, invoiceId } = await deposit();
    await expectRefused(
      { external_id: externalId(), deposit_id: depositId, invoice_id: invoiceId, address: recipient() },
      400,
      'invalid_request',
      'deposit_id and invoice_id',
    );
    await expectRefused(
      { external_id: externalId(), address: recipient() },
      400,
      'invalid_request',
      'deposit_id and invoice_id',
    );
  });

  it('bounds of external_id (1..100), deposit_id (1..64), the address and unknown fields', async () => {
    const { depositId } = await deposit();
    await expectRefused(
      { external_id: '', deposit_id: depositId, address: recipient() },
      400,
      'invalid_request',
      'external_id',
    );
    await expectRefused(
      { external_id: 'x'.repeat(101), deposit_id: depositId, address: recipient() },
      400,
      'invalid_request',
      'external_id',
    );
    await expectRefused(
      { external_id: externalId(), deposit_id: 'd'.repeat(65), address: recipient() },
      400,
      'invalid_request',
      'deposit_id',
    );
    await expectRefused(
      { external_id: externalId(), deposit_id: depositId, address: 'TXYZ' },
      400,
      'invalid_request',
      'address',
    );
    await expectRefused(
      { external_id: externalId(), deposit_id: depositId, address: recipient(), amount: '1' },
      400,
      'invalid_request',
    );
    await expectRefused(
      { external_id: externalId(), deposit_id: depositId, address: 5 },
      400,
      'invalid_request',
      'address',
    );
    const hotWallet = (await testApp.crypto.chain.forMode('sandbox')).addressKey.hotWalletAddress;
    await expectRefused(
      { external_id: externalId(), deposit_id: depositId, address: hotWallet },
      400,
      'invalid_request',
      'hot wallet',
    );
    // Back to one of the gateway's own deposit addresses (the deposit's own, or any other) or to the USDT contract: refused.
    const ownAddress = (
      await testApp.context.db
        .selectFrom('crypto_deposits')
        .select('address')
        .where('id', '=', depositId)
        .executeTakeFirstOrThrow()
    ).address;
    await expectRefused(
      { external_id: externalId(), deposit_id: depositId, address: ownAddress },
      400,
      'invalid_request',
      'deposit address of this gateway',
    );
    const usdtContract = (await testApp.crypto.chain.forMode('sandbox')).usdtContract;
    await expectRefused(
      { external_id: externalId(), deposit_id: depositId, address: usdtContract },
      400,
      'invalid_request',
      'USDT contract',
    );
    // The inner side of each bound passes validation: a 64-character unknown deposit is 404, a 100-character external_id and a 1-character one are accepted.
    await expectRefused(
      { external_id: externalId(), deposit_id: `dep_${'0'.repeat(60)}`, address: recipient() },
      404,
      'not_found',
    );
    const longest = await refund({ external_id: 'x'.repeat(100), deposit_id: depositId, address: recipient() });
    expect(longest.statusCode, longest.body).toBe(201);
    const { depositId: other } = await deposit();
    expect((await refund({ external_id: 'y', deposit_id: other, address: recipient() })).statusCode).toBe(201);
  });

  it('a deposit that does not cover the network fee is 400 amount_not_supported; one cent above the fee is accepted', async () => {
    const { depositId: tiny } = await deposit(10_000n);
    await expectRefused(
      { external_id: externalId(), deposit_id: tiny, address: recipient() },
      400,
      'amount_not_supported',
      'network fee',
    );
    const { depositId } = await deposit();
    const created = (await refund({ external_id: externalId(), deposit_id: depositId, address: recipient() })).json();
    const fee = micro(created.network_fee);
    const { depositId: exact } = await deposit(fee);
    await expectRefused(
      { external_id: externalId(), deposit_id: exact, address: recipient() },
      400,
      'amount_not_supported',
    );
    const { depositId: above } = await deposit(fee + 10_000n);
    const accepted = await refund({ external_id: externalId(), deposit_id: above, address: recipient() });
    expect(accepted.statusCode, accepted.body).toBe(201);
    expect(accepted.json().recipient_amount).toBe('0.01');
  });

  it('a deposit still confirming is 409 invalid_state; an invoice without credited deposits too', async () => {
    const { depositId, invoiceId } = await deposit(20_000_000n, 'confirming');
    await expectRefused(
      { external_id: externalId(), deposit_id: depositId, address: recipient() },
      409,
      'invalid_state',
      'confirming',
    );
    await expectRefused(
      { external_id: externalId(), invoice_id: invoiceId, address: recipient() },
      409,
      'invalid_state',
    );
  });

  it('a credited deposit whose amount is no longer available is 400 insufficient_funds, and nothing is stored', async () => {
    const poorShop = await testApp.payoutShop();
    const { depositId } = await deposit(20_000_000n, 'credited', poorShop);
    // Most of the balance is reserved by a payout meanwhile.
    const payout = await testApp.call(poorShop.key, 'POST', '/v1/crypto/payouts', {
      external_id: externalId(),
      network: 'TRC20',
      amount: '10',
      address: recipient(),
    });
    expect(payout.statusCode, payout.body).toBe(201);
    const before = await refundCount();
    const response = await refund(
      { external_id: externalId(), deposit_id: depositId, address: recipient() },
      poorShop.key,
    );
    expect(response.statusCode).toBe(400);
    expect(response.json().error).toBe('insufficient_funds');
    expect(await refundCount()).toBe(before);
    expect(
      await testApp.context.db
        .selectFrom('crypto_refund_deposits')
        .select('refund_id')
        .where('deposit_id', '=', depositId)
        .execute(),
    ).toEqual([]);
  });

  it('401 without a key or with an unknown one', async () => {
    const { depositId } = await deposit();
    const body = { external_id: externalId(), deposit_id: depositId, address: recipient() };
    const missing = await testApp.app.inject({ method: 'POST', url: '/v1/crypto/refunds', payload: body });
    expect(missing.statusCode).toBe(401);
    expect(missing.json().error).toBe('unauthorized');
    const unknown = await refund(body, 'sk_test_unknown');
    expect(unknown.statusCode).toBe(401);
    expect((await testApp.call('sk_test_unknown', 'GET', '/v1/crypto/refunds/ref_x')).statusCode).toBe(401);
  });

  it("404: another shop's refund, another shop's deposit or invoice, an unknown refund id", async () => {
    const { depositId, invoiceId } = await deposit();
    const created = (await refund({ external_id: externalId(), deposit_id: depositId, address: recipient() })).json();
    expect((await testApp.call(shop.key, 'GET', `/v1/crypto/refunds/${created.refund_id}`)).json()).toEqual(created);
    const stranger = await testApp.payoutShop();
    await testApp.fund(stranger, 100_000_000n);
    const crossRead = await testApp.call(stranger.key, 'GET', `/v1/crypto/refunds/${created.refund_id}`);
    expect(crossRead.statusCode).toBe(404);
    expect(crossRead.json().error).toBe('not_found');
    for (const target of [{ deposit_id: depositId }, { invoice_id: invoiceId }]) {
      const response = await refund({ external_id: externalId(), address: recipient(), ...target }, stranger.key);
      expect(response.statusCode, response.body).toBe(404);
    }
    expect((await testApp.call(shop.key, 'GET', '/v1/crypto/refunds/ref_unknown')).statusCode).toBe(404);
    expect((await testApp.call(shop.key, 'GET', `/v1/crypto/refunds/${'r'.repeat(65)}`)).statusCode).toBe(400);
  });
});

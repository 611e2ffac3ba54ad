// Recipient checks before signing, through the API, the real executor and the
// simulated chain (whose USDT contract answers isBlackListed and reverts
// transfers of listed parties, as TetherToken does):
// - a recipient the issuer blacklisted is refused at creation (payout, quote,
//   batch): 400 address_blacklisted, nothing created or reserved;
// - by default the executor runs the first transfer to a recipient as a
//   constant call before signing (listed since creation: failed
//   address_blacklisted, nothing signed, no fee), and makes no such call for a
//   recipient it has confirmed transfers to;
// - a known recipient listed after creation lands as REVERT, is classified
//   address_blacklisted, and the merchant bears the fee it burned.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OutgoingExecutor } from '../../../src/crypto/sending/executor.ts';
import { sunToMicroUsdt } from '../../../src/crypto/sending/transfer-cost.ts';
import type { TronAddress } from '../../../src/crypto/tron/address.ts';
import type { TronNodeClient } from '../../../src/crypto/tron/node-client.ts';
import { backends } from '../../support/databases.ts';
import {
  createPayoutTestApp,
  externalId,
  micro,
  recipient,
  sandboxExecutor,
  type PayoutShop,
  type PayoutTestApp,
} from './payout-support.ts';

const BLOCKS_TO_FINALITY = 19;

describe.each(backends)('recipient checks before signing on %s', (backend) => {
  let testApp: PayoutTestApp;
  let shop: PayoutShop;
  let executor: OutgoingExecutor;
  /** Recipients of the executor's dry runs (constant calls of transfer), in order. */
  const dryRunsTo: TronAddress[] = [];

  beforeAll(async () => {
    testApp = await createPayoutTestApp(backend);
    shop = await testApp.payoutShop();
    await testApp.fund(shop, 1_000_000_000n);
    const access = await testApp.crypto.chain.forMode('sandbox');
    // The production client, seen at the network edge: every dry run it makes is recorded.
    const node = Object.create(access.node) as TronNodeClient;
    node.dryRunUsdtTransfer = (from, to, amount) => {
      dryRunsTo.push(to);
      return access.node.dryRunUsdtTransfer(from, to, amount);
    };
    executor = await sandboxExecutor(testApp, { node });
    await post('/v1/test_helpers/crypto/faucet', { usdt: '100000', trx: '100000' });
  });
  afterAll(async () => {
    await testApp.expectLedgerGreen();
    await executor.release();
    await testApp.close();
  });

  async function post(path: string, body?: unknown) {
    const response = await testApp.call(shop.key, 'POST', path, body);
    expect(response.statusCode, `${path}: ${response.body}`).toBeLessThan(300);
    return response.json();
  }
  const get = async (path: string) => (await testApp.call(shop.key, 'GET', path)).json();
  const blacklist = (address: string, listed: boolean) =>
    post('/v1/test_helpers/crypto/blacklist', { address, listed });
  // The helper lists only addresses it made for the shop: an address of the shop's own, not listed yet.
  const ownAddress = async (): Promise<string> =>
    (await post('/v1/test_helpers/crypto/blacklist', { listed: false })).address;
  const createPayout = (address: string, amount = '10') =>
    post('/v1/crypto/payouts', { external_id: externalId(), network: 'TRC20', amount, address });
  async function carryToFinal(): Promise<void> {
    await executor.runPass();
    await post('/v1/test_helpers/crypto/blocks', { count: 1 });
    await post('/v1/test_helpers/crypto/blocks', { count: BLOCKS_TO_FINALITY });
    await executor.runPass();
  }

  it('a blacklisted recipient is 400 address_blacklisted at creation, quote and batch; nothing is reserved or created', async () => {
    const listed = (await post('/v1/test_helpers/crypto/blacklist', { listed: true })).address as string;
    const before = await testApp.balance(shop);
    const single = await testApp.call(shop.key, 'POST', '/v1/crypto/payouts', {
      external_id: externalId(),
      network: 'TRC20',
      amount: '10',
      address: listed,
    });
    expect(single.statusCode).toBe(400);
    expect(single.json()).toMatchObject({ error: 'address_blacklisted', message: expect.stringContaining(listed) });
    const quote = await testApp.call(shop.key, 'POST', '/v1/crypto/payouts/quote', {
      network: 'TRC20',
      amount: '10',
      address: listed,
    });
    expect(quote.statusCode).toBe(400);
    expect(quote.json().error).toBe('address_blacklisted');
    const batch = await testApp.call(shop.key, 'POST', '/v1/crypto/payouts/batch', {
      external_id: externalId(),
      network: 'TRC20',
      payouts: [
        { external_id: externalId(), amount: '5', address: recipient() },
        { external_id: externalId(), amount: '5', address: listed },
      ],
    });
    expect(batch.statusCode, batch.body).toBe(400);
    expect(batch.json().error).toBe('address_blacklisted');
    expect(await testApp.balance(shop)).toEqual(before);
    expect(
      (await get(`/v1/crypto/payouts?limit=100`)).data.filter(
        (payout: { recipient_address: string }) => payout.recipient_address === listed,
      ),
    ).toEqual([]);
  });

  it('a first-time recipient listed after creation fails address_blacklisted before signing: no transaction, no fee, the whole debit back', async () => {
    const before = await testApp.balance(shop);
    const fresh = await ownAddress();
    const created = await createPayout(fresh);
    await blacklist(fresh, true);
    const pass = await executor.runPass();
    expect(pass.signed).toBe(0);
    expect(dryRunsTo).toContain(fresh);
    const failed = await get(`/v1/crypto/payouts/${created.payout_id}`);
    expect(failed).toMatchObject({ status: 'failed', tx_hash: null, error: { code: 'address_blacklisted' } });
    expect(await testApp.balance(shop)).toEqual(before);
  });

  it('a known recipient is signed without a dry run; listed after creation it lands REVERT and the merchant bears the fee it burned', async () => {
    const known = await ownAddress();
    const first = await createPayout(known, '20');
    await carryToFinal();
    expect((await get(`/v1/crypto/payouts/${first.payout_id}`)).status).toBe('completed');
    expect(dryRunsTo.filter((address) => address === known)).toHaveLength(1);

    const before = await testApp.balance(shop);
    const second = await createPayout(known, '15');
    expect((await testApp.balance(shop)).available).toBe(before.available - micro(second.total_debit));
    await blacklist(known, true);
    await carryToFinal();
    // Known: still the one dry run of the first payout.
    expect(dryRunsTo.filter((address) => address === known)).toHaveLength(1);
    const failed = await get(`/v1/crypto/payouts/${second.payout_id}`);
    expect(failed).toMatchObject({
      status: 'failed',
      error: { code: 'address_blacklisted', message: expect.stringContaining('network fee was charged') },
    });
    expect(failed.tx_hash).toMatch(/^[0-9a-f]{64}$/);
    const info = (await (await testApp.crypto.chain.forMode('sandbox')).node.getTransactionOutcome(failed.tx_hash))!;
    expect(info.contractResult).toBe('REVERT');
    const burned = sunToMicroUsdt(info.feeSun, testApp.context.config.trxUsdtRateMicro);
    expect(burned).toBeGreaterThan(0n);
    expect(micro(failed.network_fee_actual)).toBe(burned);
    // The amount and the service fee came back; the fee the REVERT burned (below the quote) did not.
    expect(burned).toBeLessThan(micro(second.network_fee));
    expect(await testApp.balance(shop)).toEqual({
      ...before,
      available: before.available - burned,
      total: before.total - burned,
    });
  });
});

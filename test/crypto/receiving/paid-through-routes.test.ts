// A crypto invoice and a static wallet paid end to end through the API alone, as
// the README's curl walk-through does: test helpers send USDT and mine blocks on
// the sandbox chain, the chain watcher (one pass at a time) records and settles,
// and the GETs show confirming, then paid / credited / held. Every response is
// also checked against the OpenAPI document (deposits included).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createChainWatcher, type ChainWatcher } from '../../../src/crypto/receiving/chain-watcher.ts';
import { backends } from '../../support/databases.ts';
import { createCryptoTestApp, externalId, invoiceBody, micro, type CryptoTestApp } from './crypto-routes-support.ts';

/** Solidification is at head − 18: a deposit is final once 19 blocks include it and follow. */
const BLOCKS_TO_FINALITY = 19;
const WATCHER_PASSES_MAX = 10;

describe.each(backends)('paid through the routes on %s', (backend) => {
  let testApp: CryptoTestApp;
  let key: string;
  let watcher: ChainWatcher;

  beforeAll(async () => {
    testApp = await createCryptoTestApp(backend);
    ({ key } = await testApp.shop());
    const { context } = testApp;
    const access = await testApp.crypto.chain.forMode('sandbox');
    watcher = createChainWatcher({ db: context.db, clock: context.clock, logger: context.logger, access });
  });
  afterAll(() => testApp.close());

  /** Runs watcher passes until one finds nothing more to do. */
  async function watch(): Promise<void> {
    for (let pass = 0; pass < WATCHER_PASSES_MAX; pass++) {
      const result = await watcher.runPass();
      expect(result.leader).toBe(true);
      if (result.blocksScanned === 0 && result.depositsSettled === 0) return;
    }
    throw new Error(`the watcher still had work after ${WATCHER_PASSES_MAX} passes`);
  }

  async function post(path: string, body?: unknown) {
    const response = await testApp.call(key, 'POST', path, body);
    expect(response.statusCode, `${path}: ${response.body}`).toBeLessThan(300);
    return response.json();
  }
  const get = async (path: string) => (await testApp.call(key, 'GET', path)).json();
  const mine = (count: number) => post('/v1/test_helpers/crypto/blocks', { count });

  it('an invoice: pending, confirming once a block includes the deposit, paid when it is final', async () => {
    await mine(1);
    await watch();
    const invoice = await post('/v1/crypto/invoices', invoiceBody({ amount: '40' }));
    expect(invoice.status).toBe('pending');
    await post('/v1/test_helpers/crypto/deposits', { address: invoice.address, amount: '40' });
    await mine(1);
    await watch();
    expect(await get(`/v1/crypto/invoices/${invoice.invoice_id}`)).toMatchObject({
      status: 'confirming',
      paid_at: null,
    });

    await mine(BLOCKS_TO_FINALITY);
    await watch();
    const paid = await get(`/v1/crypto/invoices/${invoice.invoice_id}`);
    expect(paid.status).toBe('paid');
    expect(micro(paid.paid_amount)).toBe(40_000_000n);
    expect(paid.paid_at).toBe(testApp.clock.now().toISOString());
    const listed = await get(`/v1/crypto/invoices?status=paid&external_id=${encodeURIComponent(invoice.external_id)}`);
    expect(listed.data.map((entry: { invoice_id: string }) => entry.invoice_id)).toEqual([invoice.invoice_id]);
  });

  it('a wallet: a deposit is confirming, then credited; while blocked, a deposit is held', async () => {
    const wallet = await post('/v1/crypto/wallets', { client_id: externalId('client'), network: 'TRC20' });
    const { tx_id: firstTx } = await post('/v1/test_helpers/crypto/deposits', {
      address: wallet.address,
      amount: '7.5',
    });
    await mine(1);
    await watch();
    const seen = await get(`/v1/crypto/wallets/${wallet.wallet_id}`);
    expect(seen.deposits).toHaveLength(1);
    expect(seen.deposits[0]).toMatchObject({
      tx_id: firstTx,
      status: 'confirming',
      wallet_id: wallet.wallet_id,
      invoice_id: null,
      final_at: null,
    });
    expect(micro(seen.received_amount)).toBe(0n);

    await mine(BLOCKS_TO_FINALITY);
    await watch();
    const credited = await get(`/v1/crypto/wallets/${wallet.wallet_id}`);
    expect(credited.deposits[0]).toMatchObject({ tx_id: firstTx, status: 'credited' });
    expect(micro(credited.received_amount)).toBe(7_500_000n);

    await post(`/v1/crypto/wallets/${wallet.wallet_id}/block`);
    const { tx_id: heldTx } = await post('/v1/test_helpers/crypto/deposits', { address: wallet.address, amount: '2' });
    await mine(BLOCKS_TO_FINALITY + 1);
    await watch();
    const held = await get(`/v1/crypto/wallets/${wallet.wallet_id}`);
    expect(held.deposits.find((deposit: { tx_id: string }) => deposit.tx_id === heldTx)).toMatchObject({
      status: 'held',
    });
    expect(micro(held.held_amount)).toBe(2_000_000n);
    expect(micro(held.received_amount)).toBe(7_500_000n);
  });
});

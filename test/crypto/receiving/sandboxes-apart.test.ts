// Two sandbox shops on the one simulated chain (docs/crypto.md "Sandboxes kept
// apart"): shop A reorganises, arms faults on an address B pays too, tries to
// blacklist and fund B's addresses (refused: only addresses made for A), drains
// the hot wallet and mines 1,000 blocks, and B's deposits are credited and its
// payouts complete as if A did nothing, with the chain's clock never ahead of
// the wall clock. Then the helpers' per-shop budget of calls per minute.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/clock.ts';
import { createChainWatcher, type ChainWatcher } from '../../../src/crypto/receiving/chain-watcher.ts';
import type { OutgoingExecutor } from '../../../src/crypto/sending/executor.ts';
import type { SimulatedChain } from '../../../src/crypto/simchain/simulated-chain.ts';
import { backends } from '../../support/databases.ts';
import {
  createPayoutTestApp,
  payoutBody,
  recipient,
  sandboxExecutor,
  type PayoutShop,
  type PayoutTestApp,
} from '../payouts/payout-support.ts';
import { invoiceBody } from './crypto-routes-support.ts';

/** Solidified at head − 18: a transaction is final once 19 blocks include it and follow. */
const BLOCKS_TO_FINALITY = 19;
const WATCHER_PASSES_MAX = 10;
/** The simulated chain's genesis (chain-parameters.ts); the wall clock starts an hour later. */
const GENESIS_MS = 1_700_000_000_000;
const BLOCK_INTERVAL_MS = 3_000;

describe.each(backends)('sandbox shops kept apart on one chain on %s', (backend) => {
  let testApp: PayoutTestApp;
  let chain: SimulatedChain;
  let watcher: ChainWatcher;
  let executor: OutgoingExecutor;
  let shopA: PayoutShop;
  let shopB: PayoutShop;

  beforeAll(async () => {
    testApp = await createPayoutTestApp(backend, { clock: new ManualClock(new Date(GENESIS_MS + 3_600_000)) });
    const access = await testApp.crypto.chain.forMode('sandbox');
    chain = (await testApp.crypto.chain.sandboxChain()).chain;
    watcher = createChainWatcher({
      db: testApp.context.db,
      clock: testApp.clock,
      logger: testApp.context.logger,
      access,
    });
    // As the sending worker builds it for the sandbox: owners declared, the hot wallet topped up.
    executor = await sandboxExecutor(testApp, { topUpHotWallet: access.topUpHotWallet });
    shopA = await testApp.payoutShop();
    shopB = await testApp.payoutShop();
    for (const shop of [shopA, shopB]) await testApp.fund(shop, 1_000_000_000n);
  });
  afterAll(async () => {
    await testApp.expectLedgerGreen();
    await executor.release();
    await testApp.close();
  });

  const call = (shop: PayoutShop, path: string, body?: unknown) => testApp.call(shop.key, 'POST', path, body);
  async function post(shop: PayoutShop, path: string, body?: unknown) {
    const response = await call(shop, path, body);
    expect(response.statusCode, `${path}: ${response.body}`).toBeLessThan(300);
    return response.json();
  }
  const get = async (shop: PayoutShop, path: string) => (await testApp.call(shop.key, 'GET', path)).json();
  const mine = (shop: PayoutShop, count: number) => post(shop, '/v1/test_helpers/crypto/blocks', { count });
  const deposit = async (shop: PayoutShop, address: string, amount: string): Promise<string> =>
    (await post(shop, '/v1/test_helpers/crypto/deposits', { address, amount })).tx_id;
  const invoice = async (shop: PayoutShop, amount: string) =>
    post(shop, '/v1/crypto/invoices', invoiceBody({ amount }));
  async function watch(): Promise<void> {
    for (let pass = 0; pass < WATCHER_PASSES_MAX; pass++) {
      const result = await watcher.runPass();
      if (result.blocksScanned === 0 && result.depositsSettled === 0 && result.reorganisations === 0) return;
    }
    throw new Error(`the watcher still had work after ${WATCHER_PASSES_MAX} passes`);
  }
  /** What the sandbox chain's own ticker does: a block for every 3 s slot the wall clock passed. */
  const wallClockTicks = () => chain.advance(Math.max(0, testApp.clock.now().getTime() - chain.nowMs));
  const payoutStatus = async (shop: PayoutShop, id: string) => (await get(shop, `/v1/crypto/payouts/${id}`)).status;

  it('A’s reorg never replaces a block holding B’s deposit; it replaces A’s own blocks', async () => {
    await wallClockTicks();
    const invoiceA = await invoice(shopA, '5');
    const invoiceB = await invoice(shopB, '7');
    const txB = await deposit(shopB, invoiceB.address, '7');
    await deposit(shopA, invoiceA.address, '5');
    await mine(shopA, 1);
    const refused = await call(shopA, '/v1/test_helpers/crypto/reorg', { depth: 1 });
    expect(refused.statusCode, refused.body).toBe(409);
    expect(refused.json()).toMatchObject({ error: 'invalid_state' });
    expect(refused.json().message).toContain('other sandbox shops');
    const blockOfB = chain.findTransaction(txB)!.block;

    // A block of A's own: A may replace it, and A's deposit goes back to the pool.
    const txA = await deposit(shopA, invoiceA.address, '5');
    await mine(shopA, 1);
    expect(chain.findTransaction(txA)).toBeDefined();
    const reorganized = await call(shopA, '/v1/test_helpers/crypto/reorg', { depth: 1 });
    expect(reorganized.statusCode, reorganized.body).toBe(200);
    expect(chain.findTransaction(txB)!.block.id).toBe(blockOfB.id);

    await mine(shopB, BLOCKS_TO_FINALITY);
    await watch();
    expect((await get(shopB, `/v1/crypto/invoices/${invoiceB.invoice_id}`)).status).toBe('paid');
    const deposits = await testApp.context.db
      .selectFrom('crypto_deposits')
      .select(['status', 'block_id'])
      .where('invoice_id', '=', invoiceB.invoice_id)
      .execute();
    expect(deposits).toEqual([expect.objectContaining({ block_id: blockOfB.id })]);
    expect(deposits.map((row) => row.status)).not.toContain('orphaned');
  });

  it('A’s faults on an address B pays too hit A’s payouts only', async () => {
    await post(shopA, '/v1/test_helpers/crypto/faucet', { usdt: '100000', trx: '100000' });
    const shared = recipient();
    await post(shopA, '/v1/test_helpers/crypto/next_transfer_outcome', { address: shared, outcome: 'revert' });
    const ofB = await post(shopB, '/v1/crypto/payouts', payoutBody({ address: shared, amount: '3' }));
    await executor.runPass();
    await mine(shopB, 1);
    const ofA = await post(shopA, '/v1/crypto/payouts', payoutBody({ address: shared, amount: '2' }));
    await executor.runPass();
    await mine(shopA, 1);
    await mine(shopB, BLOCKS_TO_FINALITY);
    await executor.runPass();
    expect(await get(shopB, `/v1/crypto/payouts/${ofB.payout_id}`)).toMatchObject({
      status: 'completed',
      error: null,
    });
    expect(await get(shopA, `/v1/crypto/payouts/${ofA.payout_id}`)).toMatchObject({
      status: 'failed',
      error: { code: 'reverted' },
    });

    // never_included armed by A: B's transfer to the address still lands.
    await post(shopA, '/v1/test_helpers/crypto/next_transfer_outcome', { address: shared, outcome: 'never_included' });
    const again = await post(shopB, '/v1/crypto/payouts', payoutBody({ address: shared, amount: '4' }));
    await executor.runPass();
    await mine(shopB, 1 + BLOCKS_TO_FINALITY);
    await executor.runPass();
    expect(await payoutStatus(shopB, again.payout_id)).toBe('completed');
    expect(chain.state.usdtBalance(shared as never)).toBe(7_000_000n);
  });

  it('the shared hot wallet cannot be armed by one shop', async () => {
    const { hotWalletAddress } = (await testApp.crypto.chain.forMode('sandbox')).addressKey;
    const response = await call(shopA, '/v1/test_helpers/crypto/next_transfer_outcome', {
      address: hotWalletAddress,
      outcome: 'revert',
    });
    expect(response.statusCode).toBe(400);
    expect(response.json()).toMatchObject({ error: 'invalid_request' });
    expect(chain.state.nextTransferOutcomes.size + chain.state.ownedTransferOutcomes.size).toBe(1);
  });

  it('A’s blacklist and faucet reach only addresses made for A, and no merchant moves the energy factor: B’s payouts, quotes and deposits are untouched', async () => {
    const { hotWalletAddress } = (await testApp.crypto.chain.forMode('sandbox')).addressKey;
    const paidByB = recipient();
    const invoiceB = await invoice(shopB, '8');
    const quoteOf = async (shop: PayoutShop, address: string) =>
      call(shop, '/v1/crypto/payouts/quote', { network: 'TRC20', amount: '3', address });
    const quoteBefore = (await quoteOf(shopB, paidByB)).json();
    expect(quoteBefore.network_fee).toBeDefined();
    const ownOfB = (await post(shopB, '/v1/test_helpers/crypto/blacklist', { listed: false })).address as string;
    const listedBefore = [...chain.state.usdtBlacklist];

    // Addresses B pays, owns or was given, and the shared ones: refused for A, nothing listed or credited.
    for (const address of [paidByB, invoiceB.address, ownOfB, hotWalletAddress]) {
      const listing = await call(shopA, '/v1/test_helpers/crypto/blacklist', { address, listed: true });
      expect(listing.statusCode, listing.body).toBe(400);
      expect(listing.json()).toMatchObject({ error: 'invalid_request' });
      expect(listing.json().message).toContain("not one of this sandbox shop's own");
    }
    for (const address of [invoiceB.address, ownOfB, paidByB]) {
      const funding = await call(shopA, '/v1/test_helpers/crypto/faucet', { address, usdt: '8', trx: '1' });
      expect(funding.statusCode, funding.body).toBe(400);
      expect(funding.json()).toMatchObject({ error: 'invalid_request' });
    }
    expect([...chain.state.usdtBlacklist]).toEqual(listedBefore);
    expect(chain.state.usdtBalance(invoiceB.address as never)).toBe(0n);
    expect(chain.state.account(ownOfB as never)).toBeUndefined();
    // The energy factor is the operator's (paygate chain simulate), not a merchant helper.
    expect((await call(shopA, '/v1/test_helpers/crypto/energy_factor', { factor: 9_000 })).statusCode).toBe(404);

    // What A may do lands on A's own addresses only.
    const listedByA = (await post(shopA, '/v1/test_helpers/crypto/blacklist', { listed: true })).address as string;
    expect((await quoteOf(shopA, listedByA)).json()).toMatchObject({ error: 'address_blacklisted' });
    const invoiceA = await invoice(shopA, '4');
    expect(await post(shopA, '/v1/test_helpers/crypto/faucet', { address: invoiceA.address, trx: '2' })).toMatchObject({
      address: invoiceA.address,
      trx: '2',
    });

    const quoteAfter = (await quoteOf(shopB, paidByB)).json();
    expect(quoteAfter.network_fee).toBe(quoteBefore.network_fee);
    const payout = await post(shopB, '/v1/crypto/payouts', payoutBody({ address: paidByB, amount: '3' }));
    await deposit(shopB, invoiceB.address, '8');
    await executor.runPass();
    await mine(shopB, 1 + BLOCKS_TO_FINALITY);
    await executor.runPass();
    await watch();
    expect(await payoutStatus(shopB, payout.payout_id)).toBe('completed');
    expect(chain.state.usdtBalance(paidByB as never)).toBe(3_000_000n);
    const paid = await get(shopB, `/v1/crypto/invoices/${invoiceB.invoice_id}`);
    expect(paid).toMatchObject({ status: 'paid', paid_amount: '8' });
  });

  it('A’s drain leaves B’s payout in flight its TRX, and B’s next payout is topped up', async () => {
    const inFlight = await post(shopB, '/v1/crypto/payouts', payoutBody({ amount: '6' }));
    await executor.runPass();
    expect(await payoutStatus(shopB, inFlight.payout_id)).toBe('processing');
    const drained = await post(shopA, '/v1/test_helpers/crypto/hot_wallet/drain_trx', {});
    // Taken: all but what B's transfer in the pool may burn.
    expect(Number(drained.drained_trx)).toBeGreaterThan(0);
    expect(Number(drained.trx)).toBeGreaterThan(0);
    await mine(shopB, 1 + BLOCKS_TO_FINALITY);
    await executor.runPass();
    expect(await payoutStatus(shopB, inFlight.payout_id)).toBe('completed');

    const next = await post(shopB, '/v1/crypto/payouts', payoutBody({ amount: '1' }));
    await executor.runPass();
    await mine(shopB, 1 + BLOCKS_TO_FINALITY);
    await executor.runPass();
    expect(await payoutStatus(shopB, next.payout_id)).toBe('completed');
  });

  it('A mining 1,000 blocks keeps the chain’s clock behind the wall clock: B’s deposit lands in the next slot', async () => {
    const invoiceB = await invoice(shopB, '9');
    const mined = await mine(shopA, 1_000);
    expect(mined.head_block).toBe(chain.head.number);
    const wallMs = testApp.clock.now().getTime();
    expect(chain.head.timestampMs).toBeLessThanOrEqual(wallMs);
    expect(chain.nowMs).toBeLessThanOrEqual(wallMs);

    const txB = await deposit(shopB, invoiceB.address, '9');
    // One slot of wall time later the chain's own ticker has made a block, and it holds B's deposit.
    testApp.clock.advance(BLOCK_INTERVAL_MS);
    const produced = wallClockTicks();
    expect(produced.length).toBeGreaterThanOrEqual(1);
    const included = chain.findTransaction(txB)!.block;
    expect(included.timestampMs).toBeLessThanOrEqual(testApp.clock.now().getTime());
    expect(included.timestampMs).toBeGreaterThan(wallMs);

    // And 19 slots later it is final and credited.
    testApp.clock.advance(BLOCKS_TO_FINALITY * BLOCK_INTERVAL_MS);
    expect(wallClockTicks().length).toBe(BLOCKS_TO_FINALITY);
    await watch();
    expect((await get(shopB, `/v1/crypto/invoices/${invoiceB.invoice_id}`)).status).toBe('paid');
  });
});

describe.each(backends)('the crypto test helpers’ budget per shop on %s', (backend) => {
  let testApp: PayoutTestApp;

  beforeAll(async () => {
    testApp = await createPayoutTestApp(backend, { config: { sandboxHelperCallsPerMinute: 3 } });
  });
  afterAll(() => testApp.close());

  it('past its calls of the minute a shop gets 429 rate_limited with Retry-After; another shop does not; the next minute it may again', async () => {
    const [shopA, shopB] = [await testApp.payoutShop(), await testApp.payoutShop()];
    const mine = (shop: PayoutShop) => testApp.call(shop.key, 'POST', '/v1/test_helpers/crypto/blocks', { count: 1 });
    for (let index = 0; index < 3; index++) expect((await mine(shopA)).statusCode).toBe(200);
    const head = (await testApp.crypto.chain.sandboxChain()).chain.head.number;
    const refused = await mine(shopA);
    expect(refused.statusCode).toBe(429);
    expect(refused.json()).toMatchObject({ error: 'rate_limited' });
    expect(refused.json().message).toContain('3 crypto test-helper calls');
    expect(Number(refused.headers['retry-after'])).toBe(60);
    expect((await testApp.crypto.chain.sandboxChain()).chain.head.number).toBe(head);
    // A malformed call counts too.
    expect((await testApp.call(shopA.key, 'POST', '/v1/test_helpers/crypto/blocks', {})).statusCode).toBe(429);

    expect((await mine(shopB)).statusCode).toBe(200);
    testApp.clock.advance(60_000);
    expect((await mine(shopA)).statusCode).toBe(200);
  });
});

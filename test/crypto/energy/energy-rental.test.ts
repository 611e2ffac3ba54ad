// Energy rental through itrx.io's API: the provider client against the
// simulator of that API (prices, signed orders, orders found again by our own
// reference), and the executor's energy manager renting when that is cheaper
// than burning, waiting for the delegation, and falling back to burning when the
// provider fails or its energy never shows on chain — bounded, never for ever.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { EnergyProviderError } from '../../../src/crypto/energy/energy-provider.ts';
import {
  createEnergyManager,
  RENTAL_DELIVERY_WAIT_MS,
  RENTAL_VISIBLE_WAIT_MS,
} from '../../../src/crypto/energy/energy-manager.ts';
import type { EnergySourceSetting } from '../../../src/crypto/energy/energy-sources.ts';
import { rentalsOf } from '../../../src/crypto/energy/energy-repository.ts';
import { simulatedChainDelegation } from '../../../src/crypto/simchain/rental-delegation.ts';
import { createItrxProvider, itrxCanonicalJson, itrxSignature } from '../../../src/crypto/energy/itrx/itrx-provider.ts';
import { startItrxSimulator, type ItrxSimulator } from '../../../src/crypto/energy/itrx/itrx-simulator.ts';
import { findTransfer } from '../../../src/crypto/sending/sending-repository.ts';
import { sunToMicroUsdt } from '../../../src/crypto/sending/transfer-cost.ts';
import type { TronAddress } from '../../../src/crypto/tron/address.ts';
import { backends } from '../../support/databases.ts';
import { expectLedgerSound, openReceivingSetup, type ReceivingSetup } from '../receiving/receiving-service-support.ts';
import {
  enqueuePayout,
  executorFor,
  freshAddress,
  fundHotWallet,
  mineToFinal,
  newLog,
  type HandlerLog,
} from '../sending/executor-support.ts';
import { testKey } from '../simchain/fixtures/transfers.ts';

const API_KEY = 'B433BFF1CDE7450AA38A56BEAC690DD4';
const API_SECRET = '0285A2741D0E76E2E187260EB23E51851D48403A756333E7D0CF845406ABF3E8';
/** A provider's delegation that never happens: its orders stay pending (itrx status 30) for ever. */
const neverDelegates = (): Promise<string> => new Promise<string>(() => undefined);
/** Sun per energy for an hour: below the simulated chain's burn price of 100. */
const RENT_PRICE = 40;
const TRX = 1_000_000n;

describe('itrx signing', () => {
  it('signs `${timestamp}&${sorted JSON}` with HMAC-SHA256: the example of itrx’s documentation (general/sign.html, step 3)', () => {
    const body = itrxCanonicalJson({
      receive_address: 'TExWKszFWYTKZH8LYiovAPKzS3L9MLZ4kw',
      period: '1D',
      out_trade_no: '123456',
      energy_amount: 32000,
      callback_url: 'http://{mydomain}/callback',
    });
    expect(body).toBe(
      '{"callback_url":"http://{mydomain}/callback","energy_amount":32000,"out_trade_no":"123456","period":"1D","receive_address":"TExWKszFWYTKZH8LYiovAPKzS3L9MLZ4kw"}',
    );
    expect(itrxSignature(API_SECRET, '1686796826', body)).toBe(
      '07c125cabfe006614a02131f927cca9e7a654f7644a817b155fad591e1c50f7b',
    );
  });
});

describe('the itrx provider against the itrx simulator', () => {
  let simulator: ItrxSimulator;
  const delegated: { address: TronAddress; energy: bigint }[] = [];
  beforeEach(async () => {
    delegated.length = 0;
    simulator = await startItrxSimulator({
      apiKey: API_KEY,
      apiSecret: API_SECRET,
      priceSunPerEnergy: RENT_PRICE,
      balanceSun: 100_000_000n,
      delegate: async (address, energy) => {
        delegated.push({ address, energy });
        return 'ab'.repeat(32);
      },
    });
  });
  afterEach(() => simulator.close());

  it('quotes at least the minimum order with the small-order addition, orders under our reference, and finds the order again by it', async () => {
    const provider = createItrxProvider({ url: simulator.url, apiKey: API_KEY, apiSecret: API_SECRET });
    expect(await provider.quote(20_000n)).toEqual({ energy: 32_000n, priceSun: 32_000n * 40n + 600_000n });
    expect(await provider.quote(131_000n)).toEqual({ energy: 131_000n, priceSun: 131_000n * 40n });
    const to = freshAddress();
    const order = await provider.rent({ address: to, energy: 65_000n, reference: 'rent_ours_1' });
    expect(order).toMatchObject({ status: 'pending', priceSun: 65_000n * 40n });
    await simulator.settled();
    expect(delegated).toEqual([{ address: to, energy: 65_000n }]);
    expect(await provider.order('rent_ours_1')).toEqual({
      orderId: order.orderId,
      status: 'delivered',
      priceSun: 65_000n * 40n,
    });
    expect(await provider.order('never_placed')).toBeNull();
    expect(simulator.balanceSun()).toBe(100_000_000n - 65_000n * 40n);
  });

  it('a wrong secret is refused, nothing ordered', async () => {
    const provider = createItrxProvider({ url: simulator.url, apiKey: API_KEY, apiSecret: 'not-the-secret' });
    await expect(provider.rent({ address: freshAddress(), energy: 65_000n, reference: 'r1' })).rejects.toThrow(
      EnergyProviderError,
    );
    expect(simulator.orders).toHaveLength(0);
  });
});

describe.each(backends)('renting energy for outgoing transfers on %s', (backend) => {
  let setup: ReceivingSetup;
  let log: HandlerLog;
  let simulator: ItrxSimulator | undefined;
  beforeEach(async () => {
    setup = await openReceivingSetup(backend);
    log = newLog();
  });
  afterEach(async () => {
    await simulator?.close();
    await expectLedgerSound(setup);
    await setup.close();
  });

  async function rentingExecutor(
    delegate: (address: TronAddress, energy: bigint) => Promise<string>,
    sources: readonly EnergySourceSetting[] = ['stake', 'rent', 'burn'],
  ) {
    simulator = await startItrxSimulator({
      apiKey: API_KEY,
      apiSecret: API_SECRET,
      priceSunPerEnergy: RENT_PRICE,
      balanceSun: 1_000_000_000n,
      delegate,
    });
    const energyManager = createEnergyManager({
      db: setup.context.db,
      clock: setup.clock,
      logger: setup.context.logger,
      chain: 'tron-sandbox',
      sources: new Set(sources),
      provider: createItrxProvider({ url: simulator.url, apiKey: API_KEY, apiSecret: API_SECRET }),
    });
    return executorFor(setup, log, { energyManager });
  }

  it('a rental lands on chain: the provider’s DelegateResource puts the energy on the hot wallet, the payout burns nothing for energy, the rental’s price is its cost', async () => {
    fundHotWallet(setup);
    const provider = testKey('itrx provider');
    const chain = setup.sandbox.chain;
    chain.faucet(provider.address, { trxSun: 2_000_000n * TRX });
    const frozen = chain.sendStake(
      {
        type: 'FreezeBalanceV2Contract',
        ownerAddress: provider.address,
        frozenBalanceSun: 1_000_000n * TRX,
        resource: 'ENERGY',
      },
      provider.privateKey,
    );
    expect(frozen.result).toBe(true);
    chain.mine(1);
    const hotWallet = setup.access.addressKey.hotWalletAddress;
    const payout = await enqueuePayout(setup, freshAddress(), 3_000_000n);
    const executor = await rentingExecutor(simulatedChainDelegation(chain, provider.privateKey));
    expect(await executor.runPass()).toMatchObject({ signed: 0 });
    await simulator!.settled();
    expect(simulator!.orders[0]!.delegateHash).toMatch(/^[0-9a-f]{64}$/);
    chain.mine(1);
    const [delegation] = await setup.access.node.getDelegatedResources(provider.address, hotWallet);
    expect(delegation!.energySun).toBeGreaterThan(0n);
    expect(delegation!.energyLockExpireMs).toBeGreaterThan(0);
    const rentedEnergy = BigInt((await setup.access.node.getAccountResources(hotWallet)).energyAvailable);
    expect(rentedEnergy).toBeGreaterThanOrEqual(BigInt(simulator!.orders[0]!.energy));
    expect(await executor.runPass()).toMatchObject({ signed: 1 });
    chain.mine(1);
    mineToFinal(setup);
    expect(await executor.runPass()).toMatchObject({ confirmed: 1 });
    const [rental] = await rentalsOf(setup.context.db, [payout.id]);
    expect(rental).toMatchObject({ status: 'delivered', price_sun: simulator!.orders[0]!.amountSun });
    const sent = (await findTransfer(setup.context.db, payout.id))!;
    const receipt = (await setup.access.node.getTransactionOutcome(sent.tx_id!))!;
    expect(receipt.energyUsed).toBeGreaterThan(0);
    expect(receipt.energyFeeSun).toBe(0n);
    expect(sent).toMatchObject({
      energy_plan: 'rented',
      energy_source: 'rented',
      energy_own: BigInt(receipt.energyUsed),
      energy_fee_sun: 0n,
      rental_sun: rental!.price_sun,
    });
    expect(sent.cost_micro).toBe(sunToMicroUsdt(sent.fee_sun! + rental!.price_sun, 300_000n));
  });

  it('a provider that fails every order: the payout waits for each, then burns after the bounded number of rentals', async () => {
    fundHotWallet(setup);
    const to = freshAddress();
    const payout = await enqueuePayout(setup, to, 3_000_000n);
    const executor = await rentingExecutor(async () => {
      throw new Error('the provider has no energy left');
    });
    expect(await executor.runPass()).toMatchObject({ signed: 0, failed: 0 });
    await simulator!.settled();
    expect(await executor.runPass()).toMatchObject({ signed: 0 });
    await simulator!.settled();
    expect(await executor.runPass()).toMatchObject({ signed: 1 });
    const rentals = await rentalsOf(setup.context.db, [payout.id]);
    expect(rentals.map((rental) => rental.status)).toEqual(['failed', 'failed']);
    setup.sandbox.chain.mine(1);
    mineToFinal(setup);
    expect(await executor.runPass()).toMatchObject({ confirmed: 1 });
    const sent = (await findTransfer(setup.context.db, payout.id))!;
    expect(sent).toMatchObject({ energy_plan: 'burned', energy_source: 'burned', rental_sun: null });
    expect(setup.sandbox.chain.state.usdtBalance(to)).toBe(3_000_000n);
  });

  it('a rental reported delivered whose energy never shows on chain: waited for, rented once more, then burned; what the rentals cost is in the transfer’s cost', async () => {
    fundHotWallet(setup);
    const payout = await enqueuePayout(setup, freshAddress(), 3_000_000n);
    // Claims a delegation the chain never saw (a misbehaving provider).
    const executor = await rentingExecutor(async () => 'cd'.repeat(32));
    expect(await executor.runPass()).toMatchObject({ signed: 0 });
    await simulator!.settled();
    expect(await executor.runPass()).toMatchObject({ signed: 0 }); // delivered: given time to show on the node
    setup.clock.advance(RENTAL_VISIBLE_WAIT_MS);
    expect(await executor.runPass()).toMatchObject({ signed: 0 }); // a second rental
    await simulator!.settled();
    expect(await executor.runPass()).toMatchObject({ signed: 0 });
    setup.clock.advance(RENTAL_VISIBLE_WAIT_MS);
    expect(await executor.runPass()).toMatchObject({ signed: 1 });
    const rentals = await rentalsOf(setup.context.db, [payout.id]);
    expect(rentals.map((rental) => rental.status)).toEqual(['delivered', 'delivered']);
    const rentalSun = rentals.reduce((sum, rental) => sum + rental.price_sun, 0n);
    expect(rentalSun).toBe(2n * simulator!.orders[0]!.amountSun);
    setup.sandbox.chain.mine(1);
    mineToFinal(setup);
    expect(await executor.runPass()).toMatchObject({ confirmed: 1 });
    const sent = (await findTransfer(setup.context.db, payout.id))!;
    expect(sent).toMatchObject({ energy_source: 'burned', rental_sun: rentalSun });
    expect(sent.cost_micro).toBe(sunToMicroUsdt(sent.fee_sun! + rentalSun, 300_000n));
  });

  it('a provider that never delivers: each rental is given up after RENTAL_DELIVERY_WAIT_MS, one more is ordered, then the payout burns; each order paid once, both counted in its cost', async () => {
    fundHotWallet(setup);
    const to = freshAddress();
    const payout = await enqueuePayout(setup, to, 3_000_000n);
    const executor = await rentingExecutor(neverDelegates);
    const balanceBefore = simulator!.balanceSun();
    expect(await executor.runPass()).toMatchObject({ signed: 0 });
    setup.clock.advance(RENTAL_DELIVERY_WAIT_MS - 1);
    expect(await executor.runPass()).toMatchObject({ signed: 0 }); // still within the bound: waited for
    expect(simulator!.orders).toHaveLength(1);
    setup.clock.advance(1);
    expect(await executor.runPass()).toMatchObject({ signed: 0 }); // given up; the one more rental ordered
    expect(simulator!.orders).toHaveLength(2);
    setup.clock.advance(RENTAL_DELIVERY_WAIT_MS);
    expect(await executor.runPass()).toMatchObject({ signed: 1 }); // given up again: burned
    const rentals = await rentalsOf(setup.context.db, [payout.id]);
    expect(rentals.map((rental) => [rental.status, rental.failure_reason])).toEqual([
      ['failed', 'not_delivered_in_time'],
      ['failed', 'not_delivered_in_time'],
    ]);
    // Each rental was ordered once, under its own id: nothing paid twice.
    expect(simulator!.orders.map((order) => order.outTradeNo)).toEqual(rentals.map((rental) => rental.id));
    const paidSun = simulator!.orders.reduce((sum, order) => sum + order.amountSun, 0n);
    expect(balanceBefore - simulator!.balanceSun()).toBe(paidSun);
    expect(rentals.reduce((sum, rental) => sum + rental.price_sun, 0n)).toBe(paidSun);
    setup.sandbox.chain.mine(1);
    mineToFinal(setup);
    expect(await executor.runPass()).toMatchObject({ confirmed: 1 });
    expect(simulator!.orders).toHaveLength(2);
    const sent = (await findTransfer(setup.context.db, payout.id))!;
    expect(sent).toMatchObject({ energy_source: 'burned', rental_sun: paidSun });
    expect(setup.sandbox.chain.state.usdtBalance(to)).toBe(3_000_000n);
  });

  it('a provider that never delivers with burning off: both rentals given up, then the payout waits unsigned and nothing more is ordered', async () => {
    fundHotWallet(setup);
    const payout = await enqueuePayout(setup, freshAddress(), 3_000_000n);
    const executor = await rentingExecutor(neverDelegates, ['stake', 'rent']);
    expect(await executor.runPass()).toMatchObject({ signed: 0 });
    setup.clock.advance(RENTAL_DELIVERY_WAIT_MS);
    expect(await executor.runPass()).toMatchObject({ signed: 0 });
    setup.clock.advance(RENTAL_DELIVERY_WAIT_MS);
    expect(await executor.runPass()).toMatchObject({ signed: 0, failed: 0 });
    setup.clock.advance(RENTAL_DELIVERY_WAIT_MS);
    expect(await executor.runPass()).toMatchObject({ signed: 0, failed: 0 });
    expect(simulator!.orders).toHaveLength(2);
    const rentals = await rentalsOf(setup.context.db, [payout.id]);
    expect(rentals.map((rental) => rental.failure_reason)).toEqual(['not_delivered_in_time', 'not_delivered_in_time']);
    expect(await findTransfer(setup.context.db, payout.id)).toMatchObject({ tx_id: null });
  });

  it('a provider that stops answering about a pending order: given up after RENTAL_DELIVERY_WAIT_MS all the same, and the payout burns', async () => {
    fundHotWallet(setup);
    const payout = await enqueuePayout(setup, freshAddress(), 3_000_000n);
    const executor = await rentingExecutor(neverDelegates);
    expect(await executor.runPass()).toMatchObject({ signed: 0 });
    await simulator!.close();
    simulator = undefined;
    expect(await executor.runPass()).toMatchObject({ signed: 0 }); // no answer, within the bound: waited for
    setup.clock.advance(RENTAL_DELIVERY_WAIT_MS);
    expect(await executor.runPass()).toMatchObject({ signed: 1 }); // given up; a new order cannot be placed
    const rentals = await rentalsOf(setup.context.db, [payout.id]);
    expect(rentals.map((rental) => [rental.status, rental.failure_reason])).toEqual([
      ['failed', 'not_delivered_in_time'],
    ]);
  });

  it('renting costs more than burning: nothing is rented, the payout burns at once', async () => {
    fundHotWallet(setup);
    simulator = await startItrxSimulator({
      apiKey: API_KEY,
      apiSecret: API_SECRET,
      priceSunPerEnergy: 150,
      balanceSun: 1_000_000_000n,
      delegate: async () => 'ef'.repeat(32),
    });
    const energyManager = createEnergyManager({
      db: setup.context.db,
      clock: setup.clock,
      logger: setup.context.logger,
      chain: 'tron-sandbox',
      sources: new Set(['rent', 'burn']),
      provider: createItrxProvider({ url: simulator.url, apiKey: API_KEY, apiSecret: API_SECRET }),
    });
    const payout = await enqueuePayout(setup, freshAddress(), 3_000_000n);
    expect(await executorFor(setup, log, { energyManager }).runPass()).toMatchObject({ signed: 1 });
    expect(simulator.orders).toHaveLength(0);
    expect(await rentalsOf(setup.context.db, [payout.id])).toEqual([]);
  });
});

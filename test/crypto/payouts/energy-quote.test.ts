// The payout quote follows the energy source that will be used: a payout whose
// transfer the hot wallet's own staked energy covers (free now, promised to no
// other transfer) reserves that energy at creation and is quoted without the
// energy part; the next one, which the stake no longer covers, is quoted at the
// burn price. Concurrent creations never promise more energy than is free. The
// executor signs reserved transfers first, so a reserved payout's chain cost
// stays within its quote; when the energy is gone at signing anyway (delegated
// away here), the payout still goes, the merchant is charged only the quote and
// the extra burn is booked to the gateway's network costs.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createEnergyManager } from '../../../src/crypto/energy/energy-manager.ts';
import type { OutgoingExecutor } from '../../../src/crypto/sending/executor.ts';
import { findTransfer } from '../../../src/crypto/sending/sending-repository.ts';
import { sunToMicroUsdt } from '../../../src/crypto/sending/transfer-cost.ts';
import { backends } from '../../support/databases.ts';
import {
  createPayoutTestApp,
  micro,
  payoutBody,
  recipient,
  sandboxExecutor,
  type PayoutShop,
  type PayoutTestApp,
} from './payout-support.ts';
import { energyReservations, NEW_HOLDER_ENERGY, stakeHotWallet, transferFees } from './energy-quote-support.ts';

const TRX = 1_000_000n;
const BLOCKS_TO_FINALITY = 19;

describe.each(backends)('the payout quote follows the energy source on %s', (backend) => {
  let testApp: PayoutTestApp;
  let shop: PayoutShop;
  let executor: OutgoingExecutor;

  beforeEach(async () => {
    testApp = await createPayoutTestApp(backend);
    shop = await testApp.payoutShop();
    await testApp.fund(shop, 1_000_000_000n);
    const { context } = testApp;
    const access = await testApp.crypto.chain.forMode('sandbox');
    executor = await sandboxExecutor(testApp, {
      energyManager: createEnergyManager({
        db: context.db,
        clock: context.clock,
        logger: context.logger,
        chain: access.chain,
        sources: new Set(['stake', 'burn']),
      }),
    });
    await post('/v1/test_helpers/crypto/faucet', { usdt: '100000', trx: '100000' });
  });
  afterEach(async () => {
    await testApp.expectLedgerGreen();
    await executor.release();
    await testApp.close();
  });

  async function post(path: string, body?: unknown) {
    const response = await testApp.call(shop.key, 'POST', path, body);
    expect(response.statusCode, `${path}: ${response.body}`).toBeLessThan(300);
    return response.json();
  }
  const mine = (count: number) => post('/v1/test_helpers/crypto/blocks', { count });

  const rate = () => testApp.context.config.trxUsdtRateMicro;
  const bandwidthFee = () => transferFees(testApp).bandwidthFee;
  const burnFee = () => transferFees(testApp).feeWithEnergyAt();
  const stake = (trx: bigint) => stakeHotWallet(testApp, trx);
  const reservations = () => energyReservations(testApp);

  async function transferOf(payoutId: string) {
    const payout = await testApp.context.db
      .selectFrom('crypto_payouts')
      .select('outgoing_transfer_id')
      .where('id', '=', payoutId)
      .executeTakeFirstOrThrow();
    return (await findTransfer(testApp.context.db, payout.outgoing_transfer_id))!;
  }

  async function carryToFinal(): Promise<void> {
    await executor.runPass();
    await mine(1);
    await mine(BLOCKS_TO_FINALITY);
    await executor.runPass();
  }

  it('a staked hot wallet: the quote’s network_fee is lower by exactly the energy part', async () => {
    const address = recipient();
    const unstaked = await post('/v1/crypto/payouts/quote', { network: 'TRC20', amount: '10', address });
    expect(micro(unstaked.network_fee)).toBe(burnFee());
    await stake(20_000n);
    const staked = await post('/v1/crypto/payouts/quote', { network: 'TRC20', amount: '10', address });
    expect(micro(staked.network_fee)).toBe(bandwidthFee());
    expect(micro(staked.total_debit)).toBe(micro(unstaked.total_debit) - (burnFee() - bandwidthFee()));
    // A quote reserves nothing.
    expect(await reservations()).toEqual([]);
  });

  it('two payouts when the stake covers one: the first reserves it and is quoted low, the second at the burn price', async () => {
    const free = await stake(20_000n);
    expect(free).toBeGreaterThanOrEqual(NEW_HOLDER_ENERGY);
    expect(free).toBeLessThan(2n * NEW_HOLDER_ENERGY);
    const first = await post('/v1/crypto/payouts', payoutBody());
    expect(micro(first.network_fee)).toBe(bandwidthFee());
    expect(await reservations()).toEqual([
      { transfer_id: (await transferOf(first.payout_id)).id, energy: NEW_HOLDER_ENERGY },
    ]);
    // The quote now says what a creation would charge: the stake is promised.
    const quote = await post('/v1/crypto/payouts/quote', { network: 'TRC20', amount: '10', address: recipient() });
    expect(micro(quote.network_fee)).toBe(burnFee());
    const second = await post('/v1/crypto/payouts', payoutBody());
    expect(micro(second.network_fee)).toBe(burnFee());
    expect(await reservations()).toHaveLength(1);
  });

  it('concurrent creations never promise more own energy than is free', async () => {
    const free = await stake(45_000n);
    const fitting = free / NEW_HOLDER_ENERGY;
    expect(fitting).toBeGreaterThanOrEqual(3n);
    const created = await Promise.all(Array.from({ length: 12 }, () => post('/v1/crypto/payouts', payoutBody())));
    const low = created.filter((payout) => micro(payout.network_fee) === bandwidthFee());
    const burned = created.filter((payout) => micro(payout.network_fee) === burnFee());
    expect(low).toHaveLength(Number(fitting));
    expect(burned).toHaveLength(created.length - low.length);
    const held = await reservations();
    expect(held.reduce((sum, row) => sum + row.energy, 0n)).toBeLessThanOrEqual(free);
    const reservedTransfers = new Set(held.map((row) => row.transfer_id));
    for (const payout of low) expect(reservedTransfers.has((await transferOf(payout.payout_id)).id)).toBe(true);
  });

  it('a reserved payout costs no more than its quote, signed before an older unreserved one that would take its energy', async () => {
    const older = await post('/v1/crypto/payouts', payoutBody());
    expect(micro(older.network_fee)).toBe(burnFee());
    await stake(20_000n);
    const reserved = await post('/v1/crypto/payouts', payoutBody());
    expect(micro(reserved.network_fee)).toBe(bandwidthFee());
    await carryToFinal();
    for (const payout of [older, reserved]) {
      const shown = (await testApp.call(shop.key, 'GET', `/v1/crypto/payouts/${payout.payout_id}`)).json();
      expect(shown.status).toBe('completed');
    }
    const sent = await transferOf(reserved.payout_id);
    expect(sent).toMatchObject({ energy_plan: 'staked', energy_source: 'staked', energy_fee_sun: 0n });
    expect(sent.cost_micro!).toBeLessThanOrEqual(micro(reserved.network_fee));
    // What the stake had left went to the older one, which burned the rest within its own quote.
    const burned = await transferOf(older.payout_id);
    expect(burned.cost_micro!).toBeLessThanOrEqual(micro(older.network_fee));
    // Final transfers no longer hold energy: the next creation may reserve what recovers.
    const quote = await post('/v1/crypto/payouts/quote', { network: 'TRC20', amount: '10', address: recipient() });
    expect(micro(quote.network_fee)).toBe(burnFee());
  });

  it('the reserved energy gone at signing: the payout still goes, the merchant pays the quote, the gateway the extra burn', async () => {
    await stake(20_000n);
    const before = await testApp.balance(shop);
    const payout = await post('/v1/crypto/payouts', payoutBody());
    expect(micro(payout.network_fee)).toBe(bandwidthFee());
    // The stake is delegated to another account: the hot wallet no longer has the energy it promised.
    const access = await testApp.crypto.chain.forMode('sandbox');
    const { chain } = await testApp.crypto.chain.sandboxChain();
    // java-tron delegates only to an account that exists.
    const elsewhere = recipient() as never;
    chain.faucet(elsewhere, { trxSun: 1n * TRX, usdt: 0n });
    const delegated = chain.sendStake(
      {
        type: 'DelegateResourceContract',
        ownerAddress: access.addressKey.hotWalletAddress,
        resource: 'ENERGY',
        balanceSun: 19_000n * TRX,
        receiverAddress: elsewhere,
        lock: false,
        lockPeriodBlocks: 0n,
      },
      (await access.signingKey()).hotWalletPrivateKey(),
    );
    expect(delegated).toMatchObject({ result: true });
    chain.mine(1);
    const costsBefore = await networkCosts();
    await carryToFinal();
    const shown = (await testApp.call(shop.key, 'GET', `/v1/crypto/payouts/${payout.payout_id}`)).json();
    expect(shown.status).toBe('completed');
    const sent = await transferOf(payout.payout_id);
    expect(sent.energy_fee_sun!).toBeGreaterThan(0n);
    expect(sent.cost_micro!).toBeGreaterThan(micro(payout.network_fee));
    // The merchant was charged the quote, nothing more.
    const after = await testApp.balance(shop);
    expect(before.available - after.available).toBe(micro(payout.total_debit));
    expect(after.pending).toBe(before.pending);
    // The chain's whole cost is booked as the gateway's network cost, against the fee the merchant paid.
    expect((await networkCosts()) - costsBefore).toBe(sunToMicroUsdt(sent.fee_sun!, rate()));
  });

  /** The sandbox book's network_costs, all shards: what outgoing transactions burned, in micro-USDT. */
  async function networkCosts(): Promise<bigint> {
    const rows = await testApp.context.db
      .selectFrom('ledger_accounts')
      .select(['credits_posted', 'debits_posted'])
      .where('book', '=', 'sandbox')
      .where('kind', '=', 'network_costs')
      .execute();
    return rows.reduce((sum, row) => sum + BigInt(row.credits_posted) - BigInt(row.debits_posted), 0n);
  }
});

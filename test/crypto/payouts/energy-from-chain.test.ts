// Energy from the chain, end to end: the simulated USDT contract's dynamic
// energy factor (java-tron VM.play) is raised mid-run through the simulator's
// control surface; once the gateway's clock has passed the factor's cache
// (ENERGY_FACTOR_CACHE_MS), quotes and the fee_limit the executor signs follow
// the new figure, and every payout completes — none OUT_OF_ENERGY. Above
// PAYGATE_TRON_TRANSFER_ENERGY_MAX nothing is quoted (503) and a queued
// transfer waits unsigned, then goes once the factor falls back.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ManualClock } from '../../../src/clock.ts';
import type { OutgoingExecutor } from '../../../src/crypto/sending/executor.ts';
import { ceilToCent } from '../../../src/crypto/payouts/payout-settings.ts';
import { sunToMicroUsdt, USDT_TRANSFER_BANDWIDTH } from '../../../src/crypto/sending/transfer-cost.ts';
import { ENERGY_FACTOR_CACHE_MS, feeLimitFor } from '../../../src/crypto/chain/transfer-energy.ts';
import type { SimulatorControl } from '../../../src/crypto/simchain/control-client.ts';
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
/** The simulated chain's prices (getEnergyFee, getTransactionFee). */
const ENERGY_PRICE_SUN = 100n;
const BANDWIDTH_PRICE_SUN = 1_000n;
const NEW_HOLDER_BASE = 130_285n;
const HOLDER_BASE = 64_285n;
const atFactor = (base: bigint, factor: bigint) => base + (base * factor) / 10_000n;

describe.each(backends)('energy sized from the chain on %s', (backend) => {
  let testApp: PayoutTestApp;
  let shop: PayoutShop;
  let executor: OutgoingExecutor;
  let control: SimulatorControl;

  beforeAll(async () => {
    testApp = await createPayoutTestApp(backend);
    shop = await testApp.payoutShop();
    await testApp.fund(shop, 1_000_000_000n);
    const { context } = testApp;
    control = await testApp.crypto.chain.sandboxControl();
    executor = await sandboxExecutor(testApp, {
      fundsWaitSeconds: 3_600,
      transferEnergyMax: context.config.tronTransferEnergyMax,
    });
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
  const quote = async (address: string) =>
    micro((await post('/v1/crypto/payouts/quote', { network: 'TRC20', amount: '10', address })).network_fee);
  const createPayout = (address: string) =>
    post('/v1/crypto/payouts', { external_id: externalId(), network: 'TRC20', amount: '10', address });
  /** The network fee a quote gives for `energy` at the chain's prices and the configured rate. */
  const feeFor = (energy: bigint) =>
    ceilToCent(
      sunToMicroUsdt(
        energy * ENERGY_PRICE_SUN + USDT_TRANSFER_BANDWIDTH * BANDWIDTH_PRICE_SUN,
        testApp.context.config.trxUsdtRateMicro,
      ),
    );
  /** Past the factor's cache: the next quote and pass read the factor again. */
  const letFactorCacheExpire = () => (testApp.context.clock as ManualClock).advance(ENERGY_FACTOR_CACHE_MS + 1);
  async function feeLimitOf(payoutId: string): Promise<bigint> {
    const payout = await testApp.context.db
      .selectFrom('crypto_payouts')
      .select('outgoing_transfer_id')
      .where('id', '=', payoutId)
      .executeTakeFirstOrThrow();
    const attempts = await testApp.context.db
      .selectFrom('crypto_outgoing_attempts')
      .select('fee_limit_sun')
      .where('transfer_id', '=', payout.outgoing_transfer_id)
      .execute();
    expect(attempts).toHaveLength(1);
    return attempts[0]!.fee_limit_sun;
  }
  async function carryToFinal(): Promise<void> {
    await executor.runPass();
    await post('/v1/test_helpers/crypto/blocks', { count: 1 });
    await post('/v1/test_helpers/crypto/blocks', { count: BLOCKS_TO_FINALITY });
    await executor.runPass();
  }
  async function expectCompleted(payoutId: string): Promise<void> {
    const payout = await get(`/v1/crypto/payouts/${payoutId}`);
    expect(payout, JSON.stringify(payout)).toMatchObject({ status: 'completed', error: null });
    expect(micro(payout.network_fee_actual)).toBeLessThanOrEqual(micro(payout.network_fee));
  }

  it('a raised energy factor moves quotes and fee_limits with it, and every payout completes', async () => {
    // `first` holds USDT from the start (its class never changes under the quote cache); `second` holds none.
    // The faucet funds only the shop's own addresses: one the blacklist helper makes for it, unlisted.
    const first = (await post('/v1/test_helpers/crypto/blacklist', { listed: false })).address as string;
    const second = recipient();
    await post('/v1/test_helpers/crypto/faucet', { address: first, usdt: '1' });
    // Factor 0: the chain's figures are the base ones.
    expect(await quote(first)).toBe(feeFor(HOLDER_BASE));
    expect(await quote(second)).toBe(feeFor(NEW_HOLDER_BASE));
    const before = await createPayout(first);
    await carryToFinal();
    await expectCompleted(before.payout_id);
    // Its first transfer: the dry run's own figure (64,285 energy), under the 15 TRX floor.
    expect(await feeLimitOf(before.payout_id)).toBe(feeLimitFor(HOLDER_BASE, ENERGY_PRICE_SUN));

    // The contract's factor rises by half (a busy maintenance cycle on mainnet).
    await control.setEnergyFactor(5_000);
    letFactorCacheExpire();
    expect(await quote(second)).toBe(feeFor(atFactor(NEW_HOLDER_BASE, 5_000n)));
    expect(await quote(first)).toBe(feeFor(atFactor(HOLDER_BASE, 5_000n)));
    // A first-time recipient (dry run: its own figure) and a known one (the dear figure at the new factor).
    const fresh = await createPayout(second);
    const known = await createPayout(first);
    expect(micro(fresh.network_fee)).toBe(feeFor(atFactor(NEW_HOLDER_BASE, 5_000n)));
    expect(micro(known.network_fee)).toBe(feeFor(atFactor(HOLDER_BASE, 5_000n)));
    await carryToFinal();
    await expectCompleted(fresh.payout_id);
    await expectCompleted(known.payout_id);
    // 195,427 energy × 100 sun × 1.2: above the 15 TRX floor that covered the old figure.
    expect(await feeLimitOf(fresh.payout_id)).toBe(feeLimitFor(atFactor(NEW_HOLDER_BASE, 5_000n), ENERGY_PRICE_SUN));
    expect(await feeLimitOf(known.payout_id)).toBe(feeLimitFor(atFactor(NEW_HOLDER_BASE, 5_000n), ENERGY_PRICE_SUN));
    expect(await feeLimitOf(fresh.payout_id)).toBeGreaterThan(feeLimitFor(NEW_HOLDER_BASE, ENERGY_PRICE_SUN));
    const outOfEnergy = await testApp.context.db
      .selectFrom('crypto_outgoing_transfers')
      .select('id')
      .where('error_code', '=', 'out_of_energy')
      .execute();
    expect(outOfEnergy).toEqual([]);
    await control.setEnergyFactor(0);
    letFactorCacheExpire();
  });

  it('above PAYGATE_TRON_TRANSFER_ENERGY_MAX nothing is quoted and a queued transfer waits unsigned; it goes once the factor falls', async () => {
    const address = recipient();
    const queued = await createPayout(address);
    // Doubled: 260,570 energy for a new holder, above the default ceiling of 200,000.
    await control.setEnergyFactor(10_000);
    letFactorCacheExpire();
    const refused = await testApp.call(shop.key, 'POST', '/v1/crypto/payouts/quote', {
      network: 'TRC20',
      amount: '10',
      address: recipient(),
    });
    expect(refused.statusCode).toBe(503);
    expect(refused.json()).toMatchObject({
      error: 'service_unavailable',
      message: expect.stringContaining('260570 energy'),
    });
    const created = await testApp.call(shop.key, 'POST', '/v1/crypto/payouts', {
      external_id: externalId(),
      network: 'TRC20',
      amount: '10',
      address: recipient(),
    });
    expect(created.statusCode).toBe(503);
    const pass = await executor.runPass();
    expect(pass.signed).toBe(0);
    expect(pass.waitingForFunds).toBe(1);
    expect(await get(`/v1/crypto/payouts/${queued.payout_id}`)).toMatchObject({ status: 'pending', tx_hash: null });

    await control.setEnergyFactor(0);
    letFactorCacheExpire();
    await carryToFinal();
    await expectCompleted(queued.payout_id);
  });
});

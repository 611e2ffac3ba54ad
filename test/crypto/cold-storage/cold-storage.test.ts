// The hot-wallet ceiling: the surplus above it reported (log, metric, position)
// and, with a cold address, moved there through the sign-once executor — the
// cold address's chain balance checked; the USDT stays in custody (no ledger
// transfer but the fee), one move per book at a time.
import { Registry } from 'prom-client';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Config } from '../../../src/config.ts';
import {
  coldStorageOutcomes,
  hotWalletPositions,
  runColdStoragePass,
  type ColdStorageDeps,
} from '../../../src/crypto/cold-storage/cold-storage-service.ts';
import { hotWalletUsdtInFlight } from '../../../src/crypto/sending/outgoing-transfers.ts';
import { backends } from '../../support/databases.ts';
import { expectLedgerSound, openReceivingSetup, type ReceivingSetup } from '../receiving/receiving-service-support.ts';
import {
  enqueuePayout,
  executorFor,
  freshAddress,
  fundHotWallet,
  mineToFinal,
  newLog,
  recordingHandler,
} from '../sending/executor-support.ts';

const USDT = 1_000_000n;

describe.each(backends)('the hot-wallet ceiling and cold storage on %s', (backend) => {
  let setup: ReceivingSetup;
  let metrics: Registry;
  beforeEach(async () => {
    setup = await openReceivingSetup(backend);
    metrics = new Registry();
  });
  afterEach(async () => {
    await expectLedgerSound(setup);
    await setup.close();
  });

  const depsWith = (
    config: Partial<Pick<Config, 'tronHotWalletCeilingMicro' | 'tronColdAddress'>>,
  ): ColdStorageDeps => ({
    db: setup.context.db,
    clock: setup.clock,
    config: {
      sweepThresholdMicro: 50n * USDT,
      tronHotWalletCeilingMicro: undefined,
      tronColdAddress: undefined,
      ...config,
    },
    logger: setup.context.logger,
    chain: setup.chain,
    metrics,
  });
  // The worker watches the live book; the code is the same for any book, and the sandbox is the chain tests can drive.
  const surplusMetric = async () =>
    (await metrics.getSingleMetric('paygate_hot_wallet_surplus_usdt')!.get()).values.find(
      (value) => value.labels.book === 'sandbox',
    )?.value;
  const moves = () => setup.context.db.selectFrom('crypto_cold_moves').selectAll().orderBy('created_at').execute();

  it('without a cold address the surplus (free USDT above the ceiling, what queued transfers will send set aside) is reported and nothing moves', async () => {
    fundHotWallet(setup, 500n * USDT);
    await enqueuePayout(setup, freshAddress(), 30n * USDT);
    const deps = depsWith({ tronHotWalletCeilingMicro: 100n * USDT });
    expect(await runColdStoragePass(deps, ['sandbox'])).toEqual({ moved: 0 });
    const [position] = await hotWalletPositions(deps);
    expect(position).toMatchObject({
      book: 'sandbox',
      usdtOnChain: 500n * USDT,
      usdtCommitted: 30n * USDT,
      ceiling: 100n * USDT,
      surplus: 370n * USDT,
      coldAddress: undefined,
    });
    expect(await surplusMetric()).toBe(370);
    expect(await moves()).toEqual([]);
  });

  it('with a cold address the surplus is moved there through the executor: the cold address receives it once, the ledger books only the fee', async () => {
    fundHotWallet(setup, 500n * USDT);
    const cold = freshAddress();
    const deps = depsWith({ tronHotWalletCeilingMicro: 100n * USDT, tronColdAddress: cold });
    expect(await runColdStoragePass(deps, ['sandbox'])).toEqual({ moved: 1 });
    // One move per book at a time: the next pass waits for it.
    expect(await runColdStoragePass(deps, ['sandbox'])).toEqual({ moved: 0 });
    const [queued] = await moves();
    expect(queued).toMatchObject({
      status: 'sending',
      amount_micro: 400n * USDT,
      to_address: cold,
      hot_wallet_micro: 500n * USDT,
      ceiling_micro: 100n * USDT,
    });
    const transfer = await setup.context.db
      .selectFrom('crypto_outgoing_transfers')
      .selectAll()
      .where('id', '=', queued!.transfer_id)
      .executeTakeFirstOrThrow();
    expect(transfer).toMatchObject({
      purpose: 'cold_storage',
      asset: 'USDT',
      from_kind: 'hot_wallet',
      to_address: cold,
      amount: 400n * USDT,
    });

    const log = newLog();
    const executor = executorFor(setup, log, {
      handlers: { cold_storage: coldStorageOutcomes, payout: recordingHandler(log) },
    });
    // Custody reconciliation counts the move gone from the hot wallet once signed, and still once landed (never booked).
    const unbooked = () => hotWalletUsdtInFlight(setup.context.db, 'tron-sandbox');
    expect(await unbooked()).toBe(0n);
    expect(await executor.runPass()).toMatchObject({ signed: 1 });
    expect(await unbooked()).toBe(400n * USDT);
    setup.sandbox.chain.mine(1);
    mineToFinal(setup);
    expect(await executor.runPass()).toMatchObject({ confirmed: 1 });
    expect(await unbooked()).toBe(400n * USDT);

    const [completed] = await moves();
    expect(completed).toMatchObject({ status: 'completed', error_code: null });
    expect(completed!.tx_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(completed!.fee_sun).toBeGreaterThan(0n);
    expect(setup.sandbox.chain.state.usdtBalance(cold)).toBe(400n * USDT);
    expect(setup.sandbox.chain.state.usdtBalance(setup.access.addressKey.hotWalletAddress)).toBe(100n * USDT);
    // Still custody: no ledger transfer moved the USDT; only the network fee the move burnt is booked.
    const types = await setup.context.db.selectFrom('ledger_transfers').select('type').execute();
    expect(types.map((row) => row.type)).toEqual(['network_fee']);

    // At the ceiling now: nothing more to move.
    expect(await runColdStoragePass(deps, ['sandbox'])).toEqual({ moved: 0 });
    expect(await surplusMetric()).toBe(0);
  });

  it('a surplus below a move’s worth (the sweep threshold) is reported but not moved', async () => {
    fundHotWallet(setup, 120n * USDT);
    const deps = depsWith({ tronHotWalletCeilingMicro: 100n * USDT, tronColdAddress: freshAddress() });
    expect(await runColdStoragePass(deps, ['sandbox'])).toEqual({ moved: 0 });
    expect(await surplusMetric()).toBe(20);
    expect(await moves()).toEqual([]);
  });
});

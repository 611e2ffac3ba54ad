// Sweeping deposits to the hot wallet, end to end on the real database, the real
// sign-once executor and the simulated chain over HTTP: the top-up of exactly
// the TRX the USDT transfer burns (creating a never-activated address), the
// sweep itself, the threshold, failures and their retries, and that none of it
// touches a merchant's money or the hot wallet's ledger account.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { listCustodyAddresses } from '../../../src/crypto/receiving/custody-service.ts';
import { sweepSummaries } from '../../../src/crypto/sweeping/sweep-custody.ts';
import { mineBlocks, simulateDeposit } from '../../../src/crypto/receiving/sandbox-chain-service.ts';
import { findOutgoingTransfer } from '../../../src/crypto/sending/outgoing-transfers.ts';
import { sunToMicroUsdt, USDT_TRANSFER_BANDWIDTH } from '../../../src/crypto/sending/transfer-cost.ts';
import { SWEEP_DUST_STUCK_AFTER_MS } from '../../../src/crypto/sweeping/sweep-custody.ts';
import {
  retrySweepsOfAddress,
  runSweepPass,
  sweepsOfAddress,
  sweepView,
  SWEEP_FIRST_RETRY_DELAY_SECONDS,
  type SweepView,
} from '../../../src/crypto/sweeping/sweeping-service.ts';
import type { TronAddress } from '../../../src/crypto/tron/address.ts';
import { NotFoundError } from '../../../src/errors.ts';
import { runPaygateInProcess } from '../../support/cli.ts';
import { backends } from '../../support/databases.ts';
import { expectLedgerSound, usdtMainBalance } from '../receiving/receiving-service-support.ts';
import {
  driveUntil,
  finalDepositOn,
  openSweepingSetup,
  trxOf,
  usdtOf,
  type SweepingSetup,
} from './sweeping-support.ts';

describe.each(backends)('sweeping on %s', (backend) => {
  let setup: SweepingSetup;
  beforeEach(async () => {
    setup = await openSweepingSetup(backend);
  });
  afterEach(async () => {
    await expectLedgerSound(setup);
    await setup.close();
  });

  const lastSweep = async (address: TronAddress) => (await sweepsOfAddress(setup.context.db, address))[0];
  const sweepIs = (address: TronAddress, status: string) => async () => (await lastSweep(address))?.status === status;
  const custodyOf = async (address: TronAddress) =>
    (
      await listCustodyAddresses(
        { ...setup.deps, config: { ...setup.deps.config, sweepThresholdMicro: 50_000_000n } },
        { limit: 100 },
        sweepSummaries,
      )
    ).find((line) => line.address === address)!;

  /** The ledger's accounts of the sandbox book, other than the chain-cost pair the executor books to. */
  const ledgerWithoutChainCosts = async () =>
    setup.context.db
      .selectFrom('ledger_accounts')
      .select(['id', 'kind', 'debits_posted', 'credits_posted', 'debits_pending', 'credits_pending'])
      .where('book', '=', 'sandbox')
      .where('kind', 'not in', ['network_costs', 'network_fees'])
      .orderBy('id')
      .execute();

  /** The chain cost the executor booked for an outgoing transfer (network_costs ← network_fees), in micro-USDT. */
  const bookedCost = async (transferId: string) => {
    const row = await setup.context.db
      .selectFrom('ledger_transfers')
      .select('amount')
      .where('idempotency_key', '=', `outgoing-fee:${transferId}`)
      .executeTakeFirst();
    return row?.amount ?? 0n;
  };

  /** What the USDT transfer address → hot wallet burns, from the chain's own parameters. */
  const expectedBurnSun = async () => {
    const parameters = setup.sandbox.chain.parameters;
    const hotHoldsUsdt = (await usdtOf(setup, setup.hotWallet)) > 0n;
    const energy = BigInt(hotHoldsUsdt ? parameters.transferEnergyExistingHolder : parameters.transferEnergyNewHolder);
    return { energy, sun: energy * parameters.energyPriceSun + USDT_TRANSFER_BANDWIDTH * parameters.bandwidthPriceSun };
  };

  it('sweeps a never-activated address: the top-up creates it with exactly the TRX the transfer burns, and the USDT reaches the hot wallet', async () => {
    const address = await finalDepositOn(setup, 'never-activated', '60');
    expect(await setup.access.node.getAccount(address)).toMatchObject({ activated: false, balanceSun: 0n });
    const merchantBefore = await usdtMainBalance(setup);
    const ledgerBefore = await ledgerWithoutChainCosts();
    const hotUsdtBefore = await usdtOf(setup, setup.hotWallet);
    const burn = await expectedBurnSun();

    expect(await setup.sweep()).toEqual({ started: 1, built: 0, waitingForStake: 0 });
    const begun = (await lastSweep(address))!;
    expect(begun).toMatchObject({
      status: 'topping_up',
      activated_before: false,
      trx_before_sun: 0n,
      energy: burn.energy,
      estimated_fee_sun: burn.sun,
      topup_sun: burn.sun,
    });
    expect(begun.unswept_final_micro).toBe(60_000_000n);
    const topup = (await findOutgoingTransfer(setup.context.db, begun.topup_transfer_id!))!;
    expect(topup).toMatchObject({
      purpose: 'gas_topup',
      asset: 'TRX',
      from: { kind: 'hot_wallet' },
      to: address,
      amount: burn.sun,
      ownerId: begun.id,
    });
    expect((await custodyOf(address)).sweep_state).toBe('in_flight');

    await driveUntil(setup, sweepIs(address, 'completed'));
    const done = (await lastSweep(address))!;
    expect(done.amount_micro).toBe(60_000_000n);
    expect(done.tx_hash).toMatch(/^[0-9a-f]{64}$/);
    // The top-up's own fee includes creating the account (paid by the hot wallet, not sent to the address).
    const prices = await setup.access.node.getChainPrices();
    expect(done.topup_fee_sun!).toBeGreaterThanOrEqual(prices.createNewAccountFeeSun + prices.createAccountFeeSun);
    const sweepTransfer = (await findOutgoingTransfer(setup.context.db, done.sweep_transfer_id!))!;
    expect(sweepTransfer).toMatchObject({
      purpose: 'sweep',
      asset: 'USDT',
      status: 'confirmed',
      from: { kind: 'deposit_address', address },
      to: setup.hotWallet,
      amount: 60_000_000n,
    });

    expect(await usdtOf(setup, address)).toBe(0n);
    expect((await usdtOf(setup, setup.hotWallet)) - hotUsdtBefore).toBe(60_000_000n);
    // What is left on the address is exactly what the estimate over-provisioned (bandwidth the new account's free allowance paid).
    const trxLeft = await trxOf(setup, address);
    expect(trxLeft).toBe(done.topup_sun - done.sweep_fee_sun!);
    expect(done.sweep_fee_sun! + trxLeft).toBe(burn.sun);

    // Both fees are booked as chain costs (at PAYGATE_TRX_USDT_RATE, rounded up); the TRX left on the address is not.
    expect(await bookedCost(done.topup_transfer_id!)).toBe(
      sunToMicroUsdt(done.topup_fee_sun!, setup.context.config.trxUsdtRateMicro),
    );
    expect(await bookedCost(done.sweep_transfer_id!)).toBe(
      sunToMicroUsdt(done.sweep_fee_sun!, setup.context.config.trxUsdtRateMicro),
    );
    // No merchant money and no ledger money moved: only the chain-cost pair changed.
    expect(await usdtMainBalance(setup)).toBe(merchantBefore);
    expect(await ledgerWithoutChainCosts()).toEqual(ledgerBefore);
    expect(await custodyOf(address)).toMatchObject({
      usdt_on_chain: '0',
      usdt_credited: '60',
      usdt_swept: '60',
      usdt_sweep_pending: '0',
      usdt_sweep_stuck: '0',
      sweep_state: 'idle',
      sweep_error: null,
      usdt_unaccounted: '0',
    });
    // Swept in full: nothing to do until new deposits.
    expect(await setup.sweep()).toEqual({ started: 0, built: 0, waitingForStake: 0 });
  });

  it('sweeps an activated address topping up only the TRX it lacks, and none when it holds enough', async () => {
    const address = await finalDepositOn(setup, 'activated', '60');
    setup.sandbox.chain.faucet(address, { trxSun: 1_000_000n });
    const burn = await expectedBurnSun();
    await setup.sweep();
    const first = (await lastSweep(address))!;
    expect(first).toMatchObject({
      status: 'topping_up',
      activated_before: true,
      trx_before_sun: 1_000_000n,
      topup_sun: burn.sun - 1_000_000n,
    });
    await driveUntil(setup, sweepIs(address, 'completed'));
    const prices = await setup.access.node.getChainPrices();
    expect((await lastSweep(address))!.topup_fee_sun!).toBeLessThan(prices.createNewAccountFeeSun);

    // A second round of deposits on the same address: its leftover TRX counts.
    await finalDepositOn(setup, 'activated', '55', address);
    const leftover = await trxOf(setup, address);
    // The hot wallet holds USDT now: the transfer rewrites its balance slot (65k energy, not 130k).
    const cheaper = await expectedBurnSun();
    expect(cheaper.sun).toBeLessThanOrEqual(burn.sun);
    await setup.sweep();
    expect(await lastSweep(address)).toMatchObject({
      status: 'topping_up',
      trx_before_sun: leftover,
      topup_sun: cheaper.sun - leftover,
      unswept_final_micro: 55_000_000n,
    });
    await driveUntil(setup, sweepIs(address, 'completed'));
    expect(await usdtOf(setup, address)).toBe(0n);

    // Plenty of TRX already there: no top-up, straight to the USDT transfer.
    await finalDepositOn(setup, 'activated', '70', address);
    setup.sandbox.chain.faucet(address, { trxSun: 100_000_000n });
    await setup.sweep();
    const direct = (await lastSweep(address))!;
    expect(direct).toMatchObject({
      status: 'sweeping',
      topup_sun: 0n,
      topup_transfer_id: null,
      amount_micro: 70_000_000n,
    });
    await driveUntil(setup, sweepIs(address, 'completed'));
    expect(await custodyOf(address)).toMatchObject({
      usdt_on_chain: '0',
      usdt_credited: '185',
      usdt_swept: '185',
      sweep_state: 'idle',
      usdt_unaccounted: '0',
    });
  });

  it('leaves an address below the threshold alone, reports it stuck after a week, and sweeps it once deposits lift it over', async () => {
    const address = await finalDepositOn(setup, 'dust', '10');
    expect(await setup.sweep()).toEqual({ started: 0, built: 0, waitingForStake: 0 });
    expect(await sweepsOfAddress(setup.context.db, address)).toEqual([]);
    expect(await custodyOf(address)).toMatchObject({ usdt_on_chain: '10', sweep_state: 'idle', usdt_sweep_stuck: '0' });
    setup.clock.advance(SWEEP_DUST_STUCK_AFTER_MS + 60_000);
    expect(await custodyOf(address)).toMatchObject({ sweep_state: 'stuck_below_threshold', usdt_sweep_stuck: '10' });
    expect(await setup.sweep()).toEqual({ started: 0, built: 0, waitingForStake: 0 });

    await finalDepositOn(setup, 'dust', '40', address);
    expect(await setup.sweep()).toEqual({ started: 1, built: 0, waitingForStake: 0 });
    expect((await lastSweep(address))!.unswept_final_micro).toBe(50_000_000n);
  });

  it('records a failed sweep with its fee and retries it after the back-off, with the TRX the failure left', async () => {
    const address = await finalDepositOn(setup, 'revert-once', '60');
    const merchantBefore = await usdtMainBalance(setup);
    // Enough TRX already there: no top-up, the USDT transfer is the one that fails.
    setup.sandbox.chain.faucet(address, { trxSun: 30_000_000n });
    setup.sandbox.chain.armNextTransfer(setup.hotWallet, 'revert');
    expect((await setup.sweep()).started).toBe(1);
    await driveUntil(setup, sweepIs(address, 'failed'));
    const failed = (await lastSweep(address))!;
    expect(failed).toMatchObject({ error_code: 'reverted', topup_sun: 0n, amount_micro: 60_000_000n });
    expect(failed.sweep_fee_sun!).toBeGreaterThan(0n);
    expect(failed.tx_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(failed.final_at).not.toBeNull();
    expect(await usdtOf(setup, address)).toBe(60_000_000n);
    expect(await trxOf(setup, address)).toBe(30_000_000n - failed.sweep_fee_sun!);
    // The fee the failed transaction burnt is a chain cost all the same.
    expect(await bookedCost(failed.sweep_transfer_id!)).toBe(
      sunToMicroUsdt(failed.sweep_fee_sun!, setup.context.config.trxUsdtRateMicro),
    );
    expect(await custodyOf(address)).toMatchObject({
      sweep_state: 'retrying',
      sweep_error: 'reverted',
      usdt_swept: '0',
      usdt_unaccounted: '0',
    });

    // Not before the back-off.
    expect((await setup.sweep()).started).toBe(0);
    setup.clock.advance(SWEEP_FIRST_RETRY_DELAY_SECONDS * 1_000);
    expect((await setup.sweep()).started).toBe(1);
    const retry = (await lastSweep(address))!;
    expect(retry.id).not.toBe(failed.id);
    expect(retry).toMatchObject({ trx_before_sun: 30_000_000n - failed.sweep_fee_sun!, topup_sun: 0n });
    await driveUntil(setup, sweepIs(address, 'completed'));
    expect(await usdtOf(setup, address)).toBe(0n);
    expect(await usdtMainBalance(setup)).toBe(merchantBefore);
    expect(await custodyOf(address)).toMatchObject({ sweep_state: 'idle', sweep_error: null, usdt_swept: '60' });
  });

  it('stops after three failures in a row and reports the address stuck', async () => {
    const address = await finalDepositOn(setup, 'revert-always', '60');
    setup.sandbox.chain.faucet(address, { trxSun: 100_000_000n });
    for (let failure = 1; failure <= 3; failure++) {
      setup.sandbox.chain.armNextTransfer(setup.hotWallet, 'revert');
      expect((await setup.sweep()).started).toBe(1);
      await driveUntil(setup, sweepIs(address, 'failed'));
      setup.clock.advance(SWEEP_FIRST_RETRY_DELAY_SECONDS * 1_000 * 2 ** (failure - 1));
    }
    expect(await sweepsOfAddress(setup.context.db, address)).toHaveLength(3);
    setup.clock.advance(24 * 60 * 60 * 1_000);
    expect((await setup.sweep()).started).toBe(0);
    expect(await custodyOf(address)).toMatchObject({
      sweep_state: 'stuck_failed',
      sweep_error: 'reverted',
      usdt_sweep_stuck: '60',
      usdt_on_chain: '60',
    });
    expect(await usdtMainBalance(setup)).toBe(60_000_000n);

    // The operator fixed the cause and retries (`paygate crypto sweeps retry`): the next pass sweeps it.
    await expect(retrySweepsOfAddress(setup.sweeping, 'TJRabPrwbZy45sbavfcjinPJC18kjpRTv8')).rejects.toThrow(
      NotFoundError,
    );
    if (setup.database.url !== undefined) {
      // Through the real command line (a PostgreSQL server can be shared with a child process).
      const env = { DATABASE_URL: setup.database.url, PAYGATE_DATA_DIR: 'memory://' };
      const listed = await runPaygateInProcess(['crypto', 'sweeps', 'list', '--address', address, '--json'], env);
      expect(listed.code, listed.stderr).toBe(0);
      const views = JSON.parse(listed.stdout) as SweepView[];
      expect(views.map((view) => [view.status, view.error?.code, view.cleared])).toEqual([
        ['failed', 'reverted', false],
        ['failed', 'reverted', false],
        ['failed', 'reverted', false],
      ]);
      const retried = await runPaygateInProcess(['crypto', 'sweeps', 'retry', '--address', address], env);
      expect(retried.code, retried.stderr).toBe(0);
      expect(retried.stdout).toContain('3 failed sweep(s) cleared');
      expect((await runPaygateInProcess(['crypto', 'sweeps', 'retry', '--address', 'not-an-address'], env)).code).toBe(
        2,
      );
    } else {
      expect(await retrySweepsOfAddress(setup.sweeping, address)).toBe(3);
    }
    expect(await custodyOf(address)).toMatchObject({ sweep_state: 'idle', sweep_error: null });
    expect((await setup.sweep()).started).toBe(1);
    await driveUntil(setup, sweepIs(address, 'completed'));
    expect(await custodyOf(address)).toMatchObject({ sweep_state: 'idle', usdt_swept: '60', usdt_on_chain: '0' });
    expect(
      (await sweepsOfAddress(setup.context.db, address)).map(sweepView).map((view) => [view.status, view.cleared]),
    ).toEqual([
      ['completed', false],
      ['failed', true],
      ['failed', true],
      ['failed', true],
    ]);
  });

  /** A deposit of `amount` on `address` that the watcher has seen on chain but that is not final yet. */
  const nonFinalDepositOn = async (address: TronAddress, amount: string) => {
    await simulateDeposit(setup.deps, setup.shop, { address, amount });
    await mineBlocks(setup.deps, setup.shop, 1);
    await setup.defaultWatcher.runPass();
    const deposits = await setup.context.db
      .selectFrom('crypto_deposits')
      .select(['status', 'amount_micro'])
      .where('address', '=', address)
      .where('status', '=', 'confirming')
      .execute();
    expect(deposits).toHaveLength(1);
  };

  it('sweeps only the final, unswept USDT: a deposit on chain but not final stays on the address (no top-up needed)', async () => {
    const address = await finalDepositOn(setup, 'non-final-direct', '60');
    await nonFinalDepositOn(address, '5');
    expect(await usdtOf(setup, address)).toBe(65_000_000n);
    setup.sandbox.chain.faucet(address, { trxSun: 30_000_000n });
    await setup.sweep();
    expect(await lastSweep(address)).toMatchObject({ status: 'sweeping', amount_micro: 60_000_000n });
    const transfer = (await findOutgoingTransfer(setup.context.db, (await lastSweep(address))!.sweep_transfer_id!))!;
    expect(transfer.amount).toBe(60_000_000n);
    await driveUntil(setup, sweepIs(address, 'completed'));
    expect(await usdtOf(setup, address)).toBe(5_000_000n);
    expect((await lastSweep(address))!.amount_micro).toBe(60_000_000n);
  });

  it('sweeps only the final, unswept USDT when the transfer is built after a top-up: a non-final deposit that arrived meanwhile stays', async () => {
    const address = await finalDepositOn(setup, 'non-final-built', '60');
    expect(await setup.sweep()).toEqual({ started: 1, built: 0, waitingForStake: 0 });
    // The executor alone until the top-up is final (the sweeper, which would build the transfer, does not run).
    for (let round = 0; round < 60 && (await lastSweep(address))!.status !== 'ready'; round++) {
      await setup.executorPass();
      await mineBlocks(setup.deps, setup.shop, 1);
      setup.clock.advance(3_000);
    }
    expect((await lastSweep(address))!.status).toBe('ready');
    await nonFinalDepositOn(address, '5');
    expect(await usdtOf(setup, address)).toBe(65_000_000n);
    expect(await setup.sweep()).toMatchObject({ built: 1 });
    expect(await lastSweep(address)).toMatchObject({ status: 'sweeping', amount_micro: 60_000_000n });
    await driveUntil(setup, sweepIs(address, 'completed'));
    expect(await usdtOf(setup, address)).toBe(5_000_000n);
    expect(await usdtOf(setup, setup.hotWallet)).toBeGreaterThanOrEqual(60_000_000n);
    // Once the watcher reads on, the 5 is final too: credited, unswept, below the threshold.
    await setup.defaultWatcher.runPass();
    expect(await custodyOf(address)).toMatchObject({
      usdt_on_chain: '5',
      usdt_credited: '65',
      usdt_swept: '60',
      usdt_unaccounted: '0',
    });
  });

  it('sweeps the final USDT recorded when the transfer was built; a deposit landing meanwhile waits for the next sweep', async () => {
    const address = await finalDepositOn(setup, 'during', '60');
    setup.sandbox.chain.faucet(address, { trxSun: 30_000_000n });
    await setup.sweep();
    expect(await lastSweep(address)).toMatchObject({ status: 'sweeping', amount_micro: 60_000_000n });
    // A payer sends 7 more before the executor signs.
    await finalDepositOn(setup, 'during', '7', address);
    await driveUntil(setup, sweepIs(address, 'completed'));
    expect(await usdtOf(setup, address)).toBe(7_000_000n);
    expect(await custodyOf(address)).toMatchObject({
      usdt_on_chain: '7',
      usdt_credited: '67',
      usdt_swept: '60',
      sweep_state: 'idle',
      usdt_unaccounted: '0',
    });
    // 7 is below the threshold: it stays until more arrives.
    expect((await setup.sweep()).started).toBe(0);
    expect(await usdtMainBalance(setup)).toBe(67_000_000n);
  });

  it('records USDT that left the address without a sweep as a failed attempt, so the address is retried after the back-off and cannot crowd others out', async () => {
    const address = await finalDepositOn(setup, 'out-of-band', '60');
    // Someone holding the deposit key moved the USDT away (a leaked key): our records still say 60 is unswept.
    const index = (
      await setup.context.db
        .selectFrom('crypto_addresses')
        .select('derivation_index')
        .where('address', '=', address)
        .executeTakeFirstOrThrow()
    ).derivation_index;
    const privateKey = (await setup.access.signingKey()).privateKey(Number(index));
    setup.sandbox.chain.faucet(address, { trxSun: 20_000_000n });
    expect(
      setup.sandbox.chain.sendUsdt({
        from: { address, privateKey },
        to: setup.sandbox.chain.payers[1]!.address,
        amount: 60_000_000n,
      }).result,
    ).toBe(true);
    await mineBlocks(setup.deps, setup.shop, 1);
    expect(await usdtOf(setup, address)).toBe(0n);

    expect((await setup.sweep()).started).toBe(0);
    expect(await lastSweep(address)).toMatchObject({
      status: 'failed',
      error_code: 'nothing_to_sweep',
      topup_sun: 0n,
      topup_transfer_id: null,
    });
    expect(await custodyOf(address)).toMatchObject({
      sweep_state: 'retrying',
      sweep_error: 'nothing_to_sweep',
      usdt_unaccounted: '-60',
    });
    // Back-off: nothing until it runs out.
    expect(await setup.sweep()).toEqual({ started: 0, built: 0, waitingForStake: 0 });
    expect(await sweepsOfAddress(setup.context.db, address)).toHaveLength(1);
    expect(await setup.context.db.selectFrom('crypto_outgoing_transfers').select('id').execute()).toEqual([]);
  });

  it('keeps one sweep per address in flight, whichever sweeper gets there first', async () => {
    const address = await finalDepositOn(setup, 'race', '60');
    const results = await Promise.all([
      runSweepPass(setup.sweeping),
      runSweepPass(setup.sweeping),
      runSweepPass(setup.sweeping),
    ]);
    expect(results.reduce((sum, result) => sum + result.started, 0)).toBe(1);
    expect(await sweepsOfAddress(setup.context.db, address)).toHaveLength(1);
    // And while it is in flight, no second one begins.
    expect((await setup.sweep()).started).toBe(0);
  });
});

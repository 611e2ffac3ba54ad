// A simulated day of 1,000 sweeps and 1,000 payouts on one stake of the hot
// wallet: 1,000 invoices are paid over 24 h of blocks, in 40 rounds of 25 (one
// every 36 minutes), and each round the real sweeper sweeps its 25 addresses on
// delegated energy (top-up for bandwidth and creation, DelegateResource, the
// USDT transfer, UnDelegateResource, all through the real sign-once executor)
// while the same executor sends 25 payouts on the hot wallet's own energy. The
// chain's use of the stake recovers over java-tron's day window meanwhile.
//
// The arithmetic of the stake (the simulated chain's genesis network: 180e9
// energy a day over ~19e9 staked TRX, ~9.47 energy per staked TRX a day):
//   - a sweep to the hot wallet (which holds USDT) uses 64,285 energy; it is
//     delegated 7,465 TRX (64,285 + 10 %, sweep-delegation.ts). Its receiver's
//     use goes back to the hot wallet with the undelegation (java-tron
//     unDelegateIncreaseV2), so every sweep ends as 64,285 energy of the hot
//     wallet's own day: 1,000 sweeps = 64,285,000 energy;
//   - a payout uses 64,285 (900 to holders) or 130,285 (100 to new holders):
//     70,885,000 energy;
//   - while a round's 25 delegations are out, their 25 × 7,465 TRX leave the
//     hot wallet's own energy (java-tron: DelegateResource moves frozenV2 to
//     delegated_frozenV2, and the limit counts frozenV2 only).
// Covering the whole day's 135,170,000 energy plus one round's delegations is
// the bound that holds however the rounds fall (what is in use at any moment is
// what was used in the last 24 h less what recovered): ~14.5 million TRX. Its
// bandwidth twin stakes for the hot wallet's bytes of the day (top-ups,
// delegations, undelegations, payouts), so nothing at all burns but the
// creation fee of each new deposit address.
import { afterEach, describe, expect, it } from 'vitest';
import { createInvoice } from '../../../src/crypto/receiving/invoice-service.ts';
import { simulateDeposit } from '../../../src/crypto/receiving/sandbox-chain-service.ts';
import { costsOfLastDays } from '../../../src/crypto/sending/transfer-costs.ts';
import {
  STAKE_TRANSACTION_BANDWIDTH,
  TRX_TRANSFER_BANDWIDTH,
  USDT_TRANSFER_BANDWIDTH,
} from '../../../src/crypto/sending/transfer-cost.ts';
import { delegationSunFor } from '../../../src/crypto/sweeping/sweep-delegation.ts';
import { tronAddress, type TronAddress } from '../../../src/crypto/tron/address.ts';
import { backends } from '../../support/databases.ts';
import { expectLedgerSound, openReceivingSetup } from '../receiving/receiving-service-support.ts';
import { enqueuePayouts, freshAddress, newLog, recordingHandler } from '../sending/executor-support.ts';
import { advanceBlocks, freezeHotWallet, stakeFor, TRX } from '../energy/stake-support.ts';
import { sweepingOver, type SweepingSetup } from './sweeping-support.ts';

const ADDRESSES = 1_000;
const ROUNDS = 40;
const PER_ROUND = ADDRESSES / ROUNDS;
const BLOCKS_PER_DAY = 28_800;
const BLOCKS_PER_ROUND = BLOCKS_PER_DAY / ROUNDS;
const DEPOSIT = '60';
const DEPOSIT_MICRO = 60_000_000n;
const PAYOUT_MICRO = 1_000_000n;
/** Every tenth payout goes to an address without USDT (the dear transfer). */
const NEW_HOLDER_EVERY = 10;
/** Executor and sweeper passes a round may take: each step is final one pass after it is signed. */
const PASSES_PER_ROUND_MAX = 16;

describe.each(backends)('a day of 1,000 sweeps and 1,000 payouts on one stake on %s', (backend) => {
  let setup: SweepingSetup;
  afterEach(async () => {
    await expectLedgerSound(setup);
    await setup.close();
  });

  it('every address swept once on delegated energy, every delegation taken back, 0 TRX burned for energy, the recorded costs equal to what the chain charged', async () => {
    const receiving = await openReceivingSetup(backend);
    const prices = receiving.sandbox.chain.parameters;
    const creationFeeSun = prices.createNewAccountFeeSun + prices.createAccountFeeSun;
    setup = sweepingOver(receiving, {
      energySources: new Set(['stake', 'delegate', 'burn'] as const),
      executor: {
        handlers: { payout: recordingHandler(newLog()) },
        // Anything that would burn more than creating an account (a sweep burning its energy is 6.4 TRX) waits.
        maxBurnSun: creationFeeSun,
        maxInFlight: 1_000,
        dryRun: 'new recipients',
        topUpHotWallet: false,
      },
    });
    const chain = setup.sandbox.chain;
    const parameters = chain.parameters;
    const hotWallet = setup.hotWallet;
    const finalDepth = parameters.solidityDepth + 1;

    const sweepEnergy = BigInt(parameters.transferEnergyExistingHolder);
    const newHolders = BigInt(ADDRESSES / NEW_HOLDER_EVERY);
    const payoutsEnergy =
      (BigInt(ADDRESSES) - newHolders) * sweepEnergy + newHolders * BigInt(parameters.transferEnergyNewHolder);
    // A delegation is the sweep's energy and 10 % more (in whole TRX, so up to one TRX's energy more still).
    const roundDelegationEnergy = BigInt(PER_ROUND) * ((sweepEnergy * 110n) / 100n + 10n);
    const dayEnergy = BigInt(ADDRESSES) * sweepEnergy + payoutsEnergy;
    const energyStakeTrx = stakeFor(
      dayEnergy + roundDelegationEnergy,
      parameters.totalEnergyLimit,
      chain.state.totalEnergyWeightTrx,
    );
    const dayBandwidth =
      BigInt(ADDRESSES) * (TRX_TRANSFER_BANDWIDTH + 2n * STAKE_TRANSACTION_BANDWIDTH + USDT_TRANSFER_BANDWIDTH);
    const bandwidthStakeTrx = stakeFor(
      dayBandwidth,
      parameters.totalBandwidthLimit,
      chain.state.totalBandwidthWeightTrx,
    );
    const liquidTrx = 10_000n * TRX;
    chain.faucet(hotWallet, {
      trxSun: (energyStakeTrx + bandwidthStakeTrx) * TRX + liquidTrx,
      usdt: BigInt(ADDRESSES) * PAYOUT_MICRO,
    });
    await freezeHotWallet(setup, 'ENERGY', energyStakeTrx);
    await freezeHotWallet(setup, 'BANDWIDTH', bandwidthStakeTrx);
    const liquidAfterStaking = chain.state.account(hotWallet)!.balanceSun;
    // What each sweep delegates on the network as staking left it (the hot wallet's stake joined its weight).
    const delegatedPerSweep = delegationSunFor(sweepEnergy, {
      totalEnergyLimit: Number(parameters.totalEnergyLimit),
      totalEnergyWeight: Number(chain.state.totalEnergyWeightTrx),
    });

    const recipients = Array.from({ length: ADDRESSES }, (_, index) => {
      const to = freshAddress();
      if (index % NEW_HOLDER_EVERY !== 0) chain.faucet(to, { trxSun: 1n, usdt: 1n });
      return to;
    });

    const startedMs = performance.now();
    const startedCpu = process.cpuUsage();
    const dayStart = setup.clock.now();
    const addresses: TronAddress[] = [];
    let passes = 0;
    let depositsMs = 0;
    for (let round = 0; round < ROUNDS; round += 1) {
      const roundStartMs = chain.head.timestampMs;
      const payingMs = performance.now();
      const paid = await payInvoices(setup, round);
      depositsMs += performance.now() - payingMs;
      addresses.push(...paid);
      await enqueuePayouts(setup, recipients.slice(round * PER_ROUND, (round + 1) * PER_ROUND), PAYOUT_MICRO);
      for (let pass = 0; !(await roundDone(setup, addresses.length, (round + 1) * PER_ROUND)); pass += 1) {
        if (pass >= PASSES_PER_ROUND_MAX)
          expect.fail(`round ${round} not done after ${pass} passes: ${await whereStuck(setup)}`);
        await setup.executorPass();
        await setup.sweep();
        advanceBlocks(setup, finalDepth);
        passes += 1;
      }
      idleRestOfRound(setup, roundStartMs);
    }
    const dayMs = performance.now() - startedMs;
    const dayCpu = process.cpuUsage(startedCpu);
    expect(setup.clock.now().getTime() - dayStart.getTime()).toBeGreaterThanOrEqual(
      BLOCKS_PER_DAY * parameters.blockIntervalMs,
    );

    // Every address swept exactly once, its whole deposit landed on the hot wallet, and the address is empty.
    const sweeps = await setup.context.db.selectFrom('crypto_sweeps').selectAll().execute();
    expect(sweeps).toHaveLength(ADDRESSES);
    expect(new Set(sweeps.map((sweep) => sweep.address))).toEqual(new Set(addresses));
    for (const sweep of sweeps) {
      expect(sweep).toMatchObject({
        status: 'completed',
        amount_micro: DEPOSIT_MICRO,
        delegated_sun: delegatedPerSweep,
        undelegation_status: 'undelegated',
        undelegation_attempts: 1,
      });
      expect(chain.state.usdtBalance(tronAddress(sweep.address))).toBe(0n);
    }
    // The hot wallet holds what it was given, less the payouts, plus every deposit swept.
    expect(chain.state.usdtBalance(hotWallet)).toBe(BigInt(ADDRESSES) * DEPOSIT_MICRO);
    // Every delegation taken back.
    const stake = chain.state.account(hotWallet)!.stake!;
    expect(stake.delegatedSun.ENERGY).toBe(0n);
    expect(stake.frozenSun.ENERGY).toBe(energyStakeTrx * TRX);
    expect([...chain.state.delegations.values()]).toEqual([]);

    // What the chain charged, transfer by transfer, is what was recorded; nothing burned for energy.
    const transfers = await setup.context.db.selectFrom('crypto_outgoing_transfers').selectAll().execute();
    const byPurpose = new Map<string, number>();
    let chargedSun = 0n;
    let creationSun = 0n;
    for (const transfer of transfers) {
      byPurpose.set(transfer.purpose, (byPurpose.get(transfer.purpose) ?? 0) + 1);
      expect(transfer.status).toBe('confirmed');
      const receipt = chain.findTransaction(transfer.tx_id!)!.transaction.receipt;
      expect(receipt.result).toBe('SUCCESS');
      expect(receipt.energyFeeSun).toBe(0n);
      expect(receipt.netFeeSun).toBe(0n);
      expect(transfer.fee_sun).toBe(receipt.feeSun);
      expect(transfer.bandwidth_fee_sun).toBe(receipt.netFeeSun);
      expect(transfer.bandwidth_used).toBe(BigInt(receipt.netUsage));
      chargedSun += receipt.feeSun;
      if (transfer.asset === 'USDT') {
        expect(transfer).toMatchObject({
          energy_source: transfer.purpose === 'sweep' ? 'delegated' : 'staked',
          energy_used: BigInt(receipt.energyUsageTotal),
          energy_own: BigInt(receipt.energyUsageTotal),
          energy_fee_sun: 0n,
          fee_sun: 0n,
        });
        expect(receipt.energyUsage).toBe(receipt.energyUsageTotal);
      } else if (transfer.purpose === 'gas_topup') creationSun += receipt.feeSun;
      else expect(transfer.fee_sun).toBe(0n);
    }
    expect(Object.fromEntries(byPurpose)).toEqual({
      sweep: ADDRESSES,
      payout: ADDRESSES,
      gas_topup: ADDRESSES,
      energy_delegation: ADDRESSES,
      energy_undelegation: ADDRESSES,
    });
    // The only TRX burned all day: creating each new deposit address (the top-up that activates it).
    // (1 TRX each: the creation's bandwidth fee of 0.1 TRX came out of the staked bandwidth, as java-tron's
    // BandwidthProcessor.consumeForCreateNewAccount takes it.)
    expect(creationSun).toBe(BigInt(ADDRESSES) * prices.createNewAccountFeeSun);
    expect(chargedSun).toBe(creationSun);
    // The hot wallet's liquid TRX moved by exactly the top-ups it sent and what the chain charged for them.
    const toppedUp = sweeps.reduce((sum, sweep) => sum + sweep.topup_sun, 0n);
    expect(liquidAfterStaking - chain.state.account(hotWallet)!.balanceSun).toBe(toppedUp + chargedSun);
    // The custody costs of the day say the same (`paygate crypto costs`).
    const days = await costsOfLastDays(setup.context.db, setup.clock, 2);
    const sum = (field: 'transfers' | 'energy_used' | 'energy_fee_sun' | 'bandwidth_fee_sun') =>
      days.reduce((total, row) => total + row[field], 0n);
    expect(sum('energy_used')).toBe(dayEnergy);
    expect(sum('energy_fee_sun')).toBe(0n);
    expect(sum('bandwidth_fee_sun')).toBe(0n);

    console.info(
      `sweep day on ${backend}: ${ADDRESSES} sweeps + ${ADDRESSES} payouts in ${Math.round(dayMs)} ms ` +
        `(${Math.round(depositsMs)} ms of it paying and crediting the invoices) ` +
        `(CPU ${Math.round((dayCpu.user + dayCpu.system) / 1_000)} ms, ${passes} executor+sweeper passes); ` +
        `stake ${energyStakeTrx} TRX for ${dayEnergy} energy + ${roundDelegationEnergy} delegated per round, ` +
        `${bandwidthStakeTrx} TRX for ${dayBandwidth} bytes; burned ${chargedSun} sun (account creation only)`,
    );
  });
});

/**
 * The rest of the round's 36 minutes pass with no transfer of ours: in one block after missed slots
 * (java-tron counts recovery in slots), so the watcher scans one block rather than hundreds of empty ones.
 */
function idleRestOfRound(setup: SweepingSetup, roundStartMs: number): void {
  const chain = setup.sandbox.chain;
  const intervalMs = chain.parameters.blockIntervalMs;
  const slotsLeft = BLOCKS_PER_ROUND - (chain.head.timestampMs - roundStartMs) / intervalMs;
  if (slotsLeft <= 0) return;
  chain.missSlots(slotsLeft - 1);
  setup.clock.advance(slotsLeft * intervalMs);
}

/** `PER_ROUND` invoices paid and their deposits final (credited); returns their addresses. */
async function payInvoices(setup: SweepingSetup, round: number): Promise<TronAddress[]> {
  const addresses: TronAddress[] = [];
  for (let index = 0; index < PER_ROUND; index += 1) {
    const { invoice } = await createInvoice(setup.deps, setup.shop, {
      external_id: `day-${round}-${index}`,
      amount: DEPOSIT,
      network: 'TRC20',
    });
    await simulateDeposit(setup.deps, setup.shop, { address: invoice.address, amount: DEPOSIT });
    addresses.push(tronAddress(invoice.address));
  }
  advanceBlocks(setup, 1);
  await watchToHead(setup);
  advanceBlocks(setup, setup.sandbox.chain.parameters.solidityDepth);
  await watchToHead(setup);
  return addresses;
}

/** Watcher passes until one finds no block left to scan (a pass scans a bounded number of blocks). */
async function watchToHead(setup: SweepingSetup): Promise<void> {
  for (let pass = 0; pass < 1_000; pass += 1) if ((await setup.defaultWatcher.runPass()).blocksScanned === 0) return;
  expect.fail('the watcher did not reach the head');
}

/** The round's sweeps all completed and taken back, and its payouts all confirmed. */
async function roundDone(setup: SweepingSetup, addresses: number, payouts: number): Promise<boolean> {
  const db = setup.context.db;
  const [swept, paid] = await Promise.all([
    db
      .selectFrom('crypto_sweeps')
      .select((eb) => eb.fn.countAll<string>().as('count'))
      .where('status', '=', 'completed')
      .where('undelegation_status', '=', 'undelegated')
      .executeTakeFirstOrThrow(),
    db
      .selectFrom('crypto_outgoing_transfers')
      .select((eb) => eb.fn.countAll<string>().as('count'))
      .where('purpose', '=', 'payout')
      .where('status', '=', 'confirmed')
      .executeTakeFirstOrThrow(),
  ]);
  return Number(swept.count) === addresses && Number(paid.count) === payouts;
}

/** The attempts and transfers not done yet, counted by state: where a round got stuck. */
async function whereStuck(setup: SweepingSetup): Promise<string> {
  const db = setup.context.db;
  const sweeps = await db
    .selectFrom('crypto_sweeps')
    .select(['status', 'undelegation_status', 'error_code', (eb) => eb.fn.countAll<string>().as('count')])
    .groupBy(['status', 'undelegation_status', 'error_code'])
    .execute();
  const transfers = await db
    .selectFrom('crypto_outgoing_transfers')
    .select(['purpose', 'status', 'error_code', 'energy_plan', (eb) => eb.fn.countAll<string>().as('count')])
    .where('status', '!=', 'confirmed')
    .groupBy(['purpose', 'status', 'error_code', 'energy_plan'])
    .execute();
  return JSON.stringify({ sweeps, transfers }, (_key, value: unknown) =>
    typeof value === 'bigint' ? value.toString() : value,
  );
}

// Costs visible: every landed outgoing transfer records, from its own receipt on
// the simulated chain, the energy and bandwidth it used, the TRX burned for
// each, where its energy came from and its cost in micro-USDT at the rate.
import { Registry } from 'prom-client';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { receiptEnergySource } from '../../../src/crypto/energy/energy-sources.ts';
import { findTransfer } from '../../../src/crypto/sending/sending-repository.ts';
import { sunToMicroUsdt } from '../../../src/crypto/sending/transfer-cost.ts';
import { costsOfLastDays, registerTransferCostMetrics } from '../../../src/crypto/sending/transfer-costs.ts';
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

const RATE_MICRO = 300_000n;

describe('receiptEnergySource', () => {
  it('names the energy by what the receipt says the sender covered: none, all (the plan), part (mixed)', () => {
    const receipt = { energyUsed: 64_285, energyOwnUsed: 0, energyFeeSun: 6_428_500n };
    expect(receiptEnergySource('burned', receipt)).toBe('burned');
    expect(receiptEnergySource('rented', receipt)).toBe('burned');
    expect(receiptEnergySource('rented', { ...receipt, energyOwnUsed: 64_285, energyFeeSun: 0n })).toBe('rented');
    expect(receiptEnergySource('delegated', { ...receipt, energyOwnUsed: 64_285, energyFeeSun: 0n })).toBe('delegated');
    expect(receiptEnergySource(null, { ...receipt, energyOwnUsed: 64_285, energyFeeSun: 0n })).toBe('staked');
    expect(receiptEnergySource('staked', { ...receipt, energyOwnUsed: 30_000, energyFeeSun: 3_428_500n })).toBe(
      'mixed',
    );
    expect(receiptEnergySource(null, { energyUsed: 0, energyOwnUsed: 0, energyFeeSun: 0n })).toBeNull();
  });
});

describe.each(backends)('transfer costs recorded from receipts on %s', (backend) => {
  let setup: ReceivingSetup;
  let log: HandlerLog;
  beforeEach(async () => {
    setup = await openReceivingSetup(backend);
    log = newLog();
  });
  afterEach(async () => {
    await expectLedgerSound(setup);
    await setup.close();
  });

  it('a payout and a gas top-up record what their receipts say they used and burned, and their cost at the rate', async () => {
    fundHotWallet(setup);
    const payout = await enqueuePayout(setup, freshAddress(), 7_000_000n);
    const topUp = await enqueuePayout(setup, freshAddress(), 2_000_000n, {
      purpose: 'gas_topup',
      asset: 'TRX',
    });
    const executor = executorFor(setup, log, { trxUsdtRateMicro: RATE_MICRO });
    expect(await executor.runPass()).toMatchObject({ signed: 2 });
    setup.sandbox.chain.mine(1);
    mineToFinal(setup);
    expect(await executor.runPass()).toMatchObject({ confirmed: 2 });

    const sent = (await findTransfer(setup.context.db, payout.id))!;
    const receipt = (await setup.access.node.getTransactionOutcome(sent.tx_id!))!;
    expect(receipt.energyUsed).toBeGreaterThan(0);
    expect(sent).toMatchObject({
      energy_used: BigInt(receipt.energyUsed),
      energy_own: 0n,
      energy_fee_sun: receipt.energyFeeSun,
      bandwidth_used: BigInt(receipt.bandwidthUsed),
      bandwidth_fee_sun: receipt.bandwidthFeeSun,
      fee_sun: receipt.feeSun,
      // The simulated hot wallet has no staked energy: all of it burned, as planned.
      energy_plan: 'burned',
      energy_source: 'burned',
      rental_sun: null,
      cost_micro: sunToMicroUsdt(receipt.feeSun, RATE_MICRO),
    });
    expect(sent.energy_fee_sun).toBeGreaterThan(0n);

    const trx = (await findTransfer(setup.context.db, topUp.id))!;
    const trxReceipt = (await setup.access.node.getTransactionOutcome(trx.tx_id!))!;
    expect(trx).toMatchObject({
      energy_used: 0n,
      bandwidth_used: BigInt(trxReceipt.bandwidthUsed),
      bandwidth_fee_sun: trxReceipt.bandwidthFeeSun,
      energy_plan: null,
      energy_source: null,
      cost_micro: sunToMicroUsdt(trxReceipt.feeSun, RATE_MICRO),
    });

    // The day's sums (the custody view, `paygate crypto costs`) and today's gauges on /metrics.
    const [day, ...others] = await costsOfLastDays(setup.context.db, setup.clock, 7);
    expect(others).toEqual([]);
    const burnedSun = sent.energy_fee_sun! + sent.bandwidth_fee_sun! + trx.energy_fee_sun! + trx.bandwidth_fee_sun!;
    expect(day).toEqual({
      chain: 'tron-sandbox',
      day: setup.clock.now().toISOString().slice(0, 10),
      transfers: 2n,
      energy_used: sent.energy_used,
      energy_own: 0n,
      energy_staked: 0n,
      energy_delegated: 0n,
      energy_rented: 0n,
      energy_burned_source: sent.energy_used,
      energy_mixed: 0n,
      energy_fee_sun: sent.energy_fee_sun! + trx.energy_fee_sun!,
      bandwidth_used: sent.bandwidth_used! + trx.bandwidth_used!,
      bandwidth_fee_sun: sent.bandwidth_fee_sun! + trx.bandwidth_fee_sun!,
      rental_sun: 0n,
      cost_micro: sent.cost_micro! + trx.cost_micro!,
    });
    const registry = new Registry();
    registerTransferCostMetrics({ ...setup.context, clock: setup.clock, metrics: registry });
    const exposition = await registry.metrics();
    expect(exposition).toContain(
      `paygate_outgoing_energy_today{chain="tron-sandbox",source="burned"} ${sent.energy_used}`,
    );
    expect(exposition).toContain(
      `paygate_outgoing_trx_burned_today{chain="tron-sandbox"} ${Number(burnedSun) / 1_000_000}`,
    );
    expect(exposition).toContain(
      `paygate_outgoing_cost_usdt_today{chain="tron-sandbox"} ${Number(day!.cost_micro) / 1_000_000}`,
    );
    // Tomorrow, today's gauges start again from nothing.
    setup.clock.advance(86_400_000);
    expect(await registry.metrics()).not.toContain('paygate_outgoing_cost_usdt_today{');
  });
});

// The burn cap (PAYGATE_TRON_MAX_BURN_TRX): a transfer that would burn more TRX
// than the cap stays queued and unsigned — past the funds wait, never failed —
// and the operator is told (the executor's pass count feeds the
// paygate_outgoing_transfers_waiting_for_burn_cap gauge); within a raised cap it is sent.
import { Registry } from 'prom-client';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { sendingMetrics } from '../../../src/crypto/sending/sending-metrics.ts';
import { attemptsOf, findTransfer } from '../../../src/crypto/sending/sending-repository.ts';
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

describe.each(backends)('the burn cap on %s', (backend) => {
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

  it('a payout that would burn more than the cap waits unsigned past the funds wait, the gauge tells the operator, and a higher cap sends it', async () => {
    fundHotWallet(setup);
    const to = freshAddress();
    const payout = await enqueuePayout(setup, to, 5_000_000n);
    // A USDT transfer to a new holder burns 13+ TRX on the simulated chain (no staked energy).
    const capped = executorFor(setup, log, { maxBurnSun: 1_000_000n, fundsWaitSeconds: 60 });
    const registry = new Registry();
    const metrics = sendingMetrics(registry);

    const first = await capped.runPass();
    expect(first).toMatchObject({ signed: 0, waitingForBurnCap: 1, waitingForFunds: 0, failed: 0 });
    metrics.recordPass('tron-sandbox', first);
    const gauge = await registry.getSingleMetric('paygate_outgoing_transfers_waiting_for_burn_cap')!.get();
    expect(gauge.values).toEqual([{ labels: { chain: 'tron-sandbox' }, value: 1 }]);
    const held = (await findTransfer(setup.context.db, payout.id))!;
    expect(held).toMatchObject({ status: 'queued', short_of_funds_since: null });
    expect(held.above_burn_cap_since).toEqual(setup.clock.now());
    expect(await attemptsOf(setup.context.db, payout.id)).toHaveLength(0);

    // Far past the funds wait: still held, never failed.
    setup.clock.advance(3_600_000);
    expect(await capped.runPass()).toMatchObject({ signed: 0, waitingForBurnCap: 1, failed: 0 });
    expect((await findTransfer(setup.context.db, payout.id))!.status).toBe('queued');
    await capped.release();

    const raised = executorFor(setup, log, { maxBurnSun: 100_000_000n, fundsWaitSeconds: 60 });
    expect(await raised.runPass()).toMatchObject({ signed: 1, waitingForBurnCap: 0 });
    setup.sandbox.chain.mine(1);
    mineToFinal(setup);
    expect(await raised.runPass()).toMatchObject({ confirmed: 1 });
    const sent = (await findTransfer(setup.context.db, payout.id))!;
    expect(sent).toMatchObject({ status: 'confirmed', above_burn_cap_since: null });
    expect(sent.energy_fee_sun! + sent.bandwidth_fee_sun!).toBeGreaterThan(1_000_000n);
    expect(sent.fee_sun).toBeLessThanOrEqual(100_000_000n);
    expect(setup.sandbox.chain.state.usdtBalance(to)).toBe(5_000_000n);
  });
});

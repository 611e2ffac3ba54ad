// The executor worker as the gateway runs it (module wiring, the chain handle of
// the context): a sandbox payout from an empty sandbox hot wallet is sent after
// the worker tops the wallet up from the simulated chain's faucet, and confirmed;
// at start it warns of a burn cap under what a new address's top-up must burn.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { findOutgoingTransfer } from '../../../src/crypto/sending/outgoing-transfers.ts';
import {
  createOutgoingTransferWorker,
  missingOutcomeHandlers,
  NEW_ACCOUNT_BURN_SUN,
} from '../../../src/crypto/sending/sending-worker.ts';
import { capturingLogger, LEVEL } from '../../support/log-capture.ts';
import { backends } from '../../support/databases.ts';
import { outgoingOutcomeHandlers } from '../../../src/modules.ts';
import { expectLedgerSound, openReceivingSetup, type ReceivingSetup } from '../receiving/receiving-service-support.ts';
import { enqueuePayout, freshAddress, mineToFinal, newLog, recordingHandler } from './executor-support.ts';

describe.each(backends)('the outgoing transfer worker on %s', (backend) => {
  let setup: ReceivingSetup;
  beforeEach(async () => {
    setup = await openReceivingSetup(backend);
  });
  afterEach(async () => {
    await expectLedgerSound(setup);
    await setup.close();
  });

  it('tops the sandbox hot wallet up at first use, sends and confirms', async () => {
    const log = newLog();
    const worker = createOutgoingTransferWorker(setup.deps, { payout: recordingHandler(log) });
    expect(await worker.runOnce()).toBe(0); // nothing open: no executor, no chain work
    const hot = setup.access.addressKey.hotWalletAddress;
    expect(setup.sandbox.chain.state.usdtBalance(hot)).toBe(0n);
    const to = freshAddress();
    const transfer = await enqueuePayout(setup, to, 9_000_000n);
    expect(await worker.runOnce()).toBe(1);
    expect(setup.sandbox.chain.state.usdtBalance(hot)).toBeGreaterThan(0n);
    setup.sandbox.chain.mine(1);
    mineToFinal(setup);
    expect(await worker.runOnce()).toBe(1);
    expect((await findOutgoingTransfer(setup.context.db, transfer.id))!.status).toBe('confirmed');
    expect(setup.sandbox.chain.state.usdtBalance(to)).toBe(9_000_000n);
    expect(log.final).toHaveLength(1);
    const exposed = await setup.context.metrics.metrics();
    expect(exposed).toContain('paygate_outgoing_transfers_final_total{chain="tron-sandbox",result="confirmed"} 1');
    expect(exposed).toContain('paygate_outgoing_transfers_waiting_for_funds{chain="tron-sandbox"} 0');
  });

  it('names the purposes without a handler', () => {
    expect(missingOutcomeHandlers({ payout: recordingHandler(newLog()) })).toEqual([
      'refund',
      'withdrawal',
      'sweep',
      'gas_topup',
      'cold_storage',
      'energy_delegation',
      'energy_undelegation',
    ]);
  });

  it('the gateway as wired handles every purpose: nothing it enqueues can stay queued for want of a handler', () => {
    // The start-up warning is for a partial wiring (tests); the gateway's own module list must leave none.
    expect(missingOutcomeHandlers(outgoingOutcomeHandlers())).toEqual([]);
  });

  it('warns once at start when PAYGATE_TRON_MAX_BURN_TRX is below the 1.1 TRX a new address’s top-up burns, not when it covers it', async () => {
    const warnings = async (maxBurnSun: bigint) => {
      const { logger, lines } = capturingLogger();
      const config = { ...setup.deps.config, tronMaxBurnSun: maxBurnSun };
      const worker = createOutgoingTransferWorker({ ...setup.deps, config, logger }, outgoingOutcomeHandlers());
      worker.start();
      await worker.stop();
      return lines.filter((line) => line.level === LEVEL.warn && line.msg.startsWith('PAYGATE_TRON_MAX_BURN_TRX'));
    };
    expect(NEW_ACCOUNT_BURN_SUN).toBe(1_100_000n);
    const below = await warnings(1_000_000n);
    expect(below).toHaveLength(1);
    expect(below[0]).toMatchObject({ max_burn_sun: '1000000', new_account_burn_sun: '1100000' });
    expect(await warnings(NEW_ACCOUNT_BURN_SUN)).toEqual([]);
  });
});

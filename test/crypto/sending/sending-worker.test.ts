// The executor worker as the gateway runs it (module wiring, the chain handle of
// the context): a sandbox payout from an empty sandbox hot wallet is sent after
// the worker tops the wallet up from the simulated chain's faucet, and confirmed.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { findOutgoingTransfer } from '../../../src/crypto/sending/outgoing-transfers.ts';
import { createOutgoingTransferWorker, missingOutcomeHandlers } from '../../../src/crypto/sending/sending-worker.ts';
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
});

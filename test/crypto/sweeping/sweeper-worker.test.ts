// The sweeper and the executor as `serve --role worker` runs them (their module
// entries in src/modules.ts, real timers), against the simulated chain whose
// blocks the test mines: an address over the threshold ends swept with no call
// from the test but mining.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { mineBlocks } from '../../../src/crypto/receiving/sandbox-chain-service.ts';
import { createOutgoingTransferWorker } from '../../../src/crypto/sending/sending-worker.ts';
import { sweepsOfAddress } from '../../../src/crypto/sweeping/sweeping-service.ts';
import { createSweeperWorker } from '../../../src/crypto/sweeping/sweeping-worker.ts';
import type { Worker } from '../../../src/context.ts';
import { outgoingOutcomeHandlers } from '../../../src/modules.ts';
import { backends } from '../../support/databases.ts';
import { expectLedgerSound, usdtMainBalance } from '../receiving/receiving-service-support.ts';
import { finalDepositOn, openSweepingSetup, usdtOf, type SweepingSetup } from './sweeping-support.ts';

describe.each(backends)('the sweeper worker on %s', (backend) => {
  let setup: SweepingSetup;
  let workers: Worker[] = [];
  beforeEach(async () => {
    setup = await openSweepingSetup(backend);
  });
  afterEach(async () => {
    for (const worker of workers) await worker.stop();
    workers = [];
    await expectLedgerSound(setup);
    await setup.close();
  });

  it('sweeps an address over the threshold by itself: top-up, then the USDT, each once', async () => {
    const address = await finalDepositOn(setup, 'worker', '80');
    const hotBefore = await usdtOf(setup, setup.hotWallet);
    workers = [
      createSweeperWorker(setup.deps, { pollIntervalMs: 50 }),
      createOutgoingTransferWorker(setup.deps, outgoingOutcomeHandlers()),
    ];
    for (const worker of workers) worker.start();
    // Waits for the sweep to complete, moving the chain and the clock on meanwhile; the pause only
    // paces the loop, and the test timeout is the only bound.
    while ((await sweepsOfAddress(setup.context.db, address))[0]?.status !== 'completed') {
      await mineBlocks(setup.deps, setup.shop, 1);
      setup.clock.advance(3_000);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const sweeps = await sweepsOfAddress(setup.context.db, address);
    expect(sweeps).toHaveLength(1);
    expect(sweeps[0]).toMatchObject({ status: 'completed', amount_micro: 80_000_000n });
    expect(await usdtOf(setup, address)).toBe(0n);
    expect((await usdtOf(setup, setup.hotWallet)) - hotBefore).toBe(80_000_000n);
    const transfers = await setup.context.db
      .selectFrom('crypto_outgoing_transfers')
      .select(['purpose', 'status'])
      .orderBy('created_at')
      .execute();
    expect(transfers).toEqual([
      { purpose: 'gas_topup', status: 'confirmed' },
      { purpose: 'sweep', status: 'confirmed' },
    ]);
    expect(await usdtMainBalance(setup)).toBe(80_000_000n);
  });
});

// What the executor takes as proof before it signs a transfer again or fails it
// (docs/payouts.md, "never sends twice"): a solidified block the node does not
// have stops the read of results (never stepped over), and an expired
// transaction is judged absent only once that read has reached the solid block
// without a gap — a lagging node that answers `{}` for a landed transaction by id
// must not make it sign a second one; and a failure decided on a snapshot does
// not apply to a transfer that another executor has signed meanwhile.
// The node is the production client against the simulated chain; the lagging
// node wraps it at the network edge (the same TronNodeClient interface).
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { findOutgoingTransfer } from '../../../src/crypto/sending/outgoing-transfers.ts';
import { attemptsOf } from '../../../src/crypto/sending/sending-repository.ts';
import type { TronNodeClient } from '../../../src/crypto/tron/node-client.ts';
import { backends } from '../../support/databases.ts';
import { expectLedgerSound, openReceivingSetup, type ReceivingSetup } from '../receiving/receiving-service-support.ts';
import { enqueuePayout, executorFor, freshAddress, fundHotWallet, mineToFinal, newLog, type HandlerLog } from './executor-support.ts';

/** A node behind the others: no solidified results for one block, and `{}` for any transaction asked by id, while `lagging`. */
function laggingNode(node: TronNodeClient): TronNodeClient & { lagging: boolean; missingBlock: number | undefined } {
  const lag = Object.create(node) as TronNodeClient & { lagging: boolean; missingBlock: number | undefined };
  lag.lagging = false;
  lag.missingBlock = undefined;
  lag.getBlockOutcomes = async (number, options) => (lag.lagging && number === lag.missingBlock ? null : node.getBlockOutcomes(number, options));
  lag.getTransactionOutcome = async (txId, options) => (lag.lagging ? null : node.getTransactionOutcome(txId, options));
  return lag;
}

describe.each(backends)('the executor’s proofs on %s', (backend) => {
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

  const chain = () => setup.sandbox.chain;
  const scannedBlock = async () =>
    Number((await setup.context.db.selectFrom('crypto_sending_leases').select('scanned_block').where('chain', '=', 'tron-sandbox').executeTakeFirstOrThrow()).scanned_block);

  it('a landed transaction in a block the node lacks, and `{}` by id: nothing is signed again or failed until the block is read; then confirmed once', async () => {
    fundHotWallet(setup);
    const to = freshAddress();
    const transfer = await enqueuePayout(setup, to, 4_000_000n);
    const node = laggingNode(setup.access.node);
    const executor = executorFor(setup, log, { node });
    expect((await executor.runPass()).signed).toBe(1);
    const sent = (await findOutgoingTransfer(setup.context.db, transfer.id))!;
    chain().mine(1);
    const landedIn = chain().findTransaction(sent.txId!)!.block.number;
    node.missingBlock = landedIn;
    node.lagging = true;
    // Far past the expiration (90 s of chain time, 30 blocks) and the solidity depth.
    chain().mine(100);
    for (let pass = 0; pass < 4; pass += 1) {
      const result = await executor.runPass();
      expect(result.signed).toBe(0);
      expect(result.expiredAttempts).toBe(0);
      expect(result.failed).toBe(0);
      // The read stops before the block it could not get.
      expect(await scannedBlock()).toBeLessThan(landedIn);
    }
    expect(await findOutgoingTransfer(setup.context.db, transfer.id)).toMatchObject({ status: 'submitted', txId: sent.txId });
    expect(await attemptsOf(setup.context.db, transfer.id)).toHaveLength(1);

    node.lagging = false;
    const caughtUp = await executor.runPass();
    expect(caughtUp.signed).toBe(0);
    expect(await findOutgoingTransfer(setup.context.db, transfer.id)).toMatchObject({ status: 'confirmed', txId: sent.txId });
    expect((await attemptsOf(setup.context.db, transfer.id)).map((attempt) => attempt.status)).toEqual(['landed']);
    expect(chain().state.usdtBalance(to)).toBe(4_000_000n);
    expect(log.final).toHaveLength(1);
  });

  it('a transaction that really never landed is still re-signed once the read has caught up (the proof is complete)', async () => {
    fundHotWallet(setup);
    const to = freshAddress();
    const transfer = await enqueuePayout(setup, to, 2_000_000n);
    const node = laggingNode(setup.access.node);
    const executor = executorFor(setup, log, { node });
    setup.sandbox.faults.set({ neverInclude: 1 });
    await executor.runPass();
    const first = (await findOutgoingTransfer(setup.context.db, transfer.id))!;
    node.missingBlock = chain().head.number + 5;
    node.lagging = true;
    chain().mine(100);
    expect((await executor.runPass()).signed).toBe(0); // a gap: no judgement
    node.lagging = false;
    const judged = await executor.runPass();
    expect(judged.expiredAttempts).toBe(1);
    expect(judged.signed).toBe(1);
    const second = (await findOutgoingTransfer(setup.context.db, transfer.id))!;
    expect(second.txId).not.toBe(first.txId);
    chain().mine(1);
    mineToFinal(setup);
    await executor.runPass();
    expect(await findOutgoingTransfer(setup.context.db, transfer.id)).toMatchObject({ status: 'confirmed', txId: second.txId });
    expect(chain().state.usdtBalance(to)).toBe(2_000_000n);
  });

  it('a failure judged by a leader that then lost its lease does not apply once another executor has signed the transfer', async () => {
    const to = freshAddress();
    const transfer = await enqueuePayout(setup, to, 3_000_000n);
    let release: () => void = () => undefined;
    let paused: () => void = () => undefined;
    const reachedFinish = new Promise<void>((resolve) => (paused = resolve));
    const gate = new Promise<void>((resolve) => (release = resolve));
    const stale = executorFor(setup, log, {
      fundsWaitSeconds: 60,
      leaseMs: 5_000,
      onStep: async (step) => {
        if (step !== 'before-finish') return;
        paused();
        await gate;
      },
    });
    // Short of funds: it waits, and past the wait it judges the transfer failed…
    expect((await stale.runPass()).waitingForFunds).toBe(1);
    setup.clock.advance(61_000);
    const stalePass = stale.runPass().catch((error: unknown) => error);
    await reachedFinish;
    // …but pauses before applying it. Its lease runs out; funds arrive; another executor signs.
    setup.clock.advance(6_000);
    fundHotWallet(setup);
    const leader = executorFor(setup, log, { fundsWaitSeconds: 60 });
    const led = await leader.runPass();
    expect(led.leader).toBe(true);
    expect(led.signed).toBe(1);
    const signed = (await findOutgoingTransfer(setup.context.db, transfer.id))!;
    expect(signed.status).toBe('submitted');

    release();
    await stalePass;
    // The stale judgement (made when the transfer had no transaction) changed nothing.
    expect(await findOutgoingTransfer(setup.context.db, transfer.id)).toMatchObject({ status: 'submitted', txId: signed.txId, errorCode: null });
    expect(log.final).toHaveLength(0);
    chain().mine(1);
    mineToFinal(setup);
    await leader.runPass();
    expect(await findOutgoingTransfer(setup.context.db, transfer.id)).toMatchObject({ status: 'confirmed', txId: signed.txId });
    expect(chain().state.usdtBalance(to)).toBe(3_000_000n);
  });
});

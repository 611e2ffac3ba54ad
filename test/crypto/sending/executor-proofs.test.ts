// What the executor takes as proof before it signs a transfer again or fails it
// (docs/payouts.md, "never sends twice"). A solidified block counts as read only
// when a node returned the block itself and one result per transaction in it:
// java-tron answers `[]` for the results of a block it does not have, has not
// solidified yet, or keeps no results for (history off), exactly as for an
// empty block (GetTransactionInfoByBlockNumServlet). An expired transaction is
// judged absent only once that read has reached the solid block without a gap,
// and two different nodes (when two are configured) answer `{}` for it by id.
// And a failure decided on a snapshot does not apply to a transfer that another
// executor has signed meanwhile. The nodes are the simulated chain's own full
// nodes (a lagging one, one with its history off, one that hides transactions)
// asked through the production client.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { findOutgoingTransfer } from '../../../src/crypto/sending/outgoing-transfers.ts';
import { attemptsOf } from '../../../src/crypto/sending/sending-repository.ts';
import type { NodeFaultSettings } from '../../../src/crypto/simchain/node-faults.ts';
import { createTronNodeClient, type TronNodeClient } from '../../../src/crypto/tron/node-client.ts';
import { USDT_CONTRACT_MAINNET } from '../../../src/crypto/tron/trc20-usdt.ts';
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
} from './executor-support.ts';

/** The block queries a lagging backend of a load-balanced provider answers, while getnowblock comes from an up-to-date one. */
const BLOCK_QUERIES = [
  '/walletsolidity/getblockbynum',
  '/walletsolidity/gettransactioninfobyblocknum',
  '/walletsolidity/gettransactioninfobyid',
  '/wallet/gettransactioninfobyid',
];

describe.each(backends)('the executor’s proofs on %s', (backend) => {
  let setup: ReceivingSetup;
  let log: HandlerLog;
  const clients: TronNodeClient[] = [];
  beforeEach(async () => {
    setup = await openReceivingSetup(backend);
    log = newLog();
  });
  afterEach(async () => {
    for (const client of clients.splice(0)) await client.close();
    await expectLedgerSound(setup);
    await setup.close();
  });

  const chain = () => setup.sandbox.chain;
  const scannedBlock = async () =>
    Number(
      (
        await setup.context.db
          .selectFrom('crypto_sending_leases')
          .select('scanned_block')
          .where('chain', '=', 'tron-sandbox')
          .executeTakeFirstOrThrow()
      ).scanned_block,
    );

  /** A simulated full node of the sandbox chain with these faults, and a client asking it first, then the honest node when `withHonest`. */
  function nodes(
    name: string,
    faults: NodeFaultSettings,
    withHonest: boolean,
  ): { client: TronNodeClient; faulty: ReturnType<ReceivingSetup['sandbox']['node']> } {
    const faulty = setup.sandbox.node(name);
    faulty.faults.set(faults);
    const urls = withHonest ? [faulty.url, setup.sandbox.url] : [faulty.url];
    const client = createTronNodeClient({ urls, usdtContract: USDT_CONTRACT_MAINNET, retryDelayMs: 0, cooldownMs: 0 });
    clients.push(client);
    return { client, faulty };
  }

  /** Signs and lands one payout, then mines far past its expiration (90 s of chain time) and the solidity depth. */
  async function landedPayout(node: TronNodeClient, amount: bigint) {
    fundHotWallet(setup);
    const to = freshAddress();
    const transfer = await enqueuePayout(setup, to, amount);
    const executor = executorFor(setup, log, { node });
    expect((await executor.runPass()).signed).toBe(1);
    const sent = (await findOutgoingTransfer(setup.context.db, transfer.id))!;
    chain().mine(1);
    const landedIn = chain().findTransaction(sent.txId!)!.block.number;
    chain().mine(100);
    return { to, transfer, executor, sent, landedIn };
  }

  async function expectNeverSignedAgain(executor: ReturnType<typeof executorFor>, transferId: string, txId: string) {
    for (let pass = 0; pass < 4; pass += 1) {
      const result = await executor.runPass();
      expect(result.signed).toBe(0);
      expect(result.expiredAttempts).toBe(0);
      expect(result.failed).toBe(0);
    }
    expect(await findOutgoingTransfer(setup.context.db, transferId)).toMatchObject({ status: 'submitted', txId });
    expect(await attemptsOf(setup.context.db, transferId)).toHaveLength(1);
  }

  it('a node with its transaction history off (`[]` for the landed block, `{}` by id), alone: never judged absent, nothing signed again; confirmed once it keeps history', async () => {
    const { client, faulty } = nodes('history-off', { historyOff: true }, false);
    const { to, transfer, executor, sent, landedIn } = await landedPayout(client, 4_000_000n);
    await expectNeverSignedAgain(executor, transfer.id, sent.txId!);
    // The read stops before the block it could not prove.
    expect(await scannedBlock()).toBeLessThan(landedIn);
    expect(chain().state.usdtBalance(to)).toBe(4_000_000n);

    faulty.faults.set({ historyOff: undefined });
    expect((await executor.runPass()).signed).toBe(0);
    expect(await findOutgoingTransfer(setup.context.db, transfer.id)).toMatchObject({
      status: 'confirmed',
      txId: sent.txId,
    });
    expect((await attemptsOf(setup.context.db, transfer.id)).map((attempt) => attempt.status)).toEqual(['landed']);
    expect(chain().state.usdtBalance(to)).toBe(4_000_000n);
    expect(log.final).toHaveLength(1);
  });

  it('a provider whose block queries lag (`{}` for the landed block, `[]` for its results) while its head is current, alone: nothing signed again until the block is read; then confirmed once', async () => {
    const { client, faulty } = nodes('lagging', { lagBlocks: 200, lagPaths: BLOCK_QUERIES }, false);
    const { to, transfer, executor, sent, landedIn } = await landedPayout(client, 5_000_000n);
    await expectNeverSignedAgain(executor, transfer.id, sent.txId!);
    expect(await scannedBlock()).toBeLessThan(landedIn);

    faulty.faults.set({ lagBlocks: undefined });
    await executor.runPass();
    expect(await findOutgoingTransfer(setup.context.db, transfer.id)).toMatchObject({
      status: 'confirmed',
      txId: sent.txId,
    });
    expect(chain().state.usdtBalance(to)).toBe(5_000_000n);
  });

  it.each<[string, NodeFaultSettings]>([
    ['lagging', { lagBlocks: 200, lagPaths: BLOCK_QUERIES }],
    ['history-off', { historyOff: true }],
    ['hiding', { hideTransactions: true }],
  ])(
    'a %s node asked first, an honest one second: the landed transaction is found, confirmed once, never signed again',
    async (name, faults) => {
      const { client } = nodes(name, faults, true);
      const { to, transfer, executor, sent } = await landedPayout(client, 6_000_000n);
      for (let pass = 0; pass < 3; pass += 1) expect((await executor.runPass()).signed).toBe(0);
      expect(await findOutgoingTransfer(setup.context.db, transfer.id)).toMatchObject({
        status: 'confirmed',
        txId: sent.txId,
      });
      expect((await attemptsOf(setup.context.db, transfer.id)).map((attempt) => attempt.status)).toEqual(['landed']);
      expect(chain().state.usdtBalance(to)).toBe(6_000_000n);
      expect(log.final).toHaveLength(1);
    },
  );

  it('a transaction that really never landed is re-signed once two nodes say so and the read has caught up', async () => {
    fundHotWallet(setup);
    const to = freshAddress();
    const transfer = await enqueuePayout(setup, to, 2_000_000n);
    const { client, faulty } = nodes('lagging', { lagBlocks: 200, lagPaths: BLOCK_QUERIES }, false);
    const executor = executorFor(setup, log, { node: client });
    setup.sandbox.faults.set({ neverInclude: 1 });
    faulty.faults.set({ neverInclude: 1 });
    await executor.runPass();
    const first = (await findOutgoingTransfer(setup.context.db, transfer.id))!;
    chain().mine(100);
    expect((await executor.runPass()).signed).toBe(0); // a gap: no judgement
    faulty.faults.set({ lagBlocks: undefined });
    const judged = await executor.runPass();
    expect(judged.expiredAttempts).toBe(1);
    expect(judged.signed).toBe(1);
    const second = (await findOutgoingTransfer(setup.context.db, transfer.id))!;
    expect(second.txId).not.toBe(first.txId);
    chain().mine(1);
    mineToFinal(setup);
    await executor.runPass();
    expect(await findOutgoingTransfer(setup.context.db, transfer.id)).toMatchObject({
      status: 'confirmed',
      txId: second.txId,
    });
    expect(chain().state.usdtBalance(to)).toBe(2_000_000n);
  });

  it('with two nodes configured, one that cannot answer by id holds the judgement: nothing is signed again until both have said `{}`', async () => {
    fundHotWallet(setup);
    const to = freshAddress();
    const transfer = await enqueuePayout(setup, to, 3_000_000n);
    const { client, faulty } = nodes('flaky', {}, true);
    const executor = executorFor(setup, log, { node: client });
    // Broadcast to the first node: it takes the transaction and loses it.
    faulty.faults.set({ neverInclude: 1 });
    await executor.runPass();
    chain().mine(100);
    faulty.faults.set({ http503: true });
    // Only the honest node answers: one `{}` is not enough.
    const held = await executor.runPass();
    expect(held.expiredAttempts).toBe(0);
    expect(held.signed).toBe(0);
    faulty.faults.set({ http503: undefined });
    const judged = await executor.runPass();
    expect(judged.expiredAttempts).toBe(1);
    expect(judged.signed).toBe(1);
    chain().mine(1);
    mineToFinal(setup);
    await executor.runPass();
    expect(await findOutgoingTransfer(setup.context.db, transfer.id)).toMatchObject({ status: 'confirmed' });
    expect(chain().state.usdtBalance(to)).toBe(3_000_000n);
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
    expect(await findOutgoingTransfer(setup.context.db, transfer.id)).toMatchObject({
      status: 'submitted',
      txId: signed.txId,
      errorCode: null,
    });
    expect(log.final).toHaveLength(0);
    chain().mine(1);
    mineToFinal(setup);
    await leader.runPass();
    expect(await findOutgoingTransfer(setup.context.db, transfer.id)).toMatchObject({
      status: 'confirmed',
      txId: signed.txId,
    });
    expect(chain().state.usdtBalance(to)).toBe(3_000_000n);
  });
});

// The chain watcher against the simulated chain: reorganisations that remove or
// move a seen deposit, transfers that must never be credited (a log from another
// contract, a reverted transfer, a zero-value transfer), a crash at every step
// of a pass followed by a restart (every deposit credited exactly once), and
// two watchers of which one scans.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createInvoice, getInvoice } from '../../../src/crypto/receiving/invoice-service.ts';
import { depositsOfInvoice, findCursor } from '../../../src/crypto/receiving/receiving-repository.ts';
import { LEASE_MS, type WatcherStep } from '../../../src/crypto/receiving/chain-watcher.ts';
import { startSimulatedChainServer } from '../../../src/crypto/simchain/chain-server.ts';
import { tronAddress } from '../../../src/crypto/tron/address.ts';
import { createTronNodeClient } from '../../../src/crypto/tron/node-client.ts';
import { USDT_CONTRACT_NILE } from '../../../src/crypto/tron/trc20-usdt.ts';
import { backends } from '../../support/databases.ts';
import {
  creditsOfDeposit,
  eventTypes,
  expectLedgerSound,
  openReceivingSetup,
  usdtMainBalance,
  type ReceivingSetup,
} from './receiving-service-support.ts';
import { uniqueName } from '../../support/seeded-random.ts';

describe.each(backends)('the chain watcher on %s', (backend) => {
  let setup: ReceivingSetup;
  beforeEach(async () => {
    setup = await openReceivingSetup(backend);
  });
  afterEach(async () => {
    await expectLedgerSound(setup);
    await setup.close();
  });

  const chain = () => setup.sandbox.chain;
  const solidityDepth = () => chain().parameters.solidityDepth;

  async function invoiceFor(amount: string): Promise<{ id: string; address: string }> {
    const { invoice } = await createInvoice(setup.deps, setup.shop, {
      external_id: uniqueName('order'),
      amount,
      network: 'TRC20',
    });
    return { id: invoice.invoice_id, address: invoice.address };
  }

  function send(address: string, amountMicro: bigint): string {
    const sent = chain().sendUsdt({ to: tronAddress(address), amount: amountMicro });
    expect(sent.result).toBe(true);
    return sent.transaction.txId;
  }

  it('a reorg that removes a seen deposit: orphaned, never credited, the invoice never paid', async () => {
    const invoice = await invoiceFor('10');
    send(invoice.address, 10_000_000n);
    chain().mine(1);
    const watcher = setup.watcher();
    expect((await watcher.runPass()).depositsSeen).toBe(1);
    // The block is replaced by one without the transfer, which is forgotten.
    chain().reorg(1, { reinclude: false });
    chain().mine(solidityDepth() + 2);
    const pass = await watcher.runPass();
    expect(pass.reorganisations).toBe(1);
    expect(pass.depositsSettled).toBe(0);
    const [deposit] = await depositsOfInvoice(setup.context.db, invoice.id);
    expect(deposit!.status).toBe('orphaned');
    expect(await creditsOfDeposit(setup, deposit!.id)).toBe(0);
    expect(await usdtMainBalance(setup)).toBe(0n);
    expect((await getInvoice(setup.deps, setup.shop.shopId, invoice.id)).status).toBe('confirming');
    const cursor = await findCursor(setup.context.db, 'tron-sandbox');
    expect(cursor!.block_id).toBe(chain().head.id);
  });

  it('a reorg that moves a seen deposit to another block: credited once, from its new block', async () => {
    const invoice = await invoiceFor('4');
    const txId = send(invoice.address, 4_000_000n);
    chain().mine(1);
    const watcher = setup.watcher();
    await watcher.runPass();
    const [before] = await depositsOfInvoice(setup.context.db, invoice.id);
    // Two blocks replace one: the transaction goes back to the pool and lands in a block of the new branch.
    chain().reorg(1, { newBlocks: 0 });
    chain().mine(2);
    const newBlock = chain().findTransaction(txId)!.block;
    expect(newBlock.id).not.toBe(before!.block_id);
    const seenAgain = await watcher.runPass();
    expect(seenAgain.reorganisations).toBe(1);
    const [moved] = await depositsOfInvoice(setup.context.db, invoice.id);
    expect(moved).toMatchObject({
      id: before!.id,
      status: 'confirming',
      block_id: newBlock.id,
      block_number: BigInt(newBlock.number),
    });
    chain().mine(solidityDepth());
    expect((await watcher.runPass()).depositsSettled).toBe(1);
    expect(await creditsOfDeposit(setup, before!.id)).toBe(1);
    expect(await usdtMainBalance(setup)).toBe(4_000_000n);
    expect((await getInvoice(setup.deps, setup.shop.shopId, invoice.id)).status).toBe('paid');
    expect(await depositsOfInvoice(setup.context.db, invoice.id)).toHaveLength(1);
  });

  it('a node reporting the Transfer as emitted by another contract credits nothing: its block contradicts the signed USDT transfer and is refused', async () => {
    const invoice = await invoiceFor('2');
    setup.sandbox.faults.set({ foreignLogContract: USDT_CONTRACT_NILE });
    send(invoice.address, 2_000_000n);
    chain().mine(solidityDepth() + 1);
    await expect(setup.watcher().runPass()).rejects.toThrow(
      /signs a transfer of 2000000 .* but the node's logs show 0 USDT log/,
    );
    expect(await depositsOfInvoice(setup.context.db, invoice.id)).toEqual([]);
    expect(await usdtMainBalance(setup)).toBe(0n);
  });

  it('a reverted transfer and a zero-value transfer credit nothing', async () => {
    const reverted = await invoiceFor('3');
    const zero = await invoiceFor('3');
    chain().setBlacklisted(tronAddress(reverted.address), true);
    const revertedTx = send(reverted.address, 3_000_000n);
    send(zero.address, 0n);
    chain().mine(solidityDepth() + 1);
    expect(chain().findTransaction(revertedTx)!.transaction.receipt.result).toBe('REVERT');
    const pass = await setup.watcher().runPass();
    expect(pass.depositsSeen).toBe(0);
    expect(await depositsOfInvoice(setup.context.db, reverted.id)).toEqual([]);
    expect(await depositsOfInvoice(setup.context.db, zero.id)).toEqual([]);
    expect(await usdtMainBalance(setup)).toBe(0n);
  });

  const crashSteps: WatcherStep[] = ['after-scan', 'inside-record', 'after-record', 'before-settle', 'inside-settle'];
  for (const crashAt of crashSteps) {
    it(`a watcher that dies at "${crashAt}" and a new one after it credit every deposit exactly once`, async () => {
      const invoices = [await invoiceFor('1'), await invoiceFor('2'), await invoiceFor('3')];
      invoices.forEach((invoice, index) => send(invoice.address, BigInt(index + 1) * 1_000_000n));
      chain().mine(1);
      send(invoices[0]!.address, 500_000n); // a second deposit, a block later
      chain().mine(solidityDepth() + 1);
      let crashed = false;
      const dying = setup.watcher({
        onStep: (step) => {
          if (step === crashAt && !crashed) {
            crashed = true;
            throw new Error(`crash at ${step}`);
          }
        },
      });
      await expect(dying.runPass()).rejects.toThrow(`crash at ${crashAt}`);
      // Its successor waits for the dead leader's lease to run out, then finishes the work.
      const successor = setup.watcher();
      expect((await successor.runPass()).leader).toBe(false);
      setup.clock.advance(LEASE_MS);
      const pass = await successor.runPass();
      expect(pass.leader).toBe(true);
      await successor.runPass();
      for (const [index, invoice] of invoices.entries()) {
        const deposits = await depositsOfInvoice(setup.context.db, invoice.id);
        expect(deposits).toHaveLength(index === 0 ? 2 : 1);
        for (const deposit of deposits) {
          expect(deposit.status).toBe('credited');
          expect(await creditsOfDeposit(setup, deposit.id)).toBe(1);
        }
      }
      expect(await usdtMainBalance(setup)).toBe(6_500_000n);
      const funded = (await eventTypes(setup)).filter((type) => type === 'crypto.balance.funded');
      expect(funded).toHaveLength(4);
    });
  }

  it('two watchers: one holds the lease and scans, the other does nothing until it is released', async () => {
    const invoice = await invoiceFor('5');
    send(invoice.address, 5_000_000n);
    chain().mine(solidityDepth() + 1);
    const first = setup.watcher();
    const second = setup.watcher();
    const [a, b] = await Promise.all([first.runPass(), second.runPass()]);
    expect([a.leader, b.leader].filter(Boolean)).toHaveLength(1);
    expect(a.depositsSeen + b.depositsSeen).toBe(1);
    expect(a.depositsSettled + b.depositsSettled).toBe(1);
    const leader = a.leader ? first : second;
    const follower = a.leader ? second : first;
    expect((await follower.runPass()).leader).toBe(false);
    await leader.release();
    expect((await follower.runPass()).leader).toBe(true);
    // The old leader, back after its lease was taken, is refused.
    expect((await leader.runPass()).leader).toBe(false);
    expect(await usdtMainBalance(setup)).toBe(5_000_000n);
  });

  it('a replaced sandbox chain (its saved file lost): watched again from its current blocks, unsettled deposits orphaned', async () => {
    const lost = await invoiceFor('1');
    send(lost.address, 1_000_000n);
    chain().mine(3);
    const watcher = setup.watcher();
    expect((await watcher.runPass()).depositsSeen).toBe(1);
    // A fresh chain behind the same node URL role: another history, its head below our cursor.
    const replacement = await startSimulatedChainServer({ seed: 'a replacement chain', clock: 'manual' });
    const node = createTronNodeClient({
      urls: [replacement.url],
      usdtContract: replacement.chain.parameters.usdtContract,
    });
    try {
      const successor = setup.watcher({ leaderToken: watcher.leaderToken, access: { ...setup.access, node } });
      expect((await successor.runPass()).reorganisations).toBe(1);
      expect((await depositsOfInvoice(setup.context.db, lost.id))[0]!.status).toBe('orphaned');
      const paid = await invoiceFor('2');
      expect(replacement.chain.sendUsdt({ to: tronAddress(paid.address), amount: 2_000_000n }).result).toBe(true);
      replacement.chain.mine(solidityDepth() + 1);
      expect((await successor.runPass()).depositsSettled).toBe(1);
      expect((await getInvoice(setup.deps, setup.shop.shopId, paid.id)).status).toBe('paid');
      expect(await usdtMainBalance(setup)).toBe(2_000_000n);
    } finally {
      await node.close();
      await replacement.close();
    }
  });

  it('a catching-up pass reads the solidified block once, fetches 1, 2, 4 and then 5 blocks a batch, and checks each final height with the node', async () => {
    const invoice = await invoiceFor('3');
    const calls: { method: string; args: unknown[] }[] = [];
    // The real client, every call written down on its way through.
    const node = new Proxy(setup.access.node, {
      get(target, key, receiver) {
        const value: unknown = Reflect.get(target, key, receiver);
        if (typeof value !== 'function') return value;
        return (...args: unknown[]) => {
          calls.push({ method: String(key), args });
          return (value as (...args: unknown[]) => unknown).apply(target, args);
        };
      },
    });
    const watcher = setup.watcher({ access: { ...setup.access, node } });
    await watcher.runPass();
    for (let round = 0; round < 3; round += 1) {
      send(invoice.address, 1_000_000n);
      chain().mine(4);
    }
    chain().mine(solidityDepth() + 1);
    calls.length = 0;
    const pass = await watcher.runPass();
    expect(pass.depositsSettled).toBe(3);
    expect((await getInvoice(setup.deps, setup.shop.shopId, invoice.id)).status).toBe('paid');
    expect(calls.filter((call) => call.method === 'getSolidifiedBlock')).toHaveLength(1);
    // Every height settled up to is checked against the node (header look-ups), even blocks this pass fetched.
    const solidified = chain().head.number - solidityDepth();
    const checked = calls.filter((call) => call.method === 'getBlock').map((call) => call.args[0] as number);
    expect(checked.filter((number) => number < solidified).length).toBeGreaterThan(0);
    const batchSizes = calls.filter((call) => call.method === 'scanBlocks').map((call) => call.args[1]);
    expect(batchSizes).toEqual([1, 2, 4, 5, 5, 5, 5, 4]);
  });

  it('a deposit whose block becomes final while a pass runs is settled by the next pass', async () => {
    const invoice = await invoiceFor('2');
    const watcher = setup.watcher();
    send(invoice.address, 2_000_000n);
    chain().mine(1);
    let mined = false;
    // Once the pass has read the solidified block and scanned, the block becomes final.
    const racing = setup.watcher({
      leaderToken: watcher.leaderToken,
      onStep: (step) => {
        if (step === 'after-scan' && !mined) {
          mined = true;
          chain().mine(solidityDepth() + 1);
        }
      },
    });
    const first = await racing.runPass();
    expect(first.depositsSeen).toBe(1);
    expect(first.depositsSettled).toBe(0);
    const second = await racing.runPass();
    expect(second.depositsSettled).toBe(1);
    expect(await usdtMainBalance(setup)).toBe(2_000_000n);
  });

  it('catches up after downtime: many blocks later, every deposit is seen and credited', async () => {
    const invoice = await invoiceFor('1');
    const watcher = setup.watcher();
    await watcher.runPass();
    for (let round = 0; round < 5; round += 1) {
      send(invoice.address, 200_000n);
      chain().mine(30);
    }
    chain().mine(solidityDepth());
    await watcher.runPass();
    expect((await depositsOfInvoice(setup.context.db, invoice.id)).map((deposit) => deposit.status)).toEqual(
      Array(5).fill('credited'),
    );
    expect((await getInvoice(setup.deps, setup.shop.shopId, invoice.id)).status).toBe('paid');
  });
});

// The simulated chain's side of sandboxes kept apart (docs/crypto.md): outcomes
// armed for an owner fire only on that owner's declared transactions (and a
// reorg re-arms them), a drain spares what pooled transactions may burn,
// blocks mined before a wall clock never pass it, and the control surface lists
// what a reorg would orphan and refuses a reorg whose head moved; addresses
// made for an owner are blacklisted and funded by that owner's calls only.
import { afterEach, describe, expect, it } from 'vitest';
import { startSimulatedChainServer, type SimulatedChainServer } from '../../../src/crypto/simchain/chain-server.ts';
import { createSimulatorControl, SimulatorRefusal } from '../../../src/crypto/simchain/control-client.ts';
import { SimulatedChain } from '../../../src/crypto/simchain/simulated-chain.ts';
import { testKey } from './fixtures/transfers.ts';

const recipient = testKey('shared recipient').address;
const BLOCK_INTERVAL_MS = 3_000;

function chainWithBlocks(): SimulatedChain {
  const chain = new SimulatedChain({ seed: 'shared chain owners' });
  chain.mine(20);
  return chain;
}

describe('outcomes armed for an owner', () => {
  it('fire on the owner’s next transfer only; another owner’s and an undeclared one to the address land', () => {
    const chain = chainWithBlocks();
    const [payerA, payerB] = chain.payers;
    chain.armNextTransfer(recipient, 'revert', 'shop_a');
    const ofB = chain.sendUsdt({ from: payerB!.address, to: recipient, amount: 1_000_000n, owner: 'shop_b' });
    const undeclared = chain.sendUsdt({ from: payerB!.address, to: recipient, amount: 2_000_000n });
    const ofA = chain.sendUsdt({ from: payerA!.address, to: recipient, amount: 4_000_000n, owner: 'shop_a' });
    chain.mine(1);
    const result = (txId: string) => chain.findTransaction(txId)!.transaction.receipt.result;
    expect(result(ofB.transaction.txId)).toBe('SUCCESS');
    expect(result(undeclared.transaction.txId)).toBe('SUCCESS');
    expect(result(ofA.transaction.txId)).toBe('REVERT');
    expect(chain.state.usdtBalance(recipient)).toBe(3_000_000n);
    expect(chain.state.ownedTransferOutcomes.size).toBe(0);

    // A reorg of that block re-arms it: the re-included transfer of A fails again.
    chain.reorg(1);
    expect(result(ofA.transaction.txId)).toBe('REVERT');
    expect(result(ofB.transaction.txId)).toBe('SUCCESS');
  });

  it('never_included of one owner loses only that owner’s broadcast', () => {
    const chain = chainWithBlocks();
    chain.armNextTransfer(recipient, 'never_included', 'shop_a');
    const ofB = chain.sendUsdt({ to: recipient, amount: 1_000_000n, owner: 'shop_b' });
    const ofA = chain.sendUsdt({ to: recipient, amount: 2_000_000n, owner: 'shop_a' });
    expect([ofA.result, ofB.result]).toEqual([true, true]);
    chain.mine(1);
    expect(chain.findTransaction(ofB.transaction.txId)).toBeDefined();
    expect(chain.findTransaction(ofA.transaction.txId)).toBeUndefined();
  });
});

describe('draining an account with transactions in the pool', () => {
  it('leaves what they may burn, and they land', () => {
    const chain = chainWithBlocks();
    const payer = chain.payers[0]!;
    const sent = chain.sendUsdt({ from: payer.address, to: recipient, amount: 1_000_000n });
    const before = chain.state.account(payer.address)!.balanceSun;
    const drained = chain.drainTrx(payer.address);
    const left = chain.state.account(payer.address)!.balanceSun;
    expect(drained).toBe(before - left);
    expect(left).toBeGreaterThanOrEqual(100_000_000n); // the default fee_limit, 100 TRX
    expect(left).toBeLessThan(before);
    chain.mine(1);
    expect(chain.findTransaction(sent.transaction.txId)!.transaction.receipt.result).toBe('SUCCESS');
    // With the pool empty, a drain takes everything.
    chain.drainTrx(payer.address);
    expect(chain.state.account(payer.address)!.balanceSun).toBe(0n);
  });
});

describe('blocks mined before a wall clock', () => {
  it('are a slot apart when there is room, share the time left when there is little, and never pass it', () => {
    const chain = chainWithBlocks();
    const start = chain.head.timestampMs;
    chain.mine(3, { notAfterMs: start + 60_000 });
    expect(chain.head.timestampMs).toBe(start + 3 * BLOCK_INTERVAL_MS);

    const wall = chain.head.timestampMs + 500;
    const before = chain.head.timestampMs;
    const mined = chain.mine(1_000, { notAfterMs: wall });
    const times = mined.map((block) => block.timestampMs);
    expect(times.every((time, index) => time >= (index === 0 ? before : times[index - 1]!))).toBe(true);
    expect(Math.max(...times)).toBe(wall);
    expect(chain.nowMs).toBe(wall);

    // No time left: the blocks keep the head's time; the clock stays put.
    chain.mine(10, { notAfterMs: wall - 1_000 });
    expect(chain.head.timestampMs).toBe(wall);
    // And the wall clock's own next slot still makes a block.
    expect(chain.advance(BLOCK_INTERVAL_MS)).toHaveLength(1);
  });

  it('reorg replacement blocks too', () => {
    const chain = chainWithBlocks();
    const wall = chain.head.timestampMs + 10;
    chain.reorg(5, { notAfterMs: wall });
    expect(chain.head.timestampMs).toBeLessThanOrEqual(wall);
  });
});

describe('the control surface of a shared chain', () => {
  let server: SimulatedChainServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it('lists what a reorg would orphan with its owners, refuses a reorg whose head moved, takes declarations', async () => {
    server = await startSimulatedChainServer({ seed: 'shared chain control' });
    const control = createSimulatorControl(server.url);
    await control.mine(20);
    const sent = await control.sendUsdt({ to: recipient, amount: 1_000_000n, owner: 'shop_a' });
    expect(sent.result).toBe(true);
    await control.mine(1);
    const newest = await control.newestTransactions(2);
    expect(newest.headId).toBe(server.chain.head.id);
    expect(newest.transactions).toEqual([
      {
        txId: sent.result ? sent.txId : '',
        from: server.chain.payers[0]!.address,
        to: recipient,
        owner: 'shop_a',
      },
    ]);
    await control.mine(1);
    await expect(control.reorg(2, { headId: newest.headId })).rejects.toThrow(SimulatorRefusal);
    expect(server.chain.head.number).toBe(22);

    const txId = 'ab'.repeat(32);
    await control.declareOwners([{ txId, owner: 'shop_b' }]);
    expect(server.chain.state.transactionOwners.get(txId)).toBe('shop_b');
    await expect(control.declareOwners([{ txId, owner: 'not allowed!' }])).rejects.toThrow(/owner/);
    await expect(control.mine(1, 1.5)).rejects.toThrow(/not_after_ms/);
  });
});

describe('addresses made for an owner', () => {
  let server: SimulatedChainServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it('only calls naming that owner blacklist or fund them; the operator’s calls (no owner) still may; a saved chain keeps the owners', async () => {
    server = await startSimulatedChainServer({ seed: 'shared chain owners', chain: chainWithBlocks() });
    const control = createSimulatorControl(server.url);
    const ofA = await control.makeOwnedAddress('shop_a');
    const ofB = await control.makeOwnedAddress('shop_b');
    expect(ofA).not.toBe(ofB);
    await control.setBlacklisted(ofA, true, 'shop_a');
    await expect(control.setBlacklisted(ofB, true, 'shop_a')).rejects.toThrow(SimulatorRefusal);
    await expect(control.setBlacklisted(recipient, true, 'shop_a')).rejects.toThrow(/not one made for shop_a/);
    await expect(control.faucet(ofB, { usdt: 1n }, 'shop_a')).rejects.toThrow(SimulatorRefusal);
    expect((await control.faucet(ofA, { usdt: 5n }, 'shop_a')).usdt).toBe(5n);
    await control.setBlacklisted(recipient, true);
    expect([...server.chain.state.usdtBlacklist].sort()).toEqual([ofA, recipient].sort());
    expect(server.chain.state.usdtBalance(ofB)).toBe(0n);

    const restored = new SimulatedChain({
      seed: 'shared chain owners',
      restore: structuredClone(server.chain.snapshot()),
    });
    expect([restored.ownerOfAddress(ofA), restored.ownerOfAddress(ofB), restored.ownerOfAddress(recipient)]).toEqual([
      'shop_a',
      'shop_b',
      undefined,
    ]);
  });
});

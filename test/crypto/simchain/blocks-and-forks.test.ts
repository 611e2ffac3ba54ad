// Blocks on the chain's own clock, ids and linkage, determinism by seed,
// solidification at head − 18, and reorgs of unsolidified blocks (docs/tron.md §1.6, §3).
import { describe, expect, it } from 'vitest';
import { SimulatedChain } from '../../../src/crypto/simchain/simulated-chain.ts';
import { testKey } from './fixtures/transfers.ts';

const recipient = testKey('recipient');

describe('blocks', () => {
  it('produces a block for every 3 s of its clock, and none before', () => {
    const chain = new SimulatedChain({ seed: 'clock' });
    expect(chain.advance(2_999)).toHaveLength(0);
    expect(chain.advance(1)).toHaveLength(1);
    expect(chain.advance(30_000)).toHaveLength(10);
    expect(chain.head.number).toBe(11);
    expect(chain.head.timestampMs).toBe(chain.parameters.genesisTimestampMs + 33_000);
  });

  it('missed slots: the next block comes that many slots later, one block higher, and the clock is at it', () => {
    const chain = new SimulatedChain({ seed: 'missed' });
    chain.produceBlocks(2);
    const block = chain.missSlots(599);
    expect(block.number).toBe(3);
    expect(block.timestampMs).toBe(chain.parameters.genesisTimestampMs + 602 * chain.parameters.blockIntervalMs);
    expect(chain.nowMs).toBe(block.timestampMs);
    expect(chain.produceBlocks(1)[0]!.timestampMs).toBe(block.timestampMs + chain.parameters.blockIntervalMs);
  });

  it('block ids start with the number (8 bytes, big-endian) and name their parent', () => {
    const chain = new SimulatedChain({ seed: 'ids' });
    chain.produceBlocks(300);
    for (let number = 1; number <= 300; number += 1) {
      const block = chain.block(number)!;
      expect(block.id).toMatch(/^[0-9a-f]{64}$/);
      expect(block.id.slice(0, 16)).toBe(number.toString(16).padStart(16, '0'));
      expect(block.parentId).toBe(chain.block(number - 1)!.id);
    }
    expect(chain.block(301)).toBeUndefined();
  });

  it('the same seed and calls give the same chain; another seed another one', () => {
    const run = (seed: string) => {
      const chain = new SimulatedChain({ seed });
      chain.produceBlocks(2);
      chain.sendUsdt({ to: recipient.address, amount: 5n });
      chain.produceBlocks(3);
      return { ids: [1, 2, 3, 4, 5].map((number) => chain.block(number)!.id), payer: chain.payers[0]!.address };
    };
    expect(run('alpha')).toEqual(run('alpha'));
    expect(run('alpha').ids[0]).not.toBe(run('beta').ids[0]);
    expect(run('alpha').payer).not.toBe(run('beta').payer);
  });
});

describe('solidification', () => {
  it('the solidified block is head − 18 (and genesis before that)', () => {
    const chain = new SimulatedChain({ seed: 'solid' });
    chain.produceBlocks(18);
    expect(chain.solidNumber).toBe(0);
    chain.produceBlocks(1);
    expect(chain.solidNumber).toBe(1);
    chain.produceBlocks(100);
    expect(chain.solidNumber).toBe(chain.head.number - 18);
  });
});

describe('reorgs', () => {
  function chainWithTransferAt(depthBelowHead: number) {
    const chain = new SimulatedChain({ seed: 'fork' });
    chain.produceBlocks(30);
    const sent = chain.sendUsdt({ to: recipient.address, amount: 9_000_000n });
    expect(sent.result).toBe(true);
    chain.produceBlocks(1 + depthBelowHead);
    const block = chain.findTransaction(sent.transaction.txId)!.block;
    return { chain, txId: sent.transaction.txId, hex: Buffer.from(sent.transaction.bytes).toString('hex'), block };
  }

  it('drop: the orphaned transfer disappears, balances are as before, and the same bytes can be broadcast again', () => {
    const { chain, txId, hex, block } = chainWithTransferAt(2);
    const payer = chain.payers[0]!.address;
    const headBefore = chain.head;
    const { orphaned, replacement } = chain.reorg(3, { reinclude: false });
    expect(orphaned.map((orphan) => orphan.id)).toContain(block.id);
    expect(replacement).toHaveLength(3);
    expect(chain.head.number).toBe(headBefore.number);
    expect(chain.head.id).not.toBe(headBefore.id);
    expect(chain.block(block.number)!.parentId).toBe(chain.block(block.number - 1)!.id);
    expect(chain.findTransaction(txId)).toBeUndefined();
    expect(chain.state.usdtBalance(recipient.address)).toBe(0n);
    expect(chain.state.usdtBalance(payer)).toBe(chain.parameters.payerUsdt);
    expect(chain.state.account(payer)!.balanceSun).toBe(chain.parameters.payerTrxSun);
    expect(chain.broadcastHex(hex)).toEqual({ result: true, txId });
  });

  it('re-include: the transfer lands again in a block of the new branch, once', () => {
    const { chain, txId, block } = chainWithTransferAt(2);
    chain.reorg(3, { reinclude: true });
    const found = chain.findTransaction(txId)!;
    expect(found.block.id).not.toBe(block.id);
    expect(found.transaction.receipt.result).toBe('SUCCESS');
    expect(chain.state.usdtBalance(recipient.address)).toBe(9_000_000n);
    const inBlocks = Array.from({ length: chain.head.number + 1 }, (_, number) => chain.block(number)!)
      .flatMap((each) => each.transactions)
      .filter((included) => included.transaction.txId === txId);
    expect(inBlocks).toHaveLength(1);
  });

  it('re-include drops a transaction whose TaPoS names an orphaned block', () => {
    const chain = new SimulatedChain({ seed: 'fork tapos' });
    chain.produceBlocks(30);
    chain.produceBlocks(1);
    const sent = chain.sendUsdt({ to: recipient.address, amount: 1n, referenceBlock: 'head' });
    chain.produceBlocks(1);
    chain.reorg(2, { reinclude: true });
    expect(chain.findTransaction(sent.transaction.txId)).toBeUndefined();
  });

  it('reorgs up to 18 blocks (everything above the solidified block) and refuses 19', () => {
    const chain = new SimulatedChain({ seed: 'deep' });
    chain.produceBlocks(40);
    const solid = chain.solidBlock;
    expect(() => chain.reorg(19)).toThrow(RangeError);
    chain.reorg(18);
    expect(chain.block(solid.number)!.id).toBe(solid.id);
    expect(chain.block(solid.number + 1)!.parentId).toBe(solid.id);
  });

  it('a reorg keeps what the faucet did between blocks', () => {
    const { chain } = chainWithTransferAt(1);
    chain.faucet(recipient.address, { usdt: 5n, trxSun: 7n });
    chain.reorg(2, { reinclude: false });
    expect(chain.state.usdtBalance(recipient.address)).toBe(5n);
    expect(chain.state.account(recipient.address)!.balanceSun).toBe(7n);
  });

  it('a shorter new branch moves the head back; production continues from it', () => {
    const chain = new SimulatedChain({ seed: 'short' });
    chain.produceBlocks(30);
    chain.reorg(5, { newBlocks: 2 });
    expect(chain.head.number).toBe(27);
    chain.produceBlocks(1);
    expect(chain.head.parentId).toBe(chain.block(27)!.id);
  });
});

// Pruned history: blocks far below the solidified one lose their bodies
// (retainedBlockBodies) and keep only their ids for TaPoS (retainedBlockHeaders),
// so a long-running sandbox chain's memory stays bounded. A pruning chain and a
// non-pruning one with the same seed and the same calls answer every node
// request about recent blocks identically; about pruned blocks the pruning one
// answers `{}`, as a node with pruned history does.
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { createNodeApi } from '../../../src/crypto/simchain/node-api.ts';
import { NodeFaults } from '../../../src/crypto/simchain/node-faults.ts';
import { PrunedBlockIds } from '../../../src/crypto/simchain/pruned-history.ts';
import { SimulatedChain } from '../../../src/crypto/simchain/simulated-chain.ts';
import { referenceBlockFields } from '../../../src/crypto/tron/transaction.ts';
import { signedTransfer, testKey } from './fixtures/transfers.ts';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
const heapMb = () => {
  gc();
  gc();
  return process.memoryUsage().heapUsed / 2 ** 20;
};

const recipients = Array.from({ length: 8 }, (_, index) => testKey(`pruning recipient ${index}`).address);

/** Blocks with a transfer every `every` blocks, the same calls on each chain given. */
function produce(chains: readonly SimulatedChain[], blocks: number, every: number, sent: string[]): void {
  for (let index = 0; index < blocks; index += every) {
    for (const chain of chains) {
      const result = chain.sendUsdt({
        to: recipients[(index / every) % recipients.length]!,
        amount: 1_000_000n + BigInt(index),
      });
      if (!result.result) throw new Error(`refused: ${result.code}`);
      if (chain === chains[0]) sent.push(result.txId);
    }
    for (const chain of chains) chain.produceBlocks(every);
  }
}

describe('pruned history', () => {
  it(
    'over 50,000 blocks the chain holds at most the retained bodies and ids; its heap stops growing',
    { timeout: 120_000 },
    () => {
      const chain = new SimulatedChain({
        seed: 'pruning memory',
        parameters: { retainedBlockBodies: 1_000, retainedBlockHeaders: 2_000, taposWindowBlocks: 2_000 },
      });
      const sent: string[] = [];
      const bound = 1_000 + chain.parameters.solidityDepth + 256 + 1;
      produce([chain], 10_000, 25, sent);
      const heapAt10k = heapMb();
      for (let round = 0; round < 4; round += 1) {
        produce([chain], 10_000, 25, sent);
        const retained = chain.retained;
        expect(retained.blocksWithBodies).toBeLessThanOrEqual(bound);
        expect(retained.prunedIds).toBeLessThanOrEqual(2_000);
        // Transactions indexed by id: only those of blocks that still have bodies.
        expect(retained.transactionsIndexed).toBeLessThanOrEqual(Math.ceil(bound / 25) + 1);
        expect(retained.recent).toBeLessThanOrEqual(60);
      }
      const heapAt50k = heapMb();
      expect(chain.head.number).toBe(50_000);
      console.info(
        `pruned chain heap: ${heapAt10k.toFixed(1)} MB at 10,000 blocks, ${heapAt50k.toFixed(1)} MB at 50,000 (2,000 transfers)`,
      );
      expect(heapAt50k - heapAt10k).toBeLessThan(4);
      // Its saved form is bounded as well.
      const snapshot = chain.snapshot();
      expect(snapshot.blocks.length).toBeLessThanOrEqual(bound);
      expect(snapshot.prunedBlockIds!.ids.length).toBeLessThanOrEqual(2_000);
    },
  );

  it('recent blocks answer exactly as on a chain that prunes nothing; pruned ones answer {} (their results []); TaPoS still sees pruned blocks', () => {
    const pruning = new SimulatedChain({ seed: 'pruning answers', parameters: { retainedBlockBodies: 300 } });
    const keeping = new SimulatedChain({ seed: 'pruning answers', parameters: { retainedBlockBodies: 100_000 } });
    const sent: string[] = [];
    const earlyIds = new Map<number, string>();
    produce([pruning, keeping], 200, 10, sent);
    for (let number = 1; number <= 200; number += 1) earlyIds.set(number, pruning.block(number)!.id);
    produce([pruning, keeping], 3_000, 10, sent);
    expect(pruning.head.id).toBe(keeping.head.id);
    expect(keeping.retained.blocksWithBodies).toBe(3_201);
    expect(pruning.retained.blocksWithBodies).toBeLessThan(600);

    const answerPruning = createNodeApi(pruning, new NodeFaults());
    const answerKeeping = createNodeApi(keeping, new NodeFaults());
    const same = (path: string, body: Record<string, unknown>) => {
      const expected = answerKeeping(path, body);
      expect(answerPruning(path, body), `${path} ${JSON.stringify(body)}`).toEqual(expected);
      return expected;
    };
    for (const path of ['/wallet/getnowblock', '/walletsolidity/getnowblock']) same(path, {});
    const oldestKept = pruning.solidNumber - 300;
    for (let number = oldestKept; number <= pruning.head.number; number += 1) {
      for (const path of [
        '/wallet/getblockbynum',
        '/walletsolidity/getblockbynum',
        '/wallet/gettransactioninfobyblocknum',
        '/walletsolidity/gettransactioninfobyblocknum',
      ]) {
        same(path, { num: number });
      }
      same('/wallet/getblock', { id_or_num: String(number), detail: true });
    }
    const recentTx = sent.at(-35)!;
    const info = same('/wallet/gettransactioninfobyid', { value: recentTx });
    expect((info.json as { id: string }).id).toBe(recentTx);
    same('/walletsolidity/gettransactionbyid', { value: recentTx });

    // Pruned: the node has nothing to say about them (the non-pruning one still does): `{}`, and `[]`
    // for a block's results (Wallet.getTransactionInfoByBlockNum catches ItemNotFoundException).
    const oldTx = sent[3]!;
    const oldBlock = keeping.findTransaction(oldTx)!.block.number;
    expect(pruning.isPruned(oldBlock)).toBe(true);
    for (const [path, body] of [
      ['/wallet/gettransactioninfobyid', { value: oldTx }],
      ['/wallet/gettransactionbyid', { value: oldTx }],
      ['/wallet/getblockbynum', { num: oldBlock }],
      ['/wallet/getblock', { id_or_num: String(oldBlock) }],
    ] as const) {
      expect(answerPruning(path, body).json, path).toEqual({});
      expect(answerKeeping(path, body).json, path).not.toEqual({});
    }
    expect(answerPruning('/wallet/gettransactioninfobyblocknum', { num: oldBlock }).json).toEqual([]);
    expect(answerKeeping('/wallet/gettransactioninfobyblocknum', { num: oldBlock }).json).not.toEqual([]);
    // Balances are state, not history: unchanged.
    for (const recipient of recipients) same('/wallet/getaccount', { address: recipient });

    // A transaction whose TaPoS names a pruned block (still within the 65,536-block window) is accepted.
    const payer = pruning.payers[1]!;
    const reference = referenceBlockFields(150, earlyIds.get(150)!);
    const transfer = signedTransfer(pruning, payer, { ...reference });
    expect(pruning.broadcastHex(transfer.hex)).toEqual({ result: true, txId: transfer.txId });
    // One naming a wrong hash for that pruned block is refused as before.
    const realId = earlyIds.get(150)!;
    const wrongId = `${realId.slice(0, 20)}${realId.at(20) === '0' ? '1' : '0'}${realId.slice(21)}`; // TaPoS compares bytes 8..16
    const wrong = signedTransfer(pruning, payer, { ...referenceBlockFields(150, wrongId), amount: 2n });
    expect(pruning.broadcastHex(wrong.hex)).toMatchObject({ result: false, code: 'TAPOS_ERROR' });
  });

  it('the id ring grows as blocks are pruned, then keeps the newest ids up to its capacity', () => {
    const ring = new PrunedBlockIds(3_000);
    const id = (number: number) => number.toString(16).padStart(16, '0') + 'ab'.repeat(24);
    for (let number = 7; number < 5_007; number += 1) ring.push(number, id(number));
    expect(ring.size).toBe(3_000);
    expect(ring.get(2_006)).toBeUndefined();
    for (const number of [2_007, 3_500, 5_006]) expect(ring.get(number)).toBe(id(number));
    expect(ring.get(5_007)).toBeUndefined();
    expect(ring.entries().first).toBe(2_007);
    expect(() => ring.push(5_010, id(5_010))).toThrow(/out of order/);
  });

  it('a saved pruned chain loads with its pruned ids and continues identically', () => {
    const chain = new SimulatedChain({ seed: 'pruning persistence', parameters: { retainedBlockBodies: 50 } });
    produce([chain], 1_000, 20, []);
    const restored = new SimulatedChain({
      seed: 'pruning persistence',
      parameters: { retainedBlockBodies: 50 },
      restore: structuredClone(chain.snapshot()),
    });
    expect(restored.retained).toEqual(chain.retained);
    expect(restored.isPruned(100)).toBe(true);
    produce([chain, restored], 400, 20, []);
    expect(restored.head.id).toBe(chain.head.id);
    expect(restored.retained).toEqual(chain.retained);
  });
});

// A sandbox chain saved to a JSON file and loaded again is the same chain:
// same blocks, balances, pool and duplicate memory, and it goes on producing
// exactly the blocks it would have produced without the restart.
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startSimulatedChainServer } from '../../../src/crypto/simchain/chain-server.ts';
import { loadChain, saveChain } from '../../../src/crypto/simchain/persistence.ts';
import { SimulatedChain } from '../../../src/crypto/simchain/simulated-chain.ts';
import { testKey } from './fixtures/transfers.ts';

const folders: string[] = [];
afterEach(async () => {
  for (const folder of folders.splice(0)) await rm(folder, { recursive: true, force: true });
});

async function tempFile() {
  const folder = await mkdtemp(join(tmpdir(), 'simchain-'));
  folders.push(folder);
  return join(folder, 'chain.json');
}

const recipient = testKey('recipient');

function scripted(chain: SimulatedChain) {
  chain.produceBlocks(5);
  chain.sendUsdt({ to: recipient.address, amount: 7_000_000n });
  chain.produceBlocks(2);
  chain.sendUsdt({ from: chain.payers[1]!.address, to: recipient.address, amount: 1n }); // left in the pool
}

describe('persistence', () => {
  it('a loaded chain equals the saved one and continues identically', async () => {
    const file = await tempFile();
    const original = new SimulatedChain({ seed: 'saved' });
    scripted(original);
    await saveChain(original, file);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect(await readFile(file, 'utf8')).toContain(`"${original.parameters.payerTrxSun - 13_028_500n}n"`);

    const loaded = (await loadChain(file, { seed: 'saved' }))!;
    expect(loaded.head.id).toBe(original.head.id);
    expect(loaded.state.usdtBalance(recipient.address)).toBe(7_000_000n);
    expect(loaded.pendingTransactions.map((pending) => pending.transaction.txId)).toEqual(
      original.pendingTransactions.map((pending) => pending.transaction.txId),
    );
    expect(loaded.pendingTransactions).toHaveLength(1);

    original.produceBlocks(3);
    loaded.produceBlocks(3);
    expect(loaded.head.id).toBe(original.head.id);
    expect(loaded.state.usdtBalance(recipient.address)).toBe(7_000_001n);
    original.reorg(2);
    loaded.reorg(2);
    expect(loaded.head.id).toBe(original.head.id);
  });

  it('no file yet: nothing to load; another seed is refused', async () => {
    const file = await tempFile();
    expect(await loadChain(file, { seed: 'x' })).toBeUndefined();
    await saveChain(new SimulatedChain({ seed: 'x' }), file);
    await expect(loadChain(file, { seed: 'y' })).rejects.toThrow(/seed/);
  });

  it('the server saves at close and starts from the file next time', async () => {
    const file = await tempFile();
    const first = await startSimulatedChainServer({ seed: 'server', persistFile: file });
    scripted(first.chain);
    const headId = first.chain.head.id;
    await first.close();
    const second = await startSimulatedChainServer({ seed: 'server', persistFile: file });
    expect(second.chain.head.id).toBe(headId);
    await second.close();
  });
});

describe('wall clock', () => {
  it('a wall-clock server starts its genesis now and produces blocks as real time passes', async () => {
    const beforeStartMs = Date.now();
    const server = await startSimulatedChainServer({
      seed: 'wall',
      clock: 'wall',
      parameters: { blockIntervalMs: 100 },
    });
    try {
      // Bracketed by the wall clock read before the start and after the head, however long the start took.
      const headMs = server.chain.head.timestampMs;
      const afterHeadMs = Date.now();
      expect(headMs).toBeGreaterThanOrEqual(beforeStartMs - 1_000);
      expect(headMs).toBeLessThanOrEqual(afterHeadMs + 1_000);
      // Blocks come as real time passes: wait for the second one (the test timeout is the only bound).
      await expect.poll(() => server.chain.head.number, { timeout: 240_000, interval: 20 }).toBeGreaterThanOrEqual(2);
    } finally {
      await server.close();
    }
  });
});

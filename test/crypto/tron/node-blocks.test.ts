// Blocks through the production client against a node on loopback: headers as
// the node writes them, `{}` for a block not there yet, and refusal of answers
// that break the chain's rules (ids that do not start with the number, a
// parent that is not the previous block, hex that is not hex).
import { readFileSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  createTronNodeClient,
  TronNodeAnswerError,
  TronNodeUnavailableError,
  type TronNodeClient,
} from '../../../src/crypto/tron/node-client.ts';
import { blockId, blockJson, USDT } from './fixtures/chain-json.ts';
import { startFakeTronNode, type FakeTronNode } from './fixtures/fake-tron-node.ts';
import { serveBlocks } from './fixtures/serve-blocks.ts';

const recordedBlock = JSON.parse(
  readFileSync(new URL('./fixtures/nile-block-66987565.json', import.meta.url), 'utf8'),
) as {
  blockID: string;
  block_header: { raw_data: { number: number; parentHash: string; timestamp: number } };
};

let node: FakeTronNode;
let client: TronNodeClient;

beforeEach(async () => {
  node = await startFakeTronNode();
  client = createTronNodeClient({ urls: [node.url], usdtContract: USDT, timeoutMs: 1_000, maxAttempts: 1 });
});

afterEach(async () => {
  await client.close();
  await node.close();
});

async function refusal(promise: Promise<unknown>): Promise<TronNodeUnavailableError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(TronNodeUnavailableError);
  return error as TronNodeUnavailableError;
}

describe('block headers', () => {
  it('reads the head block from /wallet/getnowblock in the documented shape', async () => {
    node.on('/wallet/getnowblock', { json: recordedBlock });
    const head = await client.getHeadBlock();
    const raw = recordedBlock.block_header.raw_data;
    expect(head).toEqual({
      number: raw.number,
      id: recordedBlock.blockID,
      parentId: raw.parentHash,
      timestamp: raw.timestamp,
    });
  });

  it('reads the solidified block from /walletsolidity/getnowblock, not the head', async () => {
    node.on('/wallet/getnowblock', { json: blockJson({ number: 120 }) });
    node.on('/walletsolidity/getnowblock', { json: blockJson({ number: 101 }) });
    expect((await client.getSolidifiedBlock()).number).toBe(101);
    expect(node.requestsTo('/walletsolidity/getnowblock')).toHaveLength(1);
  });

  it('asks getblock for the header alone (detail false) and answers null for {} (not produced yet)', async () => {
    serveBlocks(node, [{ block: blockJson({ number: 7 }) }]);
    expect(await client.getBlock(8)).toBeNull();
    const block = await client.getBlock(7);
    expect(block).toEqual({ number: 7, id: blockId(7), parentId: blockId(6), timestamp: expect.any(Number) });
    expect(node.requestsTo('/wallet/getblock').map((request) => request.body)).toEqual([
      { id_or_num: '8', detail: false },
      { id_or_num: '7', detail: false },
    ]);
    expect(node.requestsTo('/wallet/getblockbynum')).toHaveLength(0);
  });

  it('reads the genesis block, whose number the node leaves out (zero)', async () => {
    serveBlocks(node, [{ block: blockJson({ number: 0 }) }]);
    expect((await client.getBlock(0))?.number).toBe(0);
  });

  it('refuses a block id that does not start with the block number', async () => {
    node.on('/wallet/getblock', { json: blockJson({ number: 5, id: blockId(6) }) });
    const error = await refusal(client.getBlock(5));
    expect(error.failures[0]?.kind).toBe('invalid_answer');
    expect(error.failures[0]?.detail).toMatch(/does not start with its number/);
  });

  it('refuses an answer for another block than the one asked for', async () => {
    node.on('/wallet/getblock', { json: blockJson({ number: 6 }) });
    expect((await refusal(client.getBlock(5))).failures[0]?.detail).toMatch(/asked for block 5, got block 6/);
  });

  it('refuses a parent hash that is not the previous block', async () => {
    node.on('/wallet/getblock', { json: blockJson({ number: 5, parentId: blockId(3) }) });
    expect((await refusal(client.getBlock(5))).failures[0]?.detail).toMatch(/not block 4/);
  });

  it.each([
    ['a block id with a non-hex character', { blockID: `${blockId(5).slice(0, 63)}g` }],
    ['a short block id', { blockID: blockId(5).slice(0, 62) }],
    ['a fractional block number', { block_header: { raw_data: { number: 5.5, parentHash: blockId(4) } } }],
    ['a negative block number', { block_header: { raw_data: { number: -5, parentHash: blockId(4) } } }],
    ['a block number written as a string', { block_header: { raw_data: { number: '5', parentHash: blockId(4) } } }],
  ])('refuses %s', async (_name, patch) => {
    node.on('/wallet/getblock', { json: { ...blockJson({ number: 5 }), ...patch } });
    expect((await refusal(client.getBlock(5))).failures[0]?.kind).toBe('invalid_answer');
  });

  it('does not take {} from getnowblock (a node syncing from scratch) for a head block', async () => {
    node.on('/wallet/getnowblock', { json: {} });
    expect((await refusal(client.getHeadBlock())).failures[0]?.detail).toMatch(/no block at all/);
  });

  it('refuses an answer that is not JSON', async () => {
    node.on('/wallet/getnowblock', { text: '<html>gateway</html>' });
    expect((await refusal(client.getHeadBlock())).failures[0]?.detail).toMatch(/not JSON/);
  });
});

describe('scanning blocks', () => {
  it('returns consecutive linked blocks and stops before the first block the node does not have', async () => {
    serveBlocks(
      node,
      [10, 11, 12, 13].map((number) => ({ block: blockJson({ number }) })),
    );
    const scanned = await client.scanBlocks(11, 10);
    expect(scanned.map((block) => block.header.number)).toEqual([11, 12, 13]);
    expect(scanned.map((block) => block.header.id)).toEqual([11, 12, 13].map((number) => blockId(number)));
    expect(scanned.every((block) => block.transfers.length === 0)).toBe(true);
  });

  it('does not ask for the transaction results of an empty block', async () => {
    serveBlocks(node, [{ block: blockJson({ number: 20 }) }]);
    await client.scanBlocks(20, 1);
    expect(node.requestsTo('/wallet/gettransactioninfobyblocknum')).toHaveLength(0);
  });

  it('refuses blocks that do not link: block N+1 must name block N as its parent', async () => {
    // Block 32 comes from another fork: well-formed on its own, but its parent is not the block 31 served.
    serveBlocks(node, [
      { block: blockJson({ number: 30 }) },
      { block: blockJson({ number: 31 }) },
      { block: blockJson({ number: 32, fork: 'other', parentId: blockId(31, 'other') }) },
    ]);
    const error = await client.scanBlocks(30, 3).then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(TronNodeAnswerError);
    expect((error as Error).message).toMatch(/block 32 .* does not link to block 31/);
  });

  it('bounds the blocks of one scan', async () => {
    await expect(client.scanBlocks(0, 101)).rejects.toThrow(/count must be 1\.\.100/);
    await expect(client.scanBlocks(-1, 1)).rejects.toThrow(/whole number/);
  });
});

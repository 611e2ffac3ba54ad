// Injected node faults, seen through the production node client: a timeout
// (the broadcast still lands), HTTP 503 (fail-over to a second node of the
// same chain), SERVER_BUSY, "accepted but never included", a stuck head, a
// node with no block, and a node attributing Transfer logs to another contract.
import { afterEach, describe, expect, it } from 'vitest';
import { startSimulatedChainServer, type SimulatedChainServer } from '../../../src/crypto/simchain/chain-server.ts';
import { SimulatedChain } from '../../../src/crypto/simchain/simulated-chain.ts';
import {
  createTronNodeClient,
  TronNodeUnavailableError,
  type TronNodeClient,
} from '../../../src/crypto/tron/node-client.ts';
import { USDT_CONTRACT_NILE } from '../../../src/crypto/tron/trc20-usdt.ts';
import { signedTransfer, testKey } from './fixtures/transfers.ts';

const CLIENT_TIMEOUT_MS = 300;
const servers: SimulatedChainServer[] = [];
const clients: TronNodeClient[] = [];
afterEach(async () => {
  for (const client of clients.splice(0)) await client.close();
  for (const server of servers.splice(0)) await server.close();
});

/** `count` nodes serving one chain, each with its own faults, and a client over them in order. */
async function nodes(count = 1) {
  const chain = new SimulatedChain({ seed: 'faults' });
  chain.produceBlocks(3);
  for (let index = 0; index < count; index += 1)
    servers.push(await startSimulatedChainServer({ seed: 'faults', chain }));
  const client = createTronNodeClient({
    urls: servers.map((server) => server.url),
    usdtContract: chain.parameters.usdtContract,
    timeoutMs: CLIENT_TIMEOUT_MS,
    retryDelayMs: 0,
    cooldownMs: 60_000,
    maxAttempts: 2,
  });
  clients.push(client);
  return { chain, client, first: servers[0]!, second: servers[1] };
}

const deposit = testKey('deposit');

function payerTransfer(chain: SimulatedChain, amount = 1_000_000n) {
  const built = signedTransfer(chain, chain.payers[0]!, { to: deposit.address, amount });
  return { txId: built.txId, hex: built.hex };
}

describe('timeouts', () => {
  it('a broadcast answered after the client gave up is unknown to the client, and still lands on chain', async () => {
    const { chain, client, first } = await nodes();
    first.faults.set({ delayMs: CLIENT_TIMEOUT_MS * 3, delayPaths: ['/wallet/broadcasthex'] });
    const transaction = payerTransfer(chain);
    expect(await client.broadcast(transaction)).toMatchObject({ kind: 'unknown' });
    chain.produceBlocks(1);
    first.faults.clear();
    expect(await client.getTransactionOutcome(transaction.txId)).toMatchObject({ succeeded: true });
  });

  it('a slow node is left for the next one; reads answered in time work', async () => {
    const { chain, client, first } = await nodes(2);
    first.faults.set({ delayMs: CLIENT_TIMEOUT_MS * 3 });
    expect(await client.getHeadBlock()).toMatchObject({ number: chain.head.number });
  });
});

describe('HTTP 503', () => {
  it('fails over to the second node of the same chain', async () => {
    const { chain, client, first } = await nodes(2);
    first.faults.set({ http503: true });
    expect((await client.getHeadBlock()).id).toBe(chain.head.id);
  });

  it('with every node answering 503 the call fails as unavailable; a counted fault wears off', async () => {
    const { client, first } = await nodes(1);
    first.faults.set({ http503: true });
    await expect(client.getHeadBlock()).rejects.toBeInstanceOf(TronNodeUnavailableError);
    first.faults.set({ http503: 1 });
    expect(await client.getHeadBlock()).toMatchObject({ number: 3 });
  });
});

describe('SERVER_BUSY', () => {
  it('is retried: one busy answer, then accepted', async () => {
    const { chain, client, first } = await nodes();
    first.faults.set({ serverBusy: 1 });
    const transaction = payerTransfer(chain);
    expect(await client.broadcast(transaction)).toEqual({ kind: 'accepted', txId: transaction.txId });
  });

  it('a node that stays busy leaves the broadcast unknown and the transaction nowhere', async () => {
    const { chain, client, first } = await nodes();
    first.faults.set({ serverBusy: true });
    const transaction = payerTransfer(chain);
    expect(await client.broadcast(transaction)).toMatchObject({ kind: 'unknown' });
    chain.produceBlocks(1);
    expect(chain.findTransaction(transaction.txId)).toBeUndefined();
  });
});

describe('accepted but never included', () => {
  it('answers SUCCESS, never includes it, answers DUP to the same bytes, and refuses them once expired', async () => {
    const { chain, client, first } = await nodes();
    first.faults.set({ neverInclude: 1 });
    const transaction = payerTransfer(chain);
    expect(await client.broadcast(transaction)).toEqual({ kind: 'accepted', txId: transaction.txId });
    chain.produceBlocks(5);
    expect(await client.getTransactionOutcome(transaction.txId)).toBeNull();
    expect(await client.broadcast(transaction)).toEqual({ kind: 'duplicate', txId: transaction.txId });
    chain.produceBlocks(20); // past its 60 s expiration
    expect(await client.broadcast(transaction)).toMatchObject({
      kind: 'rejected',
      code: 'TRANSACTION_EXPIRATION_ERROR',
    });
  });
});

describe('a stuck head', () => {
  it('the node keeps answering its old head and has no newer blocks, while the chain moves on', async () => {
    const { chain, client, first } = await nodes();
    first.faults.set({ stuckHeadAt: 3 });
    chain.produceBlocks(30);
    expect(await client.getHeadBlock()).toMatchObject({ number: 3 });
    expect(await client.getBlock(4)).toBeNull();
    expect(await client.getSolidifiedBlock()).toMatchObject({ number: 0 });
    first.faults.set({ stuckHeadAt: undefined });
    expect(await client.getHeadBlock()).toMatchObject({ number: 33 });
  });

  it('a node with no block at all ({}) is not believed', async () => {
    const { client, first } = await nodes();
    first.faults.set({ emptyNowBlock: true });
    await expect(client.getHeadBlock()).rejects.toBeInstanceOf(TronNodeUnavailableError);
  });
});

describe('a Transfer log from another contract', () => {
  it('the client finds no deposit in it: the block is refused (its signed USDT transfer shows no USDT log), the outcome has none', async () => {
    const { chain, client, first } = await nodes();
    const sent = chain.sendUsdt({ to: deposit.address, amount: 5_000_000n });
    chain.produceBlocks(1);
    expect((await client.scanBlocks(4, 1))[0]!.transfers).toHaveLength(1);
    first.faults.set({ foreignLogContract: USDT_CONTRACT_NILE });
    const info = (await (
      await fetch(`${first.url}/wallet/gettransactioninfobyid`, {
        method: 'POST',
        body: JSON.stringify({ value: sent.transaction.txId }),
      })
    ).json()) as {
      log: { address: string }[];
    };
    expect(info.log[0]!.address).toBe('eca9bc828a3005b9a3b909f2cc5c2a54794de05f');
    const refused = await client.scanBlocks(4, 1).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(refused).toBeInstanceOf(TronNodeUnavailableError);
    expect((refused as TronNodeUnavailableError).failures.map((failure) => failure.kind)).toEqual([
      'invalid_answer',
      'invalid_answer',
    ]);
    expect((refused as TronNodeUnavailableError).failures[0]!.detail).toMatch(
      /signs a transfer of 5000000 .* but the node's logs show 0 USDT log/,
    );
    expect(await client.getTransactionOutcome(sent.transaction.txId)).toMatchObject({ succeeded: true, transfers: [] });
  });
});

// The production TRON node client (createTronNodeClient) against the simulated
// chain's HTTP server, unchanged: blocks, deposits from Transfer logs,
// outcomes and fees, balances, resources, prices, and broadcasts of
// transactions built and signed by our own encoder and signer.
import { bytesToHex } from '@noble/hashes/utils.js';
import { afterEach, describe, expect, it } from 'vitest';
import { startSimulatedChainServer, type SimulatedChainServer } from '../../../src/crypto/simchain/chain-server.ts';
import { createTronNodeClient, type TronNodeClient } from '../../../src/crypto/tron/node-client.ts';
import { signTriggerSmartContract } from '../../../src/crypto/tron/signing.ts';
import { referenceBlockFields } from '../../../src/crypto/tron/transaction.ts';
import { transferCalldata } from '../../../src/crypto/tron/trc20-usdt.ts';
import { testKey } from './fixtures/transfers.ts';

let server: SimulatedChainServer | undefined;
let client: TronNodeClient | undefined;
afterEach(async () => {
  await client?.close();
  await server?.close();
  client = undefined;
  server = undefined;
});

async function start() {
  server = await startSimulatedChainServer({ seed: 'client e2e' });
  client = createTronNodeClient({
    urls: [server.url],
    usdtContract: server.chain.parameters.usdtContract,
    timeoutMs: 2_000,
    retryDelayMs: 0,
  });
  return { chain: server.chain, client };
}

const deposit = testKey('deposit address');
const other = testKey('someone else');

describe('the production node client reads the simulated chain', () => {
  it('scans blocks and finds exactly the successful USDT transfers, with linked headers', async () => {
    const { chain, client } = await start();
    chain.produceBlocks(2);
    const good = chain.sendUsdt({ to: deposit.address, amount: 10_000_000n });
    const tooMuch = chain.sendUsdt({
      from: chain.payers[1]!.address,
      to: deposit.address,
      amount: chain.parameters.payerUsdt + 1n,
    });
    const starved = chain.sendUsdt({
      from: chain.payers[2]!.address,
      to: deposit.address,
      amount: 1n,
      feeLimitSun: 1_000_000n,
    });
    chain.produceBlocks(1);
    const second = chain.sendUsdt({ to: other.address, amount: 2n });
    chain.produceBlocks(2);

    const scanned = await client.scanBlocks(1, 10);
    expect(scanned.map((block) => block.header.number)).toEqual([1, 2, 3, 4, 5]);
    expect(scanned.map((block) => block.header.id)).toEqual([1, 2, 3, 4, 5].map((number) => chain.block(number)!.id));
    const transfers = scanned.flatMap((block) => block.transfers);
    expect(transfers).toEqual([
      {
        txId: good.transaction.txId,
        logIndex: 0,
        blockNumber: 3,
        blockId: chain.block(3)!.id,
        from: chain.payers[0]!.address,
        to: deposit.address,
        amount: 10_000_000n,
        evidence: 'signed_call',
      },
      {
        txId: second.transaction.txId,
        logIndex: 0,
        blockNumber: 4,
        blockId: chain.block(4)!.id,
        from: chain.payers[0]!.address,
        to: other.address,
        amount: 2n,
        evidence: 'signed_call',
      },
    ]);
    const reverted = await client.getTransactionOutcome(tooMuch.transaction.txId);
    expect(reverted).toMatchObject({
      contractResult: 'REVERT',
      succeeded: false,
      transfers: [],
      failureMessage: 'REVERT opcode executed',
    });
    const outOfEnergy = await client.getTransactionOutcome(starved.transaction.txId);
    expect(outOfEnergy).toMatchObject({
      contractResult: 'OUT_OF_ENERGY',
      succeeded: false,
      energyUsed: 10_000,
      energyFeeSun: 1_000_000n,
      feeSun: 1_000_000n,
    });
  });

  it('reads heads, outcomes (solidified only after 18 blocks), balances, accounts, resources and prices', async () => {
    const { chain, client } = await start();
    const sent = chain.sendUsdt({ to: deposit.address, amount: 4_000_000n });
    chain.produceBlocks(1);
    const txId = sent.transaction.txId;
    expect(await client.getTransactionOutcome(txId)).toMatchObject({
      blockNumber: 1,
      contractResult: 'SUCCESS',
      succeeded: true,
      feeSun: 13_028_500n,
      energyUsed: 130_285,
    });
    expect(await client.getTransactionOutcome(txId, { solidified: true })).toBeNull();
    chain.produceBlocks(18);
    expect(await client.getTransactionOutcome(txId, { solidified: true })).toMatchObject({
      blockNumber: 1,
      succeeded: true,
    });
    expect(await client.getHeadBlock()).toMatchObject({ number: 19, id: chain.head.id });
    expect(await client.getSolidifiedBlock()).toMatchObject({ number: 1, id: chain.block(1)!.id });

    expect(await client.getUsdtBalance(deposit.address)).toBe(4_000_000n);
    expect(await client.getUsdtDecimals()).toBe(6);
    expect(await client.getAccount(deposit.address)).toEqual({
      address: deposit.address,
      activated: false,
      balanceSun: 0n,
    });
    const payer = chain.payers[0]!.address;
    expect(await client.getAccount(payer)).toEqual({
      address: payer,
      activated: true,
      balanceSun: chain.parameters.payerTrxSun - 13_028_500n,
    });
    const resources = await client.getAccountResources(payer);
    expect(resources.freeBandwidthLimit).toBe(600);
    expect(resources.freeBandwidthUsed).toBeGreaterThan(0);
    expect(await client.getChainPrices()).toMatchObject({ energyPriceSun: 100n, bandwidthPriceSun: 1_000n });
  });

  it('broadcasts a transfer it built from the solidified block and signed offline: accepted, then duplicate, then on chain', async () => {
    const { chain, client } = await start();
    chain.produceBlocks(25);
    const reference = await client.getSolidifiedBlock();
    const head = await client.getHeadBlock();
    const payer = chain.payers[1]!;
    const signed = signTriggerSmartContract(
      {
        ...referenceBlockFields(reference.number, reference.id),
        expirationMs: head.timestamp + 60_000,
        timestampMs: head.timestamp,
        feeLimitSun: 30_000_000n,
        ownerAddress: payer.address,
        contractAddress: chain.parameters.usdtContract,
        data: transferCalldata(deposit.address, 25_000_000n),
      },
      payer.privateKey,
    );
    const transaction = { txId: signed.txId, hex: bytesToHex(signed.bytes) };
    expect(await client.broadcast(transaction)).toEqual({ kind: 'accepted', txId: signed.txId });
    expect(await client.broadcast(transaction)).toEqual({ kind: 'duplicate', txId: signed.txId });
    chain.produceBlocks(1);
    expect(await client.getTransactionOutcome(signed.txId)).toMatchObject({
      succeeded: true,
      transfers: [{ to: deposit.address, amount: 25_000_000n }],
    });
    expect(await client.getUsdtBalance(deposit.address)).toBe(25_000_000n);
  });

  it('a broadcast the node refuses comes back rejected with its code', async () => {
    const { chain, client } = await start();
    const stranger = testKey('not activated');
    const head = await client.getHeadBlock();
    const signed = signTriggerSmartContract(
      {
        ...referenceBlockFields(head.number, head.id),
        expirationMs: head.timestamp + 60_000,
        timestampMs: head.timestamp,
        feeLimitSun: 30_000_000n,
        ownerAddress: stranger.address,
        contractAddress: chain.parameters.usdtContract,
        data: transferCalldata(deposit.address, 1n),
      },
      stranger.privateKey,
    );
    expect(await client.broadcast({ txId: signed.txId, hex: bytesToHex(signed.bytes) })).toMatchObject({
      kind: 'rejected',
      code: 'CONTRACT_VALIDATE_ERROR',
    });
  });

  it('after a reorg the client sees the new branch: the deposit moved to another block id', async () => {
    const { chain, client } = await start();
    chain.produceBlocks(20);
    const sent = chain.sendUsdt({ to: deposit.address, amount: 3_000_000n });
    chain.produceBlocks(3);
    const before = (await client.scanBlocks(21, 3)).flatMap((block) => block.transfers);
    expect(before).toHaveLength(1);
    chain.reorg(3, { reinclude: true });
    const after = (await client.scanBlocks(21, 3)).flatMap((block) => block.transfers);
    expect(after).toHaveLength(1);
    expect(after[0]!.txId).toBe(sent.transaction.txId);
    expect(after[0]!.blockId).not.toBe(before[0]!.blockId);
    chain.reorg(3, { reinclude: false });
    expect((await client.scanBlocks(21, 3)).flatMap((block) => block.transfers)).toEqual([]);
  });
});

// TRX transfers (TransferContract) on the simulated chain, as the sending side's
// gas top-ups make them: signed offline by our signer, broadcast and read back
// through the production node client. A new recipient is created at the
// chain's own fees (0.1 TRX of bandwidth + 1 TRX), an existing one costs only
// bandwidth; the node refuses what java-tron refuses; a reorg undoes a creation.
import { bytesToHex } from '@noble/hashes/utils.js';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startSimulatedChainServer, type SimulatedChainServer } from '../../../src/crypto/simchain/chain-server.ts';
import { loadChain, saveChain } from '../../../src/crypto/simchain/persistence.ts';
import type { TronAddress } from '../../../src/crypto/tron/address.ts';
import { createTronNodeClient, type TronNodeClient } from '../../../src/crypto/tron/node-client.ts';
import { signTransferContract } from '../../../src/crypto/tron/signing.ts';
import { referenceBlockFields } from '../../../src/crypto/tron/transaction.ts';
import { testKey, type TestKey } from './fixtures/transfers.ts';

let server: SimulatedChainServer | undefined;
let client: TronNodeClient | undefined;
afterEach(async () => {
  await client?.close();
  await server?.close();
  client = undefined;
  server = undefined;
});

const hot = testKey('trx hot wallet');
const fresh = testKey('never activated');

async function start() {
  server = await startSimulatedChainServer({ seed: 'trx transfers' });
  client = createTronNodeClient({
    urls: [server.url],
    usdtContract: server.chain.parameters.usdtContract,
    timeoutMs: 2_000,
    retryDelayMs: 0,
  });
  server.chain.faucet(hot.address, { trxSun: 100_000_000n });
  server.chain.produceBlocks(20);
  return { chain: server.chain, client };
}

async function signTrx(client: TronNodeClient, from: TestKey, to: TronAddress, amountSun: bigint) {
  const reference = await client.getSolidifiedBlock();
  const head = await client.getHeadBlock();
  const signed = signTransferContract(
    {
      ...referenceBlockFields(reference.number, reference.id),
      expirationMs: head.timestamp + 60_000,
      timestampMs: head.timestamp,
      ownerAddress: from.address,
      toAddress: to,
      amountSun,
    },
    from.privateKey,
  );
  return { txId: signed.txId, hex: bytesToHex(signed.bytes) };
}

describe('TRX transfers on the simulated chain', () => {
  it('to a never-activated address: created with the amount; the sender pays amount + 0.1 TRX bandwidth + 1 TRX creation', async () => {
    const { chain, client } = await start();
    expect(await client.getAccount(fresh.address)).toMatchObject({ activated: false, balanceSun: 0n });
    const transfer = await signTrx(client, hot, fresh.address, 13_000_000n);
    expect(await client.broadcast(transfer)).toEqual({ kind: 'accepted', txId: transfer.txId });
    chain.produceBlocks(1);
    const outcome = await client.getTransactionOutcome(transfer.txId);
    expect(outcome).toMatchObject({
      succeeded: true,
      contractResult: null,
      feeSun: 1_100_000n,
      bandwidthFeeSun: 100_000n,
      energyUsed: 0,
      transfers: [],
    });
    expect(await client.getAccount(fresh.address)).toMatchObject({ activated: true, balanceSun: 13_000_000n });
    expect((await client.getAccount(hot.address)).balanceSun).toBe(100_000_000n - 13_000_000n - 1_100_000n);
    const prices = await client.getChainPrices();
    expect(outcome!.feeSun).toBe(prices.createAccountFeeSun + prices.createNewAccountFeeSun);
    // Final after 18 more blocks, like any transaction.
    chain.produceBlocks(18);
    expect(await client.getTransactionOutcome(transfer.txId, { solidified: true })).toMatchObject({ succeeded: true });
  });

  it('to an existing account: only bandwidth, from the free allowance; the block and its results read like any other', async () => {
    const { chain, client } = await start();
    chain.faucet(fresh.address, { trxSun: 1n });
    const transfer = await signTrx(client, hot, fresh.address, 2_000_000n);
    expect(await client.broadcast(transfer)).toMatchObject({ kind: 'accepted' });
    // A USDT transfer in the same block: the scan reports only it as a USDT transfer.
    const usdt = chain.sendUsdt({ to: fresh.address, amount: 5n });
    chain.produceBlocks(1);
    const outcome = await client.getTransactionOutcome(transfer.txId);
    expect(outcome).toMatchObject({ succeeded: true, feeSun: 0n, bandwidthFeeSun: 0n });
    expect(outcome!.bandwidthUsed).toBeGreaterThan(200);
    expect(await client.getAccount(fresh.address)).toMatchObject({ balanceSun: 2_000_001n });
    const [block] = await client.scanBlocks(chain.head.number, 1);
    expect(block!.transfers).toEqual([
      expect.objectContaining({ txId: usdt.transaction.txId, to: fresh.address, amount: 5n }),
    ]);
    const json = (await (
      await fetch(`${server!.url}/wallet/gettransactionbyid`, {
        method: 'POST',
        body: JSON.stringify({ value: transfer.txId }),
      })
    ).json()) as {
      ret: { contractRet: string }[];
      raw_data: { contract: { type: string; parameter: { value: Record<string, unknown> } }[] };
    };
    expect(json.ret).toEqual([{ contractRet: 'SUCCESS' }]);
    expect(json.raw_data.contract[0]).toMatchObject({
      type: 'TransferContract',
      parameter: { value: { amount: 2_000_000 } },
    });
  });

  it('refuses what java-tron refuses: more than the balance (fees included), to oneself, from an account that does not exist', async () => {
    const { chain, client } = await start();
    const tooMuch = await signTrx(client, hot, fresh.address, 100_000_000n - 1_100_000n + 1n);
    expect(await client.broadcast(tooMuch)).toMatchObject({ kind: 'rejected', code: 'CONTRACT_VALIDATE_ERROR' });
    const exactly = await signTrx(client, hot, fresh.address, 100_000_000n - 1_100_000n);
    expect(await client.broadcast(exactly)).toMatchObject({ kind: 'accepted' });
    const self = await signTrx(client, hot, hot.address, 1n);
    expect(await client.broadcast(self)).toMatchObject({ kind: 'rejected', code: 'CONTRACT_VALIDATE_ERROR' });
    const nobody = await signTrx(client, testKey('nobody'), fresh.address, 1n);
    expect(await client.broadcast(nobody)).toMatchObject({ kind: 'rejected', code: 'CONTRACT_VALIDATE_ERROR' });
    chain.produceBlocks(1);
    expect((await client.getAccount(hot.address)).balanceSun).toBe(0n);
  });

  it('a reorg undoes the creation; re-included, the account is created once', async () => {
    const { chain, client } = await start();
    const transfer = await signTrx(client, hot, fresh.address, 3_000_000n);
    expect(await client.broadcast(transfer)).toMatchObject({ kind: 'accepted' });
    chain.produceBlocks(1);
    chain.reorg(1, { reinclude: false });
    expect(await client.getAccount(fresh.address)).toMatchObject({ activated: false });
    expect((await client.getAccount(hot.address)).balanceSun).toBe(100_000_000n);
    // Forgotten by the node: the same bytes may be broadcast again.
    expect(await client.broadcast(transfer)).toMatchObject({ kind: 'accepted' });
    chain.produceBlocks(1);
    chain.reorg(1);
    expect(await client.getTransactionOutcome(transfer.txId)).toMatchObject({ succeeded: true, feeSun: 1_100_000n });
    expect(await client.getAccount(fresh.address)).toMatchObject({ activated: true, balanceSun: 3_000_000n });
  });

  it('a saved chain holding a TRX transfer loads and answers the same', async () => {
    const { chain, client } = await start();
    const transfer = await signTrx(client, hot, fresh.address, 3_000_000n);
    await client.broadcast(transfer);
    chain.produceBlocks(1);
    const folder = await mkdtemp(join(tmpdir(), 'simchain-trx-'));
    try {
      await saveChain(chain, join(folder, 'chain.json'));
      const loaded = (await loadChain(join(folder, 'chain.json'), { seed: 'trx transfers' }))!;
      expect(loaded.findTransaction(transfer.txId)?.transaction.receipt).toEqual(
        chain.findTransaction(transfer.txId)?.transaction.receipt,
      );
      expect(loaded.state.account(fresh.address)?.balanceSun).toBe(3_000_000n);
    } finally {
      await rm(folder, { recursive: true, force: true });
    }
  });
});

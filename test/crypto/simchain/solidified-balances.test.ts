// Balances at the solidified block, as java-tron serves them: HttpApiOnSolidityService
// maps /walletsolidity/getaccount to GetAccountOnSolidityServlet and
// /walletsolidity/triggerconstantcontract to TriggerConstantContractOnSolidityServlet,
// each the /wallet/ servlet run on the solidified state (WalletOnSolidity.futureGet).
// So a transfer changes them only once its block is solidified (head − 18), and an
// account a newer block created is `{}` there; the /wallet/ answers move at once.
// Read through the production node client, as custody reconciliation reads them.
import { bytesToHex } from '@noble/hashes/utils.js';
import { afterEach, describe, expect, it } from 'vitest';
import { startSimulatedChainServer, type SimulatedChainServer } from '../../../src/crypto/simchain/chain-server.ts';
import { tronAddressToHex, type TronAddress } from '../../../src/crypto/tron/address.ts';
import { createTronNodeClient, type TronNodeClient } from '../../../src/crypto/tron/node-client.ts';
import { signTransferContract } from '../../../src/crypto/tron/signing.ts';
import { referenceBlockFields } from '../../../src/crypto/tron/transaction.ts';
import { addressWord } from '../../../src/crypto/tron/trc20-usdt.ts';
import { testKey, type TestKey } from './fixtures/transfers.ts';

let server: SimulatedChainServer | undefined;
let client: TronNodeClient | undefined;
afterEach(async () => {
  await client?.close();
  await server?.close();
  client = undefined;
  server = undefined;
});

const holder = testKey('solidified holder');
const fresh = testKey('solidified fresh');

async function start() {
  server = await startSimulatedChainServer({ seed: 'solidified balances' });
  client = createTronNodeClient({
    urls: [server.url],
    usdtContract: server.chain.parameters.usdtContract,
    timeoutMs: 2_000,
    retryDelayMs: 0,
  });
  server.chain.faucet(holder.address, { trxSun: 100_000_000n });
  server.chain.produceBlocks(20);
  return { chain: server.chain, client };
}

async function post(path: string, body: object): Promise<unknown> {
  const response = await fetch(`${server!.url}${path}`, {
    method: 'POST',
    body: JSON.stringify(body),
    headers: { 'content-type': 'application/json' },
  });
  expect(response.status).toBe(200);
  return response.json();
}

async function sendTrx(from: TestKey, to: TronAddress, amountSun: bigint): Promise<void> {
  const reference = await client!.getSolidifiedBlock();
  const head = await client!.getHeadBlock();
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
  expect(await client!.broadcast({ txId: signed.txId, hex: bytesToHex(signed.bytes) })).toMatchObject({
    kind: 'accepted',
  });
}

describe('balances at the solidified block', () => {
  it('/walletsolidity/triggerconstantcontract balanceOf moves only once the transfer is solidified; /wallet/ at once', async () => {
    const { chain, client } = await start();
    chain.sendUsdt({ to: holder.address, amount: 7_000_000n });
    chain.produceBlocks(1);
    expect(await client.getUsdtBalance(holder.address)).toBe(7_000_000n);
    expect(await client.getUsdtBalance(holder.address, { solidified: true })).toBe(0n);
    chain.produceBlocks(chain.parameters.solidityDepth - 1);
    expect(await client.getUsdtBalance(holder.address, { solidified: true })).toBe(0n);
    chain.produceBlocks(1);
    expect(await client.getUsdtBalance(holder.address, { solidified: true })).toBe(7_000_000n);
    // The answer has the /wallet/ servlet's shape (one 32-byte word in constant_result).
    const raw = (await post('/walletsolidity/triggerconstantcontract', {
      owner_address: tronAddressToHex(holder.address),
      contract_address: tronAddressToHex(chain.parameters.usdtContract),
      function_selector: 'balanceOf(address)',
      parameter: bytesToHex(addressWord(holder.address)),
    })) as { result: unknown; constant_result: string[] };
    expect(raw.result).toEqual({ result: true });
    expect(raw.constant_result).toEqual([(7_000_000).toString(16).padStart(64, '0')]);
  });

  it('/walletsolidity/getaccount: the TRX balance before the unsolidified blocks, and {} for an account only they created', async () => {
    const { chain, client } = await start();
    await sendTrx(holder, fresh.address, 5_000_000n);
    chain.produceBlocks(1);
    const headHolder = await client.getAccount(holder.address);
    expect(headHolder.balanceSun).toBeLessThan(100_000_000n - 5_000_000n);
    expect(await client.getAccount(holder.address, { solidified: true })).toMatchObject({
      activated: true,
      balanceSun: 100_000_000n,
    });
    expect(await client.getAccount(fresh.address)).toMatchObject({ activated: true, balanceSun: 5_000_000n });
    expect(await client.getAccount(fresh.address, { solidified: true })).toMatchObject({
      activated: false,
      balanceSun: 0n,
    });
    expect(await post('/walletsolidity/getaccount', { address: tronAddressToHex(fresh.address) })).toEqual({});
    chain.produceBlocks(chain.parameters.solidityDepth);
    expect(await client.getAccount(fresh.address, { solidified: true })).toMatchObject({
      activated: true,
      balanceSun: 5_000_000n,
    });
    expect(await client.getAccount(holder.address, { solidified: true })).toEqual(headHolder);
  });

  it('faucet grants, made outside any block, count as solidified at once (a simulator knob, not a chain event)', async () => {
    const { chain, client } = await start();
    chain.faucet(fresh.address, { usdt: 3_000_000n });
    expect(await client.getUsdtBalance(fresh.address, { solidified: true })).toBe(3_000_000n);
  });
});

// One-shot outcomes for the next transfer to an address, and draining an
// account's TRX, armed through the simulator's control surface over HTTP (as a
// gateway in another process does) and observed through the production node
// client: a sender like the hot wallet (its own key, funded by the faucet)
// signs offline and broadcasts with the client, then reads the outcome.
import { bytesToHex } from '@noble/hashes/utils.js';
import { afterEach, describe, expect, it } from 'vitest';
import { startSimulatedChainServer, type SimulatedChainServer } from '../../../src/crypto/simchain/chain-server.ts';
import {
  createSimulatorControl,
  SimulatorRefusal,
  type SimulatorControl,
} from '../../../src/crypto/simchain/control-client.ts';
import { saveChain, loadChain } from '../../../src/crypto/simchain/persistence.ts';
import type { TronAddress } from '../../../src/crypto/tron/address.ts';
import { createTronNodeClient, type TronNodeClient } from '../../../src/crypto/tron/node-client.ts';
import { signTriggerSmartContract } from '../../../src/crypto/tron/signing.ts';
import { referenceBlockFields } from '../../../src/crypto/tron/transaction.ts';
import { transferCalldata } from '../../../src/crypto/tron/trc20-usdt.ts';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { testKey, type TestKey } from './fixtures/transfers.ts';

let server: SimulatedChainServer | undefined;
let client: TronNodeClient | undefined;
afterEach(async () => {
  await client?.close();
  await server?.close();
  client = undefined;
  server = undefined;
});

const hot = testKey('hot wallet');
const recipient = testKey('payout recipient');
const FEE_LIMIT_SUN = 30_000_000n;

async function start(): Promise<{ control: SimulatorControl; client: TronNodeClient; server: SimulatedChainServer }> {
  server = await startSimulatedChainServer({ seed: 'next transfer outcomes' });
  client = createTronNodeClient({
    urls: [server.url],
    usdtContract: server.chain.parameters.usdtContract,
    timeoutMs: 2_000,
    retryDelayMs: 0,
  });
  const control = createSimulatorControl(server.url);
  await control.faucet(hot.address, { trxSun: 1_000_000_000n, usdt: 1_000_000_000n });
  await control.mine(20);
  return { control, client, server };
}

/** What a sending executor does: a transfer built from the solidified block, signed once, broadcast through the client. */
async function send(client: TronNodeClient, contract: TronAddress, from: TestKey, to: TronAddress, amount: bigint) {
  const reference = await client.getSolidifiedBlock();
  const head = await client.getHeadBlock();
  const signed = signTriggerSmartContract(
    {
      ...referenceBlockFields(reference.number, reference.id),
      expirationMs: head.timestamp + 60_000,
      timestampMs: head.timestamp,
      feeLimitSun: FEE_LIMIT_SUN,
      ownerAddress: from.address,
      contractAddress: contract,
      data: transferCalldata(to, amount),
    },
    from.privateKey,
  );
  const result = await client.broadcast({ txId: signed.txId, hex: bytesToHex(signed.bytes) });
  expect(result).toEqual({ kind: 'accepted', txId: signed.txId });
  return signed.txId;
}

describe('the next transfer to an address, armed through the control surface', () => {
  it('revert: included with REVERT, the fee charged, no Transfer, no USDT moved; the transfer after it succeeds', async () => {
    const { control, client, server } = await start();
    await control.armNextTransfer(recipient.address, 'revert');
    const trxBefore = (await client.getAccount(hot.address)).balanceSun;
    const txId = await send(client, server.chain.parameters.usdtContract, hot, recipient.address, 5_000_000n);
    await control.mine(1);
    const outcome = await client.getTransactionOutcome(txId);
    expect(outcome).toMatchObject({
      contractResult: 'REVERT',
      succeeded: false,
      transfers: [],
      failureMessage: 'REVERT opcode executed',
    });
    expect(outcome!.feeSun).toBeGreaterThan(0n);
    expect(outcome!.energyFeeSun).toBe(
      BigInt(server.chain.parameters.revertEnergy) * server.chain.parameters.energyPriceSun,
    );
    expect((await client.getAccount(hot.address)).balanceSun).toBe(trxBefore - outcome!.feeSun);
    expect(await client.getUsdtBalance(recipient.address)).toBe(0n);
    expect(await client.getUsdtBalance(hot.address)).toBe(1_000_000_000n);
    // Final too: the solidified view shows the same failure 18 blocks later.
    expect(await client.getTransactionOutcome(txId, { solidified: true })).toBeNull();
    await control.mine(18);
    expect(await client.getTransactionOutcome(txId, { solidified: true })).toMatchObject({
      contractResult: 'REVERT',
      succeeded: false,
    });

    const again = await send(client, server.chain.parameters.usdtContract, hot, recipient.address, 5_000_000n);
    await control.mine(1);
    expect(await client.getTransactionOutcome(again)).toMatchObject({
      contractResult: 'SUCCESS',
      succeeded: true,
      transfers: [{ to: recipient.address, amount: 5_000_000n }],
    });
    expect(await client.getUsdtBalance(recipient.address)).toBe(5_000_000n);
  });

  it('out_of_energy: included with OUT_OF_ENERGY, every unit the fee_limit allows burned, nothing moved', async () => {
    const { control, client, server } = await start();
    await control.armNextTransfer(recipient.address, 'out_of_energy');
    const txId = await send(client, server.chain.parameters.usdtContract, hot, recipient.address, 5_000_000n);
    await control.mine(1);
    const outcome = await client.getTransactionOutcome(txId);
    expect(outcome).toMatchObject({
      contractResult: 'OUT_OF_ENERGY',
      succeeded: false,
      transfers: [],
      energyFeeSun: FEE_LIMIT_SUN,
    });
    expect(outcome!.energyUsed).toBe(Number(FEE_LIMIT_SUN / server.chain.parameters.energyPriceSun));
    expect(await client.getUsdtBalance(recipient.address)).toBe(0n);
  });

  it('never_included: the broadcast is accepted, the transaction never lands and costs nothing; the next transfer lands', async () => {
    const { control, client, server } = await start();
    await control.armNextTransfer(recipient.address, 'never_included');
    const txId = await send(client, server.chain.parameters.usdtContract, hot, recipient.address, 5_000_000n);
    await control.mine(30);
    expect(await client.getTransactionOutcome(txId)).toBeNull();
    expect(await client.getUsdtBalance(recipient.address)).toBe(0n);
    expect((await client.getAccount(hot.address)).balanceSun).toBe(1_000_000_000n);
    // The one after it is included normally.
    const next = await send(client, server.chain.parameters.usdtContract, hot, recipient.address, 1_000_000n);
    await control.mine(1);
    expect(await client.getTransactionOutcome(next)).toMatchObject({ succeeded: true });
  });

  it('an outcome hits only transfers to its address, and disarming (null) cancels it', async () => {
    const { control, client, server } = await start();
    const other = testKey('another recipient');
    await control.armNextTransfer(recipient.address, 'revert');
    const toOther = await send(client, server.chain.parameters.usdtContract, hot, other.address, 1_000_000n);
    await control.mine(1);
    expect(await client.getTransactionOutcome(toOther)).toMatchObject({ succeeded: true });
    await control.armNextTransfer(recipient.address, null);
    const toRecipient = await send(client, server.chain.parameters.usdtContract, hot, recipient.address, 1_000_000n);
    await control.mine(1);
    expect(await client.getTransactionOutcome(toRecipient)).toMatchObject({ succeeded: true });
  });

  it('a reorg that orphans the failed transfer re-arms the outcome: re-included, it fails again', async () => {
    const { control, client, server } = await start();
    await control.armNextTransfer(recipient.address, 'revert');
    const txId = await send(client, server.chain.parameters.usdtContract, hot, recipient.address, 5_000_000n);
    await control.mine(1);
    const first = await client.getTransactionOutcome(txId);
    expect(first).toMatchObject({ contractResult: 'REVERT' });
    await control.reorg(1);
    const moved = await client.getTransactionOutcome(txId);
    expect(moved).toMatchObject({ contractResult: 'REVERT', succeeded: false });
    expect(moved!.blockNumber).toBe(first!.blockNumber);
    expect(server.chain.state.nextTransferOutcomes.size).toBe(0);
  });

  it('drain_trx: the account keeps its USDT and activation, loses every sun; its next transfer runs out of energy', async () => {
    const { control, client, server } = await start();
    const before = await client.getAccount(hot.address);
    expect(await control.drainTrx(hot.address)).toBe(before.balanceSun);
    expect(await client.getAccount(hot.address)).toMatchObject({ activated: true, balanceSun: 0n });
    expect(await client.getUsdtBalance(hot.address)).toBe(1_000_000_000n);
    // Free bandwidth still carries the bytes; with no TRX there is no energy at all.
    const txId = await send(client, server.chain.parameters.usdtContract, hot, recipient.address, 1_000_000n);
    await control.mine(1);
    expect(await client.getTransactionOutcome(txId)).toMatchObject({
      contractResult: 'OUT_OF_ENERGY',
      succeeded: false,
      feeSun: 0n,
    });
    expect(await control.drainTrx(hot.address)).toBe(0n);
    expect(await control.balances(hot.address)).toEqual({ activated: true, trxSun: 0n, usdt: 1_000_000_000n });
  });

  it('armed outcomes survive a save and load of the chain', async () => {
    const { control, server } = await start();
    await control.armNextTransfer(recipient.address, 'out_of_energy');
    const folder = await mkdtemp(join(tmpdir(), 'simchain-outcomes-'));
    try {
      const file = join(folder, 'chain.json');
      await saveChain(server.chain, file);
      const loaded = await loadChain(file, { seed: 'next transfer outcomes' });
      expect([...loaded!.state.nextTransferOutcomes]).toEqual([[recipient.address, 'out_of_energy']]);
    } finally {
      await rm(folder, { recursive: true, force: true });
    }
  });

  it('the control surface refuses bad values with 400 and a reason, and knows its paths', async () => {
    const { control, server } = await start();
    await expect(control.armNextTransfer(recipient.address, 'explode' as never)).rejects.toThrow(SimulatorRefusal);
    await expect(control.armNextTransfer('Tnope' as TronAddress, 'revert')).rejects.toThrow(/address/);
    await expect(control.mine(0)).rejects.toThrow(/count/);
    await expect(control.reorg(19)).rejects.toThrow(/depth/);
    await expect(control.sendUsdt({ to: recipient.address, amount: 1n, from: recipient.address })).rejects.toThrow(
      /payer/,
    );
    const unknown = await fetch(`${server.url}/simulator/nothing`, { method: 'POST', body: '{}' });
    expect(unknown.status).toBe(404);
    // Node faults are the node's: the control surface answers through them.
    server.faults.set({ http503: true });
    expect((await control.info()).headBlock).toBe(server.chain.head.number);
  });
});

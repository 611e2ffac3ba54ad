// Stake 2.0 through the two clients a gateway or a wallet uses: tronweb 6
// builds, signs and sends freezeBalanceV2 / delegateResource / undelegateResource
// to the simulated node, which takes them; the production TronNodeClient reads
// the stake, the delegation records, the index and the can-delegate size back,
// and broadcasts a stake transaction signed by our own encoder.
import { bytesToHex } from '@noble/hashes/utils.js';
import { TronWeb } from 'tronweb';
import { afterEach, describe, expect, it } from 'vitest';
import { startSimulatedChainServer, type SimulatedChainServer } from '../../../src/crypto/simchain/chain-server.ts';
import { createTronNodeClient, type TronNodeClient } from '../../../src/crypto/tron/node-client.ts';
import { tronAddressToHex } from '../../../src/crypto/tron/address.ts';
import { signStakeTransaction } from '../../../src/crypto/tron/stake-contracts.ts';
import { referenceBlockFields } from '../../../src/crypto/tron/transaction.ts';
import { testKey } from './fixtures/transfers.ts';

const TRX = 1_000_000n;
const deposit = testKey('stake clients deposit');

let server: SimulatedChainServer | undefined;
let client: TronNodeClient | undefined;
afterEach(async () => {
  await client?.close();
  await server?.close();
  client = undefined;
  server = undefined;
});

async function start() {
  server = await startSimulatedChainServer({ seed: 'stake clients' });
  const { chain } = server;
  chain.faucet(deposit.address, { trxSun: TRX });
  chain.produceBlocks(25);
  client = createTronNodeClient({
    urls: [server.url],
    usdtContract: chain.parameters.usdtContract,
    timeoutMs: 2_000,
    retryDelayMs: 0,
  });
  const payer = chain.payers[0]!;
  const tronWeb = new TronWeb({
    fullNode: server.url,
    solidityNode: server.url,
    privateKey: bytesToHex(payer.privateKey),
  });
  return { chain, client, payer, tronWeb };
}

describe('Stake 2.0 through tronweb and the production client', () => {
  it('tronweb-built freeze, delegate and undelegate are taken by the chain; the client reads each step', async () => {
    const { chain, client, payer, tronWeb } = await start();
    const owner = payer.address;
    const ownerHex = tronAddressToHex(owner);
    const depositHex = tronAddressToHex(deposit.address);

    const freeze = await tronWeb.transactionBuilder.freezeBalanceV2(50_000 * 1_000_000, 'ENERGY', ownerHex);
    expect(await tronWeb.trx.sendRawTransaction(await tronWeb.trx.sign(freeze))).toMatchObject({ result: true });
    chain.produceBlocks(1);
    expect(chain.findTransaction(freeze.txID)?.transaction.receipt.result).toBe('SUCCESS');
    expect(await client.getAccountStake(owner)).toMatchObject({
      frozenSun: { ENERGY: 50_000n * TRX, BANDWIDTH: 0n },
      delegatedSun: { ENERGY: 0n, BANDWIDTH: 0n },
    });
    expect(await client.getCanDelegatedMaxSize(owner, 'ENERGY')).toBe(50_000n * TRX);

    const delegate = await tronWeb.transactionBuilder.delegateResource(
      2_000 * 1_000_000,
      depositHex,
      'ENERGY',
      ownerHex,
      true,
      1_200,
    );
    expect(await tronWeb.trx.sendRawTransaction(await tronWeb.trx.sign(delegate))).toMatchObject({ result: true });
    chain.produceBlocks(1);
    const locked = await client.getDelegatedResources(owner, deposit.address);
    expect(locked).toEqual([
      {
        from: owner,
        to: deposit.address,
        energySun: 2_000n * TRX,
        bandwidthSun: 0n,
        // DelegateResourceActuator: expire = now (the parent block's time) + lock_period × 3 s.
        energyLockExpireMs: chain.head.timestampMs - 3_000 + 1_200 * 3_000,
        bandwidthLockExpireMs: 0,
      },
    ]);
    expect(await client.getDelegationIndex(owner)).toEqual({ from: [], to: [deposit.address] });
    expect(await client.getDelegationIndex(deposit.address)).toEqual({ from: [owner], to: [] });
    expect(await client.getAccountStake(deposit.address)).toMatchObject({
      acquiredSun: { ENERGY: 2_000n * TRX, BANDWIDTH: 0n },
    });
    expect((await client.getAccountResources(deposit.address)).energyLimit).toBeGreaterThan(0);

    // Locked: tronweb's undelegate is refused until the lock runs out.
    const early = await tronWeb.transactionBuilder.undelegateResource(
      2_000 * 1_000_000,
      depositHex,
      'ENERGY',
      ownerHex,
    );
    expect(await tronWeb.trx.sendRawTransaction(await tronWeb.trx.sign(early))).toMatchObject({
      result: false,
      code: 'CONTRACT_VALIDATE_ERROR',
    });
    chain.produceBlocks(1_200);
    const late = await tronWeb.transactionBuilder.undelegateResource(2_000 * 1_000_000, depositHex, 'ENERGY', ownerHex);
    expect(await tronWeb.trx.sendRawTransaction(await tronWeb.trx.sign(late))).toMatchObject({ result: true });
    chain.produceBlocks(1);
    expect(await client.getDelegatedResources(owner, deposit.address)).toEqual([]);
    expect(await client.getDelegationIndex(owner)).toEqual({ from: [], to: [] });

    // Our own encoder and signer, broadcast by the production client.
    const reference = chain.solidBlock;
    const unfreeze = signStakeTransaction(
      {
        ...referenceBlockFields(reference.number, reference.id),
        expirationMs: chain.head.timestampMs + 60_000,
        timestampMs: chain.head.timestampMs,
        contract: {
          type: 'UnfreezeBalanceV2Contract',
          ownerAddress: owner,
          unfreezeBalanceSun: 1_000n * TRX,
          resource: 'ENERGY',
        },
      },
      payer.privateKey,
    );
    expect(await client.broadcast({ txId: unfreeze.txId, hex: bytesToHex(unfreeze.bytes) })).toMatchObject({
      kind: 'accepted',
    });
    chain.produceBlocks(1);
    const stake = await client.getAccountStake(owner);
    expect(stake.frozenSun.ENERGY).toBe(49_000n * TRX);
    expect(stake.unfreezing).toEqual([
      { resource: 'ENERGY', amountSun: 1_000n * TRX, expireTimeMs: chain.head.timestampMs - 3_000 + 14 * 86_400_000 },
    ]);
  });
});

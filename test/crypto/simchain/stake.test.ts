// Stake 2.0 on the simulated chain, over its HTTP API, with every expected
// number derived from java-tron's code (the method is named at each figure).
// Network weights are chosen so that 1 staked TRX yields exactly 10 energy a
// day: TotalEnergyLimit 180,000,000,000 over a TotalEnergyWeight of
// 18,000,000,000 TRX once the test's own stake is in (EnergyProcessor.calculateGlobalEnergyLimitV2).
import { afterEach, describe, expect, it } from 'vitest';
import { chainParameters } from '../../../src/crypto/simchain/chain-parameters.ts';
import { delegationKey } from '../../../src/crypto/simchain/chain-state.ts';
import { startSimulatedChainServer, type SimulatedChainServer } from '../../../src/crypto/simchain/chain-server.ts';
import type { SimulatedChain } from '../../../src/crypto/simchain/simulated-chain.ts';
import { tronAddressToHex, type TronAddress } from '../../../src/crypto/tron/address.ts';
import type { StakeContract } from '../../../src/crypto/tron/stake-contracts.ts';
import { signedTransfer, testKey, type TestKey } from './fixtures/transfers.ts';

const TRX = 1_000_000n;
const owner = testKey('stake owner');
const deposit = testKey('stake deposit');
const holder = testKey('stake holder');

let server: SimulatedChainServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** A chain where `stakeTrx` staked by the test makes the network weight 18,000,000,000 TRX. */
async function start(stakeTrx: bigint, parameters: object = {}) {
  server = await startSimulatedChainServer({
    seed: 'stake',
    host: '127.0.0.1',
    port: 0,
    parameters: { genesisTotalEnergyWeightTrx: 18_000_000_000n - stakeTrx, ...parameters },
  });
  const { chain } = server;
  chain.faucet(owner.address, { trxSun: 1_000_000n * TRX, usdt: 1_000_000_000n });
  chain.faucet(deposit.address, { trxSun: 10n * TRX, usdt: 1_000_000_000n });
  chain.faucet(holder.address, { trxSun: 1n, usdt: 1n });
  chain.produceBlocks(20);
  return chain;
}

async function post(path: string, body: object = {}): Promise<Record<string, unknown>> {
  const response = await fetch(`${server!.url}${path}`, {
    method: 'POST',
    body: JSON.stringify(body),
    headers: { 'content-type': 'application/json' },
  });
  expect(response.status).toBe(200);
  return (await response.json()) as Record<string, unknown>;
}

const resources = (address: TronAddress) => post('/wallet/getaccountresource', { address: tronAddressToHex(address) });

/** Broadcasts a Stake 2.0 contract signed by `key`, expecting the node to take it. */
function send(chain: SimulatedChain, contract: StakeContract, key: TestKey) {
  const outcome = chain.sendStake(contract, key.privateKey);
  expect(outcome).toEqual({ result: true, txId: outcome.transaction.txId, transaction: outcome.transaction });
  return outcome.transaction.txId;
}

function freeze(chain: SimulatedChain, key: TestKey, trx: bigint) {
  return send(
    chain,
    { type: 'FreezeBalanceV2Contract', ownerAddress: key.address, frozenBalanceSun: trx * TRX, resource: 'ENERGY' },
    key,
  );
}

let sent = 0n;
function usdtTo(chain: SimulatedChain, from: TestKey, to: TronAddress, feeLimitSun = 100_000_000n) {
  sent += 1n;
  const built = signedTransfer(chain, from, { to, amount: sent, feeLimitSun });
  expect(chain.broadcastHex(built.hex)).toEqual({ result: true, txId: built.txId });
  return built.txId;
}

const receiptOf = (chain: SimulatedChain, txId: string) => chain.findTransaction(txId)!.transaction.receipt;

describe('freezing TRX for energy', () => {
  it('moves the TRX into frozenV2, adds its weight to the network and gives stake/weight × limit energy a day', async () => {
    const chain = await start(100_000n);
    const before = chain.state.account(owner.address)!.balanceSun;
    const txId = freeze(chain, owner, 100_000n);
    chain.produceBlocks(1);
    const receipt = receiptOf(chain, txId);
    expect(receipt).toMatchObject({ result: 'SUCCESS', energyUsageTotal: 0, energyFeeSun: 0n });
    expect(chain.state.account(owner.address)!.balanceSun).toBe(before - 100_000n * TRX - receipt.netFeeSun);
    // FreezeBalanceV2Actuator.execute: TotalEnergyWeight += frozen / TRX_PRECISION.
    expect(await resources(owner.address)).toMatchObject({
      EnergyLimit: 1_000_000, // 100,000 TRX × 180e9 / 18e9
      TotalEnergyLimit: 180_000_000_000,
      TotalEnergyWeight: 18_000_000_000,
      tronPowerLimit: 100_000,
    });
    const account = await post('/wallet/getaccount', { address: tronAddressToHex(owner.address) });
    // Wallet.getAccount → sortFrozenV2List: BANDWIDTH, ENERGY, TRON_POWER, zero amounts left out.
    expect(account['frozenV2']).toEqual([{}, { type: 'ENERGY', amount: 100_000_000_000 }, { type: 'TRON_POWER' }]);
    // Never used: slot 0, printed as genesis + 0 × 3 s (Wallet.getAccount).
    expect(account['account_resource']).toEqual({
      latest_consume_time_for_energy: chain.parameters.genesisTimestampMs,
      energy_window_size: 28_800_000,
      energy_window_optimized: true,
    });
  });

  it('refuses less than 1 TRX and more than the balance with java-tron words', async () => {
    const chain = await start(0n);
    const refuse = (frozenBalanceSun: bigint) =>
      chain.sendStake(
        { type: 'FreezeBalanceV2Contract', ownerAddress: owner.address, frozenBalanceSun, resource: 'ENERGY' },
        owner.privateKey,
      );
    expect(refuse(999_999n)).toMatchObject({
      result: false,
      code: 'CONTRACT_VALIDATE_ERROR',
      message: 'Contract validate error : frozenBalance must be greater than or equal to 1 TRX',
    });
    expect(refuse(2_000_000n * TRX)).toMatchObject({
      message: 'Contract validate error : frozenBalance must be less than or equal to accountBalance',
    });
  });
});

describe('bandwidth from the stake', () => {
  it('a transaction’s bytes come from staked bandwidth first, then the free allowance, then TRX burned (BandwidthProcessor.consume)', async () => {
    // TotalNetLimit 43,200,000,000 over 43,200,000,000 TRX once the 1,000 TRX are in: 1 byte a day per staked TRX.
    const chain = await start(0n, { genesisTotalBandwidthWeightTrx: 43_200_000_000n - 1_000n });
    send(
      chain,
      {
        type: 'FreezeBalanceV2Contract',
        ownerAddress: owner.address,
        frozenBalanceSun: 1_000n * TRX,
        resource: 'BANDWIDTH',
      },
      owner,
    );
    // A day later the freeze's own bytes (paid from the free allowance) are forgotten.
    chain.produceBlocks(28_801);
    expect(await resources(owner.address)).toMatchObject({ NetLimit: 1_000, freeNetLimit: 600 });
    expect(await resources(owner.address)).not.toHaveProperty('freeNetUsed');
    const txIds = [1, 2, 3, 4].map(() => usdtTo(chain, owner, holder.address));
    chain.produceBlocks(1);
    const [first, second, third, fourth] = txIds.map((txId) => receiptOf(chain, txId));
    const bytes = first!.netUsage;
    expect(bytes).toBeGreaterThan(300);
    // useAccountNet: 1,000 staked bytes pay two transfers whole; the third does not fit in what is left.
    expect(first).toMatchObject({ netUsage: bytes, netFeeSun: 0n });
    expect(second).toMatchObject({ netUsage: bytes, netFeeSun: 0n });
    // useFreeNet: the 600 free bytes pay the third; useTransactionFee: the fourth burns its bytes at 1,000 sun each.
    expect(third).toMatchObject({ netUsage: bytes, netFeeSun: 0n });
    expect(fourth).toMatchObject({ netUsage: 0, netFeeSun: BigInt(bytes) * 1_000n });
    // Same slot: ResourceProcessor.increase adds ceil(bytes × 10^6 / 28,800) twice and floors back to 2 × bytes.
    expect(await resources(owner.address)).toMatchObject({ NetUsed: 2 * bytes, freeNetUsed: bytes });
    const account = await post('/wallet/getaccount', { address: tronAddressToHex(owner.address) });
    expect(account).toMatchObject({ net_usage: 2 * bytes, free_net_usage: bytes });
    // The staked use recovers over the same day window as energy.
    chain.produceBlocks(28_800);
    expect(await resources(owner.address)).not.toHaveProperty('NetUsed');
  });
});

describe('energy for USDT transfers from the stake', () => {
  it('a transfer to a holder uses 64,285 staked energy and burns none; the use recovers linearly over 24 h', async () => {
    const chain = await start(100_000n);
    freeze(chain, owner, 100_000n);
    chain.produceBlocks(1);
    const txId = usdtTo(chain, owner, holder.address);
    chain.produceBlocks(1);
    expect(receiptOf(chain, txId)).toMatchObject({ energyUsageTotal: 64_285, energyUsage: 64_285, energyFeeSun: 0n });
    const info = await post('/wallet/gettransactioninfobyid', { value: txId });
    expect(info['receipt']).toMatchObject({ energy_usage: 64_285, energy_usage_total: 64_285, result: 'SUCCESS' });
    expect(info['receipt']).not.toHaveProperty('energy_fee');
    // The transfer ran with the parent block's time as "now"; the head is one slot later.
    // ResourceProcessor.increase: average = ceil(64,285 × 10^6 / 28,800) = 2,232,119; one slot of decay:
    // round(2,232,119 × 28,799/28,800) = 2,232,041; × 28,800 / 10^6 = 64,282.78 → 64,282.
    expect(await resources(owner.address)).toMatchObject({ EnergyUsed: 64_282, EnergyLimit: 1_000_000 });
    // 14,400 slots after the use (half the window): round(2,232,119 × 0.5) = 1,116,060 → 32,142.528 → 32,142.
    chain.produceBlocks(14_399);
    expect(await resources(owner.address)).toMatchObject({ EnergyUsed: 32_142 });
    // A whole window later nothing is used (lastTime + windowSize ≤ now).
    chain.produceBlocks(14_400);
    expect(await resources(owner.address)).not.toHaveProperty('EnergyUsed');
  });

  it('the use recovers by slots, not blocks: over missed slots as over produced blocks', async () => {
    const chain = await start(100_000n);
    freeze(chain, owner, 100_000n);
    chain.produceBlocks(1);
    usdtTo(chain, owner, holder.address);
    chain.produceBlocks(1);
    // The same 14,400 slots after the use as above, in one block after 14,398 missed slots: 32,142 used.
    chain.missSlots(14_398);
    expect(await resources(owner.address)).toMatchObject({ EnergyUsed: 32_142 });
  });

  it('when the stake runs out mid-transfer, the rest is burned at the energy price', async () => {
    const chain = await start(10_000n);
    freeze(chain, owner, 10_000n); // 100,000 energy a day
    chain.produceBlocks(1);
    const first = usdtTo(chain, owner, holder.address);
    const second = usdtTo(chain, owner, holder.address);
    chain.produceBlocks(1);
    expect(receiptOf(chain, first)).toMatchObject({ energyUsage: 64_285, energyFeeSun: 0n });
    // Same block, same "now": 100,000 − 64,285 = 35,715 left (getAccountLeftEnergyFromFreeze);
    // ReceiptCapsule.payEnergyBill burns (64,285 − 35,715) × 100 sun.
    expect(receiptOf(chain, second)).toMatchObject({
      energyUsageTotal: 64_285,
      energyUsage: 35_715,
      energyFeeSun: 2_857_000n,
    });
  });

  it('fee_limit caps the energy even when it is staked: OUT_OF_ENERGY after fee_limit / price units', async () => {
    const chain = await start(100_000n);
    freeze(chain, owner, 100_000n);
    chain.produceBlocks(1);
    // VMActuator.getAccountEnergyLimitWithFixRatio: min(staked left + balance / price, fee_limit / price) = 50,000.
    const txId = usdtTo(chain, owner, holder.address, 5_000_000n);
    chain.produceBlocks(1);
    expect(receiptOf(chain, txId)).toMatchObject({
      result: 'OUT_OF_ENERGY',
      energyUsageTotal: 50_000,
      energyUsage: 50_000,
      energyFeeSun: 0n,
    });
    expect(chain.state.usdtBalance(holder.address)).toBe(1n); // nothing moved
  });
});

describe('delegating energy to a deposit address', () => {
  const delegate = (chain: SimulatedChain, trx: bigint, lock = false, lockPeriodBlocks = 0n) =>
    chain.sendStake(
      {
        type: 'DelegateResourceContract',
        ownerAddress: owner.address,
        resource: 'ENERGY',
        balanceSun: trx * TRX,
        receiverAddress: deposit.address,
        lock,
        lockPeriodBlocks,
      },
      owner.privateKey,
    );
  const undelegate = (chain: SimulatedChain, trx: bigint) =>
    chain.sendStake(
      {
        type: 'UnDelegateResourceContract',
        ownerAddress: owner.address,
        resource: 'ENERGY',
        balanceSun: trx * TRX,
        receiverAddress: deposit.address,
      },
      owner.privateKey,
    );

  it('the receiver sweeps on delegated energy; undelegating hands its use back to the owner', async () => {
    const chain = await start(100_000n);
    freeze(chain, owner, 100_000n);
    chain.produceBlocks(1);
    expect(delegate(chain, 10_000n)).toMatchObject({ result: true });
    chain.produceBlocks(1);
    expect(await resources(deposit.address)).toMatchObject({ EnergyLimit: 100_000 });
    expect(await resources(owner.address)).toMatchObject({ EnergyLimit: 900_000, TotalEnergyWeight: 18_000_000_000 });
    expect(
      await post('/wallet/getdelegatedresourcev2', {
        fromAddress: tronAddressToHex(owner.address),
        toAddress: tronAddressToHex(deposit.address),
      }),
    ).toEqual({
      delegatedResource: [
        {
          from: tronAddressToHex(owner.address),
          to: tronAddressToHex(deposit.address),
          frozen_balance_for_energy: 10_000_000_000,
        },
      ],
    });
    expect(
      await post('/wallet/getdelegatedresourceaccountindexv2', { value: tronAddressToHex(deposit.address) }),
    ).toEqual({
      account: tronAddressToHex(deposit.address),
      fromAccounts: [tronAddressToHex(owner.address)],
    });
    // Wallet.calcCanDelegatedEnergyMaxSize: frozenV2 (90,000 TRX) − use in sun (none).
    expect(
      await post('/wallet/getcandelegatedmaxsize', { owner_address: tronAddressToHex(owner.address), type: 1 }),
    ).toEqual({
      max_size: 90_000_000_000,
    });

    // The sweep and the undelegation in one block: the same "now" for both.
    const sweep = usdtTo(chain, deposit, holder.address);
    expect(undelegate(chain, 10_000n)).toMatchObject({ result: true });
    chain.produceBlocks(1);
    expect(receiptOf(chain, sweep)).toMatchObject({ energyUsage: 64_285, energyFeeSun: 0n });
    // UnDelegateResourceActuator: transferUsage = min(64,285 × 10,000/10,000, 10,000 TRX × 10 energy) = 64,285
    // moves to the owner (unDelegateIncreaseV2); the receiver keeps no use and no limit.
    expect(await resources(deposit.address)).not.toHaveProperty('EnergyLimit');
    expect(await resources(deposit.address)).not.toHaveProperty('EnergyUsed');
    // One slot of recovery on the owner's side, as above: 64,282.
    expect(await resources(owner.address)).toMatchObject({ EnergyLimit: 1_000_000, EnergyUsed: 64_282 });
    expect(
      await post('/wallet/getdelegatedresourceaccountindexv2', { value: tronAddressToHex(owner.address) }),
    ).toEqual({
      account: tronAddressToHex(owner.address),
    });
  });

  it('a locked delegation cannot be taken back before its lock period ends, then can', async () => {
    const chain = await start(100_000n);
    freeze(chain, owner, 100_000n);
    chain.produceBlocks(1);
    expect(delegate(chain, 10_000n, true, 100n)).toMatchObject({ result: true });
    chain.produceBlocks(1);
    // UnDelegateResourceActuator.validate: a lock counts only once expireTimeForEnergy < now.
    expect(undelegate(chain, 10_000n)).toMatchObject({
      result: false,
      code: 'CONTRACT_VALIDATE_ERROR',
      message:
        'Contract validate error : insufficient delegateFrozenBalance(Energy), request=10000000000, unlock_balance=0',
    });
    // Locked at the parent's time T for 100 blocks: expire = T + 300,000 ms; the head is T + 3,000 now.
    chain.produceBlocks(99);
    expect(undelegate(chain, 10_000n)).toMatchObject({ result: false });
    chain.produceBlocks(1);
    expect(undelegate(chain, 10_000n)).toMatchObject({ result: true });
    chain.produceBlocks(1);
    expect(await resources(deposit.address)).not.toHaveProperty('EnergyLimit');
  });

  it('a lock period past getMaxDelegateLockPeriod (864,000 blocks) is refused; the most is taken', async () => {
    const chain = await start(100_000n);
    freeze(chain, owner, 100_000n);
    chain.produceBlocks(1);
    // DelegateResourceActuator.validate: lockPeriod > dynamicStore.getMaxDelegateLockPeriod().
    expect(delegate(chain, 10_000n, true, 864_001n)).toMatchObject({
      result: false,
      code: 'CONTRACT_VALIDATE_ERROR',
      message:
        'Contract validate error : The lock period of delegate resource cannot be less than 0 and cannot exceed 864000!',
    });
    expect(delegate(chain, 10_000n, true, 864_000n)).toMatchObject({ result: true });
  });

  it('on a chain whose committee never raised MAX_DELEGATE_LOCK_PERIOD (86,400), a chosen lock period is neither checked nor kept: every lock is 3 days', async () => {
    const chain = await start(100_000n, { maxDelegateLockPeriodBlocks: 86_400n });
    freeze(chain, owner, 100_000n);
    chain.produceBlocks(1);
    // supportMaxDelegateLockPeriod() is false: validate skips the bound, getLockPeriod answers
    // DELEGATE_PERIOD / BLOCK_PRODUCED_INTERVAL = 86,400 blocks whatever lock_period says.
    expect(delegate(chain, 10_000n, true, 10_000_000n)).toMatchObject({ result: true });
    const lockedAtMs = chain.head.timestampMs;
    chain.produceBlocks(1);
    const locked = chain.state.delegations.get(delegationKey(owner.address, deposit.address, true))!;
    expect(locked.expireTimeMs.ENERGY - lockedAtMs).toBe(86_400 * chain.parameters.blockIntervalMs);
  });

  it('the maximum lock period is java-tron’s range: from its default 86,400 blocks to ONE_YEAR_BLOCK_NUMBERS', () => {
    expect(() => chainParameters({ maxDelegateLockPeriodBlocks: 86_399n })).toThrow(RangeError);
    expect(() => chainParameters({ maxDelegateLockPeriodBlocks: 10_512_001n })).toThrow(RangeError);
    expect(chainParameters({ maxDelegateLockPeriodBlocks: 10_512_000n }).maxDelegateLockPeriodBlocks).toBe(10_512_000n);
  });

  it('the /walletsolidity staking reads answer from the solidified block: a freeze and a delegation show there only once their blocks are solidified', async () => {
    const chain = await start(100_000n);
    const owners = { owner_address: tronAddressToHex(owner.address) };
    const reads = async (prefix: '/wallet' | '/walletsolidity') => ({
      canDelegate: await post(`${prefix}/getcandelegatedmaxsize`, { ...owners, type: 1 }),
      delegated: await post(`${prefix}/getdelegatedresourcev2`, {
        fromAddress: tronAddressToHex(owner.address),
        toAddress: tronAddressToHex(deposit.address),
      }),
      index: await post(`${prefix}/getdelegatedresourceaccountindexv2`, { value: tronAddressToHex(owner.address) }),
      withdrawable: await post(`${prefix}/getcanwithdrawunfreezeamount`, owners),
      unfreezeCount: await post(`${prefix}/getavailableunfreezecount`, owners),
      frozenV2: (await post(`${prefix}/getaccount`, { address: tronAddressToHex(owner.address) }))['frozenV2'],
    });
    const beforeStaking = await reads('/wallet');
    freeze(chain, owner, 100_000n);
    chain.produceBlocks(1);
    expect(delegate(chain, 10_000n, true)).toMatchObject({ result: true });
    chain.produceBlocks(1);
    const afterStaking = await reads('/wallet');
    expect(afterStaking.canDelegate).toEqual({ max_size: 90_000_000_000 });
    expect(afterStaking.delegated).not.toEqual(beforeStaking.delegated);
    // Both blocks are above the solidified one (depth 18): the solidity node has not seen them.
    expect(await reads('/walletsolidity')).toEqual(beforeStaking);
    chain.produceBlocks(chain.parameters.solidityDepth - 1);
    // The freeze's block is solidified now, the delegation's not yet.
    const frozenOnly = await reads('/walletsolidity');
    expect(frozenOnly).toMatchObject({
      canDelegate: { max_size: 100_000_000_000 },
      delegated: beforeStaking.delegated,
      index: beforeStaking.index,
    });
    expect(frozenOnly.frozenV2).toContainEqual({ type: 'ENERGY', amount: 100_000_000_000 });
    chain.produceBlocks(1);
    expect(await reads('/walletsolidity')).toEqual(afterStaking);
    expect(chain.state.account(owner.address)!.stake!.delegatedSun.ENERGY).toBe(10_000n * TRX); // the head untouched
  });

  it('refuses a receiver that is not an activated account and less than 1 TRX', async () => {
    const chain = await start(100_000n);
    freeze(chain, owner, 100_000n);
    chain.produceBlocks(1);
    const stranger = testKey('stake stranger');
    expect(
      chain.sendStake(
        {
          type: 'DelegateResourceContract',
          ownerAddress: owner.address,
          resource: 'ENERGY',
          balanceSun: TRX,
          receiverAddress: stranger.address,
          lock: false,
          lockPeriodBlocks: 0n,
        },
        owner.privateKey,
      ),
    ).toMatchObject({ message: `Contract validate error : Account[${tronAddressToHex(stranger.address)}] not exists` });
    expect(delegate(chain, 0n)).toMatchObject({
      message: 'Contract validate error : delegateBalance must be greater than or equal to 1 TRX',
    });
  });
});

describe('unfreezing', () => {
  it('waits the unfreeze delay before withdrawexpireunfreeze returns the TRX', async () => {
    const chain = await start(100_000n, { unfreezeDelayDays: 1 });
    freeze(chain, owner, 100_000n);
    chain.produceBlocks(1);
    send(
      chain,
      {
        type: 'UnfreezeBalanceV2Contract',
        ownerAddress: owner.address,
        unfreezeBalanceSun: 1_000n * TRX,
        resource: 'ENERGY',
      },
      owner,
    );
    const unfreezeNowMs = chain.head.timestampMs;
    chain.produceBlocks(1);
    const account = await post('/wallet/getaccount', { address: tronAddressToHex(owner.address) });
    // UnfreezeBalanceV2Actuator.calcUnfreezeExpireTime: now + unfreezeDelayDays × FROZEN_PERIOD.
    expect(account['unfrozenV2']).toEqual([
      { type: 'ENERGY', unfreeze_amount: 1_000_000_000, unfreeze_expire_time: unfreezeNowMs + 86_400_000 },
    ]);
    expect(await resources(owner.address)).toMatchObject({ EnergyLimit: 990_000, TotalEnergyWeight: 17_999_999_000 });
    const withdraw: StakeContract = { type: 'WithdrawExpireUnfreezeContract', ownerAddress: owner.address };
    expect(chain.sendStake(withdraw, owner.privateKey)).toMatchObject({
      message: 'Contract validate error : no unFreeze balance to withdraw ',
    });
    // A day of blocks after the unfreeze's "now": the expiry is reached (expire ≤ now).
    chain.produceBlocks(28_799);
    const before = chain.state.account(owner.address)!.balanceSun;
    const txId = send(chain, withdraw, owner);
    chain.produceBlocks(1);
    const receipt = receiptOf(chain, txId);
    expect(receipt.withdrawExpireAmountSun).toBe(1_000n * TRX);
    expect(chain.state.account(owner.address)!.balanceSun).toBe(before + 1_000n * TRX - receipt.netFeeSun);
    expect(await post('/wallet/gettransactioninfobyid', { value: txId })).toMatchObject({
      withdraw_expire_amount: 1_000_000_000,
    });
  });
});

describe('forks and restarts', () => {
  it('a reorg undoes a freeze and a delegation; a snapshot keeps them', async () => {
    const chain = await start(100_000n);
    freeze(chain, owner, 100_000n);
    chain.produceBlocks(1);
    const snapshotBefore = JSON.stringify(await resources(owner.address));
    chain.sendStake(
      {
        type: 'DelegateResourceContract',
        ownerAddress: owner.address,
        resource: 'ENERGY',
        balanceSun: 10_000n * TRX,
        receiverAddress: deposit.address,
        lock: false,
        lockPeriodBlocks: 0n,
      },
      owner.privateKey,
    );
    chain.produceBlocks(1);
    expect(await resources(owner.address)).toMatchObject({ EnergyLimit: 900_000 });
    chain.reorg(1, { reinclude: false });
    expect(JSON.stringify(await resources(owner.address))).toBe(snapshotBefore);
    expect(chain.state.delegations.size).toBe(0);
    expect(chain.state.delegationIndex.size).toBe(0);
  });
});

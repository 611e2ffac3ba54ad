// What a block does with a USDT transfer (docs/tron.md §1.5, §3): energy by
// recipient (64,285 / 130,285), burned at the energy price, capped by
// fee_limit and by the TRX balance; OUT_OF_ENERGY and REVERT included with the
// fee charged and no token movement; a Transfer log only on success.
import { bytesToHex } from '@noble/hashes/utils.js';
import { describe, expect, it } from 'vitest';
import { SimulatedChain } from '../../../src/crypto/simchain/simulated-chain.ts';
import { tronAddressToEvm } from '../../../src/crypto/tron/address.ts';
import { addressWord, TRANSFER_EVENT_TOPIC } from '../../../src/crypto/tron/trc20-usdt.ts';
import { signedTransfer, testKey } from './fixtures/transfers.ts';

const TRX = 1_000_000n;
const sender = testKey('payer');
const holder = testKey('holder');
const newcomer = testKey('newcomer');

function chainWith(parameters = {}) {
  const chain = new SimulatedChain({ seed: 'execution', parameters });
  chain.faucet(sender.address, { trxSun: 100n * TRX, usdt: 50_000_000n });
  chain.faucet(holder.address, { trxSun: 1n, usdt: 1n });
  chain.produceBlocks(2);
  return chain;
}

/** Broadcasts, mines one block, and returns the receipt. */
function include(chain: SimulatedChain, built: { txId: string; hex: string }) {
  expect(chain.broadcastHex(built.hex)).toEqual({ result: true, txId: built.txId });
  chain.produceBlocks(1);
  const found = chain.findTransaction(built.txId);
  expect(found).toBeDefined();
  return found!.transaction.receipt;
}

describe('successful transfers', () => {
  it('costs 130,285 energy to an address without USDT and moves the tokens with a Transfer log', () => {
    const chain = chainWith();
    const before = chain.state.account(sender.address)!.balanceSun;
    const receipt = include(chain, signedTransfer(chain, sender, { to: newcomer.address, amount: 7_000_000n }));
    expect(receipt).toMatchObject({
      result: 'SUCCESS',
      energyUsageTotal: 130_285,
      energyFeeSun: 13_028_500n,
      netFeeSun: 0n,
      feeSun: 13_028_500n,
    });
    expect(chain.state.usdtBalance(newcomer.address)).toBe(7_000_000n);
    expect(chain.state.usdtBalance(sender.address)).toBe(43_000_000n);
    expect(chain.state.account(sender.address)!.balanceSun).toBe(before - 13_028_500n);
    expect(receipt.logs).toEqual([
      {
        contract: chain.parameters.usdtContract,
        topics: [
          TRANSFER_EVENT_TOPIC,
          bytesToHex(addressWord(sender.address)),
          bytesToHex(addressWord(newcomer.address)),
        ],
        data: 7_000_000n.toString(16).padStart(64, '0'),
      },
    ]);
    expect(bytesToHex(tronAddressToEvm(chain.parameters.usdtContract))).toBe(
      'a614f803b6fd780986a42c78ec9c7f77e6ded13c',
    );
  });

  it('costs 64,285 energy to an address that already holds USDT', () => {
    const chain = chainWith();
    const receipt = include(chain, signedTransfer(chain, sender, { to: holder.address }));
    expect(receipt).toMatchObject({ result: 'SUCCESS', energyUsageTotal: 64_285, energyFeeSun: 6_428_500n });
  });

  it('uses the configured energy figures and price', () => {
    const chain = chainWith({ transferEnergyNewHolder: 200_000, energyPriceSun: 210n });
    const receipt = include(chain, signedTransfer(chain, sender, { to: newcomer.address }));
    expect(receipt).toMatchObject({ energyUsageTotal: 200_000, energyFeeSun: 42_000_000n });
  });
});

describe('fee_limit and TRX balance cap the energy', () => {
  it('a fee_limit of exactly energy × price is enough', () => {
    const chain = chainWith();
    const receipt = include(chain, signedTransfer(chain, sender, { to: newcomer.address, feeLimitSun: 13_028_500n }));
    expect(receipt.result).toBe('SUCCESS');
  });

  it('a fee_limit one sun short ends in OUT_OF_ENERGY: included, all usable energy burned, no tokens moved, no log', () => {
    const chain = chainWith();
    const receipt = include(chain, signedTransfer(chain, sender, { to: newcomer.address, feeLimitSun: 13_028_499n }));
    expect(receipt).toMatchObject({
      result: 'OUT_OF_ENERGY',
      energyUsageTotal: 130_284,
      energyFeeSun: 13_028_400n,
      logs: [],
    });
    expect(chain.state.usdtBalance(newcomer.address)).toBe(0n);
    expect(chain.state.usdtBalance(sender.address)).toBe(50_000_000n);
  });

  it('a sender whose TRX cannot pay the energy ends in OUT_OF_ENERGY and loses what it had', () => {
    const chain = chainWith();
    const poor = testKey('five trx');
    chain.faucet(poor.address, { trxSun: 5n * TRX, usdt: 10_000_000n });
    const receipt = include(chain, signedTransfer(chain, poor, { to: holder.address }));
    expect(receipt).toMatchObject({ result: 'OUT_OF_ENERGY', energyUsageTotal: 50_000, energyFeeSun: 5n * TRX });
    expect(chain.state.account(poor.address)!.balanceSun).toBe(0n);
    expect(chain.state.usdtBalance(poor.address)).toBe(10_000_000n);
  });
});

describe('REVERT', () => {
  it('an amount above the balance reverts: included, fee charged, nothing moved; the whole balance passes', () => {
    const chain = chainWith();
    const over = include(chain, signedTransfer(chain, sender, { to: holder.address, amount: 50_000_001n }));
    expect(over).toMatchObject({
      result: 'REVERT',
      energyUsageTotal: 1_000,
      energyFeeSun: 100_000n,
      logs: [],
      resMessage: 'REVERT opcode executed',
    });
    expect(chain.state.usdtBalance(holder.address)).toBe(1n);
    const all = include(chain, signedTransfer(chain, sender, { to: holder.address, amount: 50_000_000n }));
    expect(all.result).toBe('SUCCESS');
  });

  it('a blacklisted sender or recipient reverts, and passes once delisted', () => {
    const chain = chainWith();
    chain.setBlacklisted(holder.address, true);
    expect(include(chain, signedTransfer(chain, sender, { to: holder.address, amount: 1n })).result).toBe('REVERT');
    chain.setBlacklisted(holder.address, false);
    chain.setBlacklisted(sender.address, true);
    expect(include(chain, signedTransfer(chain, sender, { to: holder.address, amount: 2n })).result).toBe('REVERT');
    chain.setBlacklisted(sender.address, false);
    expect(include(chain, signedTransfer(chain, sender, { to: holder.address, amount: 3n })).result).toBe('SUCCESS');
    expect(chain.state.usdtBalance(holder.address)).toBe(4n);
  });

  it('a paused contract reverts every transfer until unpaused', () => {
    const chain = chainWith();
    chain.setPaused(true);
    expect(include(chain, signedTransfer(chain, sender, { to: holder.address, amount: 1n })).result).toBe('REVERT');
    chain.setPaused(false);
    expect(include(chain, signedTransfer(chain, sender, { to: holder.address, amount: 2n })).result).toBe('SUCCESS');
  });

  it('calldata that is not transfer(address,uint256) reverts', () => {
    const chain = chainWith();
    expect(include(chain, signedTransfer(chain, sender, { data: Uint8Array.of(0x70, 0xa0, 0x82, 0x31) })).result).toBe(
      'REVERT',
    );
  });
});

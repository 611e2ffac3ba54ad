// The simulated USDT contract's dynamic energy factor and issuer blacklist, each
// checked against java-tron's own source:
// - energy = base + base × factor / 10,000 per opcode (actuator VM.play: penalty =
//   energy × (energy_factor + 10,000) / 10,000 − energy, Program.updateContextContractFactor;
//   Constant.DYNAMIC_ENERGY_FACTOR_DECIMAL = 10,000), in blocks and in constant calls
//   (energy_used includes it; TransactionExtention.energy_penalty and
//   ResourceReceipt.energy_penalty_total are that part);
// - /wallet/getcontractinfo prints SmartContractDataWrapper with contract_state
//   {energy_factor} (GetContractInfoServlet, Wallet.getContractInfo; proto3 leaves a
//   zero factor out) and `{}` for an address without a contract;
// - a fee_limit below the energy ends OUT_OF_ENERGY burning all it allows;
// - TetherToken's `isBlackListed(address)` getter (selector e47d6060) answers the list.
import { bytesToHex } from '@noble/hashes/utils.js';
import { afterEach, describe, expect, it } from 'vitest';
import { startSimulatedChainServer, type SimulatedChainServer } from '../../../src/crypto/simchain/chain-server.ts';
import { createSimulatorControl } from '../../../src/crypto/simchain/control-client.ts';
import { tronAddressToHex } from '../../../src/crypto/tron/address.ts';
import { createTronNodeClient } from '../../../src/crypto/tron/node-client.ts';
import { addressWord, IS_BLACKLISTED_SELECTOR } from '../../../src/crypto/tron/trc20-usdt.ts';
import { signedTransfer, testKey } from './fixtures/transfers.ts';

let server: SimulatedChainServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function start() {
  server = await startSimulatedChainServer({ seed: 'energy factor', host: '127.0.0.1', port: 0 });
  return server;
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

const stranger = testKey('stranger');
const TRX = 1_000_000n;

describe('the dynamic energy factor (java-tron VM.play, ContractStateCapsule)', () => {
  it('getcontractinfo shows contract_state without energy_factor at 0, with it once raised; {} for an address without a contract', async () => {
    const { chain, url } = await start();
    const usdt = tronAddressToHex(chain.parameters.usdtContract);
    const atZero = await post('/wallet/getcontractinfo', { value: usdt });
    expect(atZero['contract_state']).toEqual({});
    expect(atZero['smart_contract']).toMatchObject({ contract_address: usdt });
    await createSimulatorControl(url).setEnergyFactor(3_400);
    expect((await post('/wallet/getcontractinfo', { value: usdt }))['contract_state']).toEqual({
      energy_factor: 3_400,
    });
    expect(await post('/wallet/getcontractinfo', { value: tronAddressToHex(stranger.address) })).toEqual({});
    const client = createTronNodeClient({ urls: [url], usdtContract: chain.parameters.usdtContract });
    expect(await client.getUsdtEnergyFactor()).toBe(3_400);
    await client.close();
  });

  it('constant calls answer base × (1 + factor / 10,000), energy_penalty being the added part', async () => {
    const { chain } = await start();
    const payer = chain.payers[0]!.address;
    const body = {
      owner_address: tronAddressToHex(payer),
      contract_address: tronAddressToHex(chain.parameters.usdtContract),
      function_selector: 'transfer(address,uint256)',
      parameter: bytesToHex(addressWord(stranger.address)) + 1n.toString(16).padStart(64, '0'),
    };
    expect(await post('/wallet/triggerconstantcontract', body)).not.toHaveProperty('energy_penalty');
    chain.setUsdtEnergyFactor(3_400);
    // 130,285 + 130,285 × 3,400 / 10,000 (integer division) = 130,285 + 44,296.
    expect(await post('/wallet/triggerconstantcontract', body)).toMatchObject({
      energy_used: 174_581,
      energy_penalty: 44_296,
    });
    expect(await post('/wallet/estimateenergy', body)).toEqual({ result: { result: true }, energy_required: 174_581 });
  });

  it('a block burns the raised energy and reports energy_penalty_total; a fee_limit below it ends OUT_OF_ENERGY burning the whole limit', async () => {
    const { chain } = await start();
    const sender = testKey('sender');
    chain.faucet(sender.address, { trxSun: 1_000n * TRX, usdt: 50_000_000n });
    chain.produceBlocks(1);
    chain.setUsdtEnergyFactor(10_000); // energy doubled
    const enough = signedTransfer(chain, sender, { to: testKey('first').address, feeLimitSun: 30n * TRX });
    // 130,285 × 2 = 260,570 energy at 100 sun: 26.057 TRX; the 15 TRX fee_limit of today's constant would not do.
    const short = signedTransfer(chain, sender, {
      to: testKey('second').address,
      feeLimitSun: 15n * TRX,
      timestampMs: chain.head.timestampMs + 1,
    });
    expect(chain.broadcastHex(enough.hex).result).toBe(true);
    expect(chain.broadcastHex(short.hex).result).toBe(true);
    chain.produceBlocks(1);
    const ok = await post('/wallet/gettransactioninfobyid', { value: enough.txId });
    expect(ok['receipt']).toMatchObject({
      energy_usage_total: 260_570,
      energy_penalty_total: 130_285,
      energy_fee: 26_057_000,
      result: 'SUCCESS',
    });
    const failed = await post('/wallet/gettransactioninfobyid', { value: short.txId });
    expect(failed).toMatchObject({
      result: 'FAILED',
      receipt: { result: 'OUT_OF_ENERGY', energy_usage_total: 150_000, energy_fee: 15_000_000 },
    });
    expect(chain.state.usdtBalance(testKey('second').address)).toBe(0n);
  });

  it('the control surface refuses a factor outside java-tron’s range', async () => {
    const { url } = await start();
    await expect(createSimulatorControl(url).setEnergyFactor(-1)).rejects.toThrow(
      /factor must be a whole number from 0 to 100000/,
    );
    await expect(createSimulatorControl(url).setEnergyFactor(100_001)).rejects.toThrow(/factor must be/);
  });
});

describe('the issuer blacklist (TetherToken isBlackListed)', () => {
  it('isBlackListed answers 0, then 1 once the control surface lists the address, by selector text and by data', async () => {
    const { chain, url } = await start();
    expect(bytesToHex(IS_BLACKLISTED_SELECTOR)).toBe('e47d6060');
    const contract = tronAddressToHex(chain.parameters.usdtContract);
    const owner = tronAddressToHex(chain.payers[0]!.address);
    const word = bytesToHex(addressWord(stranger.address));
    const bySelector = () =>
      post('/wallet/triggerconstantcontract', {
        owner_address: owner,
        contract_address: contract,
        function_selector: 'isBlackListed(address)',
        parameter: word,
      });
    const byData = () =>
      post('/wallet/triggerconstantcontract', {
        owner_address: owner,
        contract_address: contract,
        data: `e47d6060${word}`,
      });
    expect((await bySelector())['constant_result']).toEqual(['0'.repeat(64)]);
    const control = createSimulatorControl(url);
    await control.setBlacklisted(stranger.address, true);
    expect((await bySelector())['constant_result']).toEqual(['0'.repeat(63) + '1']);
    expect((await byData())['constant_result']).toEqual(['0'.repeat(63) + '1']);
    const client = createTronNodeClient({ urls: [url], usdtContract: chain.parameters.usdtContract });
    expect(await client.isUsdtBlacklisted(stranger.address)).toBe(true);
    await control.setBlacklisted(stranger.address, false);
    expect(await client.isUsdtBlacklisted(stranger.address)).toBe(false);
    await client.close();
  });
});

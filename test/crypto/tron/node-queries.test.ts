// Transaction results, accounts, USDT balances, resources and prices through
// the production client: what it asks the node (paths, bodies, hex addresses)
// and how it reads the node's shapes, where a left-out field means zero and
// `{}` means "no such thing".
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { tronAddressToEvm, tronAddressToHex } from '../../../src/crypto/tron/address.ts';
import {
  createTronNodeClient,
  TronNodeUnavailableError,
  type TronNodeClient,
} from '../../../src/crypto/tron/node-client.ts';
import {
  DEPOSIT_ADDRESS,
  OTHER_TOKEN,
  PAYER,
  transactionInfo,
  transferLog,
  txId,
  uint256Word,
  USDT,
} from './fixtures/chain-json.ts';
import { startFakeTronNode, type FakeTronNode } from './fixtures/fake-tron-node.ts';

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

async function failureOf(promise: Promise<unknown>) {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(TronNodeUnavailableError);
  return (error as TronNodeUnavailableError).failures[0]!;
}

describe('transaction results (gettransactioninfobyid)', () => {
  const id = txId('payout');

  it('reads a successful USDT transfer with its fees and its Transfer log', async () => {
    const info = transactionInfo({
      id,
      blockNumber: 900,
      receiptResult: 'SUCCESS',
      fee: 6_428_500,
      energyUsageTotal: 64_285,
      energyFee: 6_428_500,
      netUsage: 345,
      logs: [transferLog({ from: PAYER, to: DEPOSIT_ADDRESS, amount: 25_000_000n })],
    });
    node.on('/wallet/gettransactioninfobyid', { json: info });
    const outcome = await client.getTransactionOutcome(id.toUpperCase());
    expect(node.requestsTo('/wallet/gettransactioninfobyid')[0]?.body).toEqual({ value: id });
    expect(outcome).toEqual({
      txId: id,
      blockNumber: 900,
      blockTimestamp: info.blockTimeStamp,
      contractResult: 'SUCCESS',
      succeeded: true,
      feeSun: 6_428_500n,
      energyUsed: 64_285,
      energyOwnUsed: 0,
      energyFeeSun: 6_428_500n,
      bandwidthUsed: 345,
      bandwidthFeeSun: 0n,
      failureMessage: null,
      transfers: [{ txId: id, logIndex: 0, blockNumber: 900, from: PAYER, to: DEPOSIT_ADDRESS, amount: 25_000_000n }],
    });
  });

  it('reads a REVERT as a failure that still cost a fee, with the decoded message and no transfers', async () => {
    node.on('/wallet/gettransactioninfobyid', {
      json: transactionInfo({
        id,
        blockNumber: 901,
        receiptResult: 'REVERT',
        failed: true,
        fee: 1_234_000,
        resMessage: 'REVERT opcode executed',
        logs: [transferLog()],
      }),
    });
    const outcome = await client.getTransactionOutcome(id);
    expect(outcome).toMatchObject({
      contractResult: 'REVERT',
      succeeded: false,
      feeSun: 1_234_000n,
      failureMessage: 'REVERT opcode executed',
      transfers: [],
    });
  });

  it('reads OUT_OF_ENERGY as a failure', async () => {
    node.on('/wallet/gettransactioninfobyid', {
      json: transactionInfo({ id, blockNumber: 902, receiptResult: 'OUT_OF_ENERGY', failed: true, fee: 40_000_000 }),
    });
    expect(await client.getTransactionOutcome(id)).toMatchObject({
      contractResult: 'OUT_OF_ENERGY',
      succeeded: false,
      feeSun: 40_000_000n,
    });
  });

  it('reads a transaction that ran no contract (no receipt.result) as succeeded, with zero for every left-out fee', async () => {
    node.on('/wallet/gettransactioninfobyid', { json: transactionInfo({ id, blockNumber: 903 }) });
    expect(await client.getTransactionOutcome(id)).toMatchObject({
      contractResult: null,
      succeeded: true,
      feeSun: 0n,
      energyUsed: 0,
      bandwidthFeeSun: 0n,
    });
  });

  it('answers null for {} (not on chain) and asks /walletsolidity/ when only a final result will do', async () => {
    node.on('/wallet/gettransactioninfobyid', {
      json: transactionInfo({ id, blockNumber: 904, receiptResult: 'SUCCESS' }),
    });
    node.on('/walletsolidity/gettransactioninfobyid', { json: {} });
    expect(await client.getTransactionOutcome(id, { solidified: true })).toBeNull();
    expect(await client.getTransactionOutcome(id)).not.toBeNull();
  });

  it('refuses the result of another transaction', async () => {
    node.on('/wallet/gettransactioninfobyid', {
      json: transactionInfo({ id: txId('other'), blockNumber: 905, receiptResult: 'SUCCESS' }),
    });
    expect((await failureOf(client.getTransactionOutcome(id))).detail).toMatch(/asked for transaction/);
  });

  it('refuses a malformed transaction id before asking anyone', async () => {
    await expect(client.getTransactionOutcome('12ab')).rejects.toThrow(/64 hex digits/);
    expect(node.requests).toHaveLength(0);
  });
});

describe('accounts (getaccount)', () => {
  it('asks with the 21-byte hex address and reads the TRX balance in sun', async () => {
    node.on('/wallet/getaccount', {
      json: { address: tronAddressToHex(PAYER), balance: 12_500_000, create_time: 1_700_000_000_000 },
    });
    expect(await client.getAccount(PAYER)).toEqual({ address: PAYER, activated: true, balanceSun: 12_500_000n });
    expect(node.requestsTo('/wallet/getaccount')[0]?.body).toEqual({
      address: tronAddressToHex(PAYER),
      visible: false,
    });
  });

  it('reads {} as an address not activated yet, and a left-out balance as zero', async () => {
    node.on('/wallet/getaccount', { json: {} });
    expect(await client.getAccount(DEPOSIT_ADDRESS)).toEqual({
      address: DEPOSIT_ADDRESS,
      activated: false,
      balanceSun: 0n,
    });
    node.on('/wallet/getaccount', { json: { address: tronAddressToHex(DEPOSIT_ADDRESS) } });
    expect(await client.getAccount(DEPOSIT_ADDRESS)).toEqual({
      address: DEPOSIT_ADDRESS,
      activated: true,
      balanceSun: 0n,
    });
  });

  it('keeps a balance above 2^53 sun exact', async () => {
    const balance = 2n ** 53n + 1n;
    node.on('/wallet/getaccount', { json: { address: tronAddressToHex(PAYER), balance } });
    expect((await client.getAccount(PAYER)).balanceSun).toBe(balance);
  });

  it('refuses another account, and a negative or fractional balance', async () => {
    node.on('/wallet/getaccount', { json: { address: tronAddressToHex(DEPOSIT_ADDRESS), balance: 1 } });
    expect((await failureOf(client.getAccount(PAYER))).detail).toMatch(/asked for account/);
    node.on('/wallet/getaccount', { json: { address: tronAddressToHex(PAYER), balance: -1 } });
    expect((await failureOf(client.getAccount(PAYER))).kind).toBe('invalid_answer');
    node.on('/wallet/getaccount', { json: { address: tronAddressToHex(PAYER), balance: 1.5 } });
    expect((await failureOf(client.getAccount(PAYER))).kind).toBe('invalid_answer');
  });
});

describe('USDT balance (triggerconstantcontract balanceOf)', () => {
  const constantAnswer = (word: string) => ({
    result: { result: true },
    energy_used: 935,
    constant_result: [word],
    transaction: { ret: [{}], visible: false, txID: txId('constant'), raw_data: {} },
  });

  it('calls balanceOf(address) on the configured contract with the address as one ABI word', async () => {
    node.on('/wallet/triggerconstantcontract', { json: constantAnswer(uint256Word(987_654_321n)) });
    expect(await client.getUsdtBalance(DEPOSIT_ADDRESS)).toBe(987_654_321n);
    const evm = Buffer.from(tronAddressToEvm(DEPOSIT_ADDRESS)).toString('hex');
    expect(node.requestsTo('/wallet/triggerconstantcontract')[0]?.body).toEqual({
      owner_address: tronAddressToHex(DEPOSIT_ADDRESS),
      contract_address: tronAddressToHex(USDT),
      function_selector: 'balanceOf(address)',
      parameter: `${'0'.repeat(24)}${evm}`,
      visible: false,
    });
  });

  it('reads the contract decimals', async () => {
    node.on('/wallet/triggerconstantcontract', { json: constantAnswer(uint256Word(6n)) });
    expect(await client.getUsdtDecimals()).toBe(6);
    expect(node.requestsTo('/wallet/triggerconstantcontract')[0]?.body).toMatchObject({
      function_selector: 'decimals()',
      parameter: '',
    });
  });

  it('refuses a reverted call and an answer that is not one 32-byte word', async () => {
    node.on('/wallet/triggerconstantcontract', {
      json: {
        result: { code: 'CONTRACT_EXE_ERROR', message: Buffer.from('REVERT opcode executed').toString('hex') },
        transaction: { ret: [{ ret: 'FAILED' }] },
      },
    });
    expect((await failureOf(client.getUsdtBalance(PAYER))).detail).toMatch(/REVERT opcode executed/);
    node.on('/wallet/triggerconstantcontract', { json: constantAnswer('05') });
    expect((await failureOf(client.getUsdtBalance(PAYER))).detail).toMatch(/not one 32-byte word/);
  });

  it('uses the contract it is configured with', async () => {
    const other = createTronNodeClient({ urls: [node.url], usdtContract: OTHER_TOKEN, maxAttempts: 1 });
    node.on('/wallet/triggerconstantcontract', { json: constantAnswer(uint256Word(1n)) });
    await other.getUsdtBalance(PAYER);
    await other.close();
    expect(node.requestsTo('/wallet/triggerconstantcontract')[0]?.body.contract_address).toBe(
      tronAddressToHex(OTHER_TOKEN),
    );
  });
});

describe('account resources (getaccountresource)', () => {
  it('reads energy and bandwidth, and what is left of each', async () => {
    node.on('/wallet/getaccountresource', {
      json: {
        freeNetUsed: 100,
        freeNetLimit: 600,
        NetUsed: 50,
        NetLimit: 1_000,
        EnergyUsed: 20_000,
        EnergyLimit: 65_000,
        TotalNetLimit: 43_200_000_000,
        TotalNetWeight: 26_000_000_000,
        TotalEnergyLimit: 180_000_000_000,
        TotalEnergyWeight: 19_000_000_000,
      },
    });
    expect(await client.getAccountResources(PAYER)).toEqual({
      freeBandwidthLimit: 600,
      freeBandwidthUsed: 100,
      stakedBandwidthLimit: 1_000,
      stakedBandwidthUsed: 50,
      energyLimit: 65_000,
      energyUsed: 20_000,
      bandwidthAvailable: 600 - 100 + (1_000 - 50),
      energyAvailable: 65_000 - 20_000,
      totalEnergyLimit: 180_000_000_000,
      totalEnergyWeight: 19_000_000_000,
      totalBandwidthLimit: 43_200_000_000,
      totalBandwidthWeight: 26_000_000_000,
    });
  });

  it('reads left-out fields as zero, and {} (no account) as nothing at all', async () => {
    node.on('/wallet/getaccountresource', { json: { freeNetLimit: 600 } });
    expect(await client.getAccountResources(PAYER)).toMatchObject({
      freeBandwidthLimit: 600,
      freeBandwidthUsed: 0,
      bandwidthAvailable: 600,
      energyAvailable: 0,
    });
    node.on('/wallet/getaccountresource', { json: {} });
    expect(await client.getAccountResources(PAYER)).toMatchObject({
      bandwidthAvailable: 0,
      energyAvailable: 0,
      energyLimit: 0,
    });
  });
});

describe('chain prices (getchainparameters)', () => {
  const parameters = (overrides: Record<string, number | undefined> = {}) => {
    const values: Record<string, number | undefined> = {
      getMaintenanceTimeInterval: 21_600_000,
      getCreateAccountFee: 100_000,
      getTransactionFee: 1_000,
      getCreateNewAccountFeeInSystemContract: 1_000_000,
      getEnergyFee: 100,
      ...overrides,
    };
    return {
      chainParameter: Object.entries(values).map(([key, value]) => (value === undefined ? { key } : { key, value })),
    };
  };

  it('reads the energy and bandwidth prices and the account-creation fees in sun', async () => {
    node.on('/wallet/getchainparameters', { json: parameters() });
    expect(await client.getChainPrices()).toEqual({
      energyPriceSun: 100n,
      bandwidthPriceSun: 1_000n,
      createAccountFeeSun: 100_000n,
      createNewAccountFeeSun: 1_000_000n,
    });
  });

  it('refuses a missing or zero energy price rather than quoting free transfers', async () => {
    node.on('/wallet/getchainparameters', { json: parameters({ getEnergyFee: undefined }) });
    expect((await failureOf(client.getChainPrices())).detail).toMatch(/getEnergyFee is 0/);
    const { chainParameter } = parameters();
    node.on('/wallet/getchainparameters', {
      json: { chainParameter: chainParameter.filter((parameter) => parameter.key !== 'getEnergyFee') },
    });
    expect((await failureOf(client.getChainPrices())).detail).toMatch(/lack getEnergyFee/);
  });
});

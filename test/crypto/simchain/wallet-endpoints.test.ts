// The wallet endpoints of the simulated node (transaction-builder.ts, node-api.ts)
// at their edges, in java-tron's words: refusals of createtransaction and
// triggersmartcontract, `{}` for what the node does not have, what walletsolidity
// does not serve, GET queries read as bodies, and a TRX transfer that executes:
// balances, fees and the new account.
import { afterEach, describe, expect, it } from 'vitest';
import { startSimulatedChainServer, type SimulatedChainServer } from '../../../src/crypto/simchain/chain-server.ts';
import { tronAddressToHex } from '../../../src/crypto/tron/address.ts';
import { signTransactionId } from '../../../src/crypto/tron/signing.ts';
import { bytesToHex } from '@noble/hashes/utils.js';
import { testKey } from './fixtures/transfers.ts';

let server: SimulatedChainServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function start() {
  server = await startSimulatedChainServer({ seed: 'wallet endpoints' });
  server.chain.produceBlocks(25);
  return server;
}

async function request(path: string, body?: object, method: 'GET' | 'POST' = 'POST') {
  const response = await fetch(`${server!.url}${path}`, {
    method,
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  return { status: response.status, body: (await response.text()).trim() };
}

async function post(path: string, body: object = {}): Promise<Record<string, unknown>> {
  const answer = await request(path, body);
  expect(answer.status).toBe(200);
  return JSON.parse(answer.body) as Record<string, unknown>;
}

const hexText = (text: string) => Buffer.from(text).toString('hex');
const newcomer = testKey('newcomer').address;
const VALIDATE = 'class org.tron.core.exception.ContractValidateException : ';

describe('createtransaction (TransferServlet)', () => {
  it('refuses as TransferActuator.validate: yourself, no owner account, amount, balance short of amount + activation', async () => {
    const { chain } = await start();
    const payer = chain.payers[0]!.address;
    const body = (overrides: object) => ({
      owner_address: tronAddressToHex(payer),
      to_address: tronAddressToHex(newcomer),
      amount: 1,
      ...overrides,
    });
    expect(await post('/wallet/createtransaction', body({ to_address: tronAddressToHex(payer) }))).toEqual({
      Error: `${VALIDATE}Cannot transfer TRX to yourself.`,
    });
    expect(
      await post(
        '/wallet/createtransaction',
        body({ owner_address: tronAddressToHex(newcomer), to_address: tronAddressToHex(payer) }),
      ),
    ).toEqual({
      Error: `${VALIDATE}Validate TransferContract error, no OwnerAccount.`,
    });
    expect(await post('/wallet/createtransaction', body({ amount: 0 }))).toEqual({
      Error: `${VALIDATE}Amount must be greater than 0.`,
    });
    // The whole balance is not enough once the 1 TRX activation of a new account is added.
    const balance = Number(chain.state.account(payer)!.balanceSun);
    expect(await post('/wallet/createtransaction', body({ amount: balance }))).toEqual({
      Error: `${VALIDATE}Validate TransferContract error, balance is not sufficient.`,
    });
    expect(await post('/wallet/createtransaction', body({ amount: balance - 1_000_000 }))).toMatchObject({
      visible: false,
      raw_data: { contract: [{ type: 'TransferContract' }] },
    });
  });

  it('builds an unsigned transfer on the solidified block that, signed and broadcast, executes: amount, fees, new account', async () => {
    const { chain } = await start();
    const payer = chain.payers[1]!;
    const before = chain.state.account(payer.address)!.balanceSun;
    const built = await post('/wallet/createtransaction', {
      owner_address: tronAddressToHex(payer.address),
      to_address: tronAddressToHex(newcomer),
      amount: 2_000_000,
    });
    expect(built).not.toHaveProperty('signature');
    expect(built['raw_data']).toMatchObject({
      ref_block_bytes: chain.solidNumber.toString(16).padStart(4, '0'),
      ref_block_hash: chain.solidBlock.id.slice(16, 32),
      expiration: chain.head.timestampMs + 60_000,
      contract: [{ parameter: { value: { amount: 2_000_000 } } }],
    });
    const signature = bytesToHex(signTransactionId(String(built['txID']), payer.privateKey));
    expect(await post('/wallet/broadcasttransaction', { ...built, signature: [signature] })).toEqual({
      result: true,
      txid: built['txID'],
    });
    chain.produceBlocks(1);
    expect(chain.state.account(newcomer)?.balanceSun).toBe(2_000_000n);
    // 2 TRX sent, 1 TRX activation, 0.1 TRX for the creation's bandwidth.
    expect(chain.state.account(payer.address)!.balanceSun).toBe(before - 3_100_000n);
    expect(await post('/wallet/gettransactioninfobyid', { value: built['txID'] })).toMatchObject({
      fee: 1_100_000,
      receipt: { net_fee: 100_000 },
    });
  });

  it('a JSON transfer whose amount was changed after signing fails the signature', async () => {
    const { chain } = await start();
    const payer = chain.payers[0]!;
    const built = await post('/wallet/createtransaction', {
      owner_address: tronAddressToHex(payer.address),
      to_address: tronAddressToHex(newcomer),
      amount: 2_000_000,
    });
    const signature = bytesToHex(signTransactionId(String(built['txID']), payer.privateKey));
    const rawData = built['raw_data'] as { contract: [{ parameter: { value: Record<string, unknown> } }] };
    rawData.contract[0].parameter.value['amount'] = 9_000_000;
    expect(
      await post('/wallet/broadcasttransaction', { ...built, raw_data: rawData, signature: [signature] }),
    ).toMatchObject({
      result: false,
      code: 'SIGERROR',
    });
  });
});

describe('triggersmartcontract (TriggerSmartContractServlet)', () => {
  it('refuses a missing owner as OTHER_ERROR and an address with no contract as CONTRACT_VALIDATE_ERROR', async () => {
    const { chain } = await start();
    const owner = tronAddressToHex(chain.payers[0]!.address);
    expect(
      await post('/wallet/triggersmartcontract', { contract_address: tronAddressToHex(chain.parameters.usdtContract) }),
    ).toEqual({
      result: {
        code: 'OTHER_ERROR',
        message: hexText("class java.security.InvalidParameterException : owner_address isn't set."),
      },
    });
    expect(
      await post('/wallet/triggersmartcontract', {
        owner_address: owner,
        contract_address: tronAddressToHex(newcomer),
        function_selector: 'transfer(address,uint256)',
        parameter: '',
      }),
    ).toEqual({
      result: { code: 'CONTRACT_VALIDATE_ERROR', message: hexText('No contract or not a valid smart contract') },
    });
  });

  it('a view function runs as a constant call; a transfer is built unsigned with the fee_limit asked for', async () => {
    const { chain } = await start();
    const owner = tronAddressToHex(chain.payers[0]!.address);
    const usdt = tronAddressToHex(chain.parameters.usdtContract);
    const word = owner.slice(2).padStart(64, '0');
    const view = await post('/wallet/triggersmartcontract', {
      owner_address: owner,
      contract_address: usdt,
      function_selector: 'balanceOf(address)',
      parameter: word,
    });
    expect(view).toMatchObject({
      result: { result: true },
      constant_result: [chain.parameters.payerUsdt.toString(16).padStart(64, '0')],
    });
    const transfer = await post('/wallet/triggersmartcontract', {
      owner_address: owner,
      contract_address: usdt,
      function_selector: 'transfer(address,uint256)',
      parameter: `${word}${'0'.repeat(63)}1`,
      fee_limit: 50_000_000,
    });
    expect(transfer).toMatchObject({
      result: { result: true },
      transaction: {
        visible: false,
        raw_data: { fee_limit: 50_000_000, contract: [{ type: 'TriggerSmartContract' }] },
      },
    });
    expect(transfer['transaction']).not.toHaveProperty('signature');
    expect(transfer).not.toHaveProperty('constant_result');
  });
});

describe('reads a wallet makes', () => {
  it('{} for an unknown block id, account or contract; walletsolidity sees only solidified blocks', async () => {
    const { chain } = await start();
    expect(await post('/wallet/getblockbyid', { value: 'ab'.repeat(32) })).toEqual({});
    expect(await post('/wallet/getaccountnet', { address: tronAddressToHex(newcomer) })).toEqual({});
    expect(await post('/wallet/getcontract', { value: tronAddressToHex(newcomer) })).toEqual({});
    expect(await post('/wallet/getblockbyid', { value: chain.head.id })).toMatchObject({ blockID: chain.head.id });
    expect(await post('/walletsolidity/getblockbyid', { value: chain.head.id })).toEqual({});
    expect(await post('/walletsolidity/getblockbyid', { value: chain.solidBlock.id })).toMatchObject({
      blockID: chain.solidBlock.id,
    });
    expect(await post('/walletsolidity/getblock', {})).toMatchObject({ blockID: chain.solidBlock.id });
  });

  it('walletsolidity has no getaccountnet, getaccountresource, getcontract or getchainparameters (as HttpApiOnSolidityService)', async () => {
    await start();
    for (const path of [
      'getaccountnet',
      'getaccountresource',
      'getcontract',
      'getchainparameters',
      'triggersmartcontract',
      'createtransaction',
    ])
      expect((await request(`/walletsolidity/${path}`, {})).status).toBe(404);
  });

  it('a GET query is read as the body (java-tron doGet): getcontract and getblockbynum', async () => {
    const { chain } = await start();
    const contract = await request(
      `/wallet/getcontract?value=${tronAddressToHex(chain.parameters.usdtContract)}`,
      undefined,
      'GET',
    );
    expect(JSON.parse(contract.body)).toMatchObject({ name: 'TetherToken', abi: { entrys: expect.any(Array) } });
    const block = await request('/wallet/getblockbynum?num=3', undefined, 'GET');
    expect(JSON.parse(block.body)).toMatchObject({ blockID: chain.block(3)!.id });
  });

  it('getaccountnet shows the free bandwidth a transfer used', async () => {
    const { chain } = await start();
    const payer = chain.payers[2]!.address;
    expect(await post('/wallet/getaccountnet', { address: tronAddressToHex(payer) })).toEqual({
      freeNetLimit: 600,
      TotalNetLimit: 43_200_000_000,
      TotalNetWeight: 26_000_000_000,
    });
    chain.sendUsdt({ from: payer, to: newcomer, amount: 1n });
    chain.produceBlocks(1);
    const used = chain.state.freeBandwidthUsed(chain.state.account(payer)!, chain.nowMs);
    expect(used).toBeGreaterThan(0);
    expect(await post('/wallet/getaccountnet', { address: tronAddressToHex(payer) })).toMatchObject({
      freeNetUsed: used,
      freeNetLimit: 600,
    });
  });
});

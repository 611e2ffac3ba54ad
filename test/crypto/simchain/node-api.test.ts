// The simulated chain over HTTP answers in a java-tron full node's shapes
// (docs/tron.md §1.8): empty answers, solidity views, constant calls, broadcasts.
import { bytesToHex, hexToBytes } from '@noble/hashes/utils.js';
import { afterEach, describe, expect, it } from 'vitest';
import { startSimulatedChainServer, type SimulatedChainServer } from '../../../src/crypto/simchain/chain-server.ts';
import { tronAddressToHex } from '../../../src/crypto/tron/address.ts';
import { decodeSignedTransaction, transactionJson } from '../../../src/crypto/tron/transaction.ts';
import { addressWord } from '../../../src/crypto/tron/trc20-usdt.ts';
import { signedTransfer, testKey } from './fixtures/transfers.ts';

let server: SimulatedChainServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function start() {
  server = await startSimulatedChainServer({ seed: 'node api', host: '127.0.0.1', port: 0 });
  return server;
}

async function post(path: string, body: object = {}): Promise<unknown> {
  const response = await fetch(`${server!.url}${path}`, {
    method: 'POST',
    body: JSON.stringify(body),
    headers: { 'content-type': 'application/json' },
  });
  expect(response.status).toBe(200);
  return response.json();
}

const stranger = testKey('stranger');

describe('empty answers, as java-tron gives them', () => {
  it('{} for an unknown account, transaction, or a block not produced; [] for an empty block; {} for block 0 results', async () => {
    const { chain } = await start();
    chain.produceBlocks(2);
    expect(await post('/wallet/getaccount', { address: tronAddressToHex(stranger.address) })).toEqual({});
    expect(await post('/wallet/getaccountresource', { address: tronAddressToHex(stranger.address) })).toEqual({});
    expect(await post('/wallet/gettransactioninfobyid', { value: 'ab'.repeat(32) })).toEqual({});
    expect(await post('/wallet/gettransactionbyid', { value: 'ab'.repeat(32) })).toEqual({});
    expect(await post('/wallet/getblockbynum', { num: 3 })).toEqual({});
    expect(await post('/wallet/gettransactioninfobyblocknum', { num: 2 })).toEqual([]);
    expect(await post('/wallet/gettransactioninfobyblocknum', { num: 0 })).toEqual({});
  });

  it('an empty block has no transactions field; the genesis block leaves its zero number out', async () => {
    await start();
    const genesis = (await post('/wallet/getblockbynum', { num: 0 })) as {
      blockID: string;
      block_header: { raw_data: Record<string, unknown> };
      transactions?: unknown;
    };
    expect(genesis.blockID).toMatch(/^0{16}[0-9a-f]{48}$/);
    expect(genesis.block_header.raw_data).not.toHaveProperty('number');
    expect(genesis).not.toHaveProperty('transactions');
  });

  it('an unknown path is 404; a body that is not JSON is HTTP 200 with Error', async () => {
    await start();
    expect((await fetch(`${server!.url}/wallet/nosuchthing`, { method: 'POST', body: '{}' })).status).toBe(404);
    const broken = await fetch(`${server!.url}/wallet/getaccount`, { method: 'POST', body: '{"address":' });
    expect(broken.status).toBe(200);
    expect(await broken.json()).toHaveProperty('Error');
  });
});

describe('a transfer as the node shows it', () => {
  it('block, transaction info with receipt and log, account, balanceOf; int64 written as JSON integers', async () => {
    const { chain } = await start();
    chain.produceBlocks(1);
    const sent = chain.sendUsdt({ to: stranger.address, amount: 12_345_678n });
    chain.produceBlocks(1);
    const txId = sent.transaction.txId;
    const block = (await post('/wallet/getblockbynum', { num: 2 })) as { transactions: Record<string, unknown>[] };
    // java-tron's printTransactionToJSON: raw_data_hex and txID added, no `visible` (Util.java).
    const { visible: _visible, ...printed } = transactionJson(sent.transaction);
    expect(block.transactions).toEqual([{ ret: [{ contractRet: 'SUCCESS' }], ...printed }]);
    const info = (await post('/wallet/gettransactioninfobyid', { value: txId })) as Record<string, unknown>;
    expect(info).toMatchObject({
      id: txId,
      fee: 13_028_500,
      blockNumber: 2,
      blockTimeStamp: chain.block(2)!.timestampMs,
      contractResult: ['0'.repeat(63) + '1'],
      contract_address: tronAddressToHex(chain.parameters.usdtContract),
      receipt: {
        energy_fee: 13_028_500,
        energy_usage_total: 130_285,
        net_usage: sent.transaction.bytes.length + 64,
        result: 'SUCCESS',
      },
      log: [{ address: 'a614f803b6fd780986a42c78ec9c7f77e6ded13c', data: 12_345_678n.toString(16).padStart(64, '0') }],
    });
    expect(info).not.toHaveProperty('result');
    expect(await post('/wallet/gettransactioninfobyblocknum', { num: 2 })).toEqual([info]);

    const payer = chain.payers[0]!.address;
    const account = (await post('/wallet/getaccount', { address: tronAddressToHex(payer) })) as Record<string, unknown>;
    expect(account).toMatchObject({
      address: tronAddressToHex(payer),
      balance: Number(chain.parameters.payerTrxSun - 13_028_500n),
    });
    const text = await (
      await fetch(`${server!.url}/wallet/getaccount`, {
        method: 'POST',
        body: JSON.stringify({ address: payer, visible: true }),
      })
    ).text();
    expect(text).toContain(`"balance":${chain.parameters.payerTrxSun - 13_028_500n},`);

    const balance = (await post('/wallet/triggerconstantcontract', {
      owner_address: tronAddressToHex(payer),
      contract_address: tronAddressToHex(chain.parameters.usdtContract),
      function_selector: 'balanceOf(address)',
      parameter: bytesToHex(addressWord(stranger.address)),
    })) as { result: { result: boolean }; constant_result: string[] };
    expect(balance.result.result).toBe(true);
    expect(BigInt(`0x${balance.constant_result[0]}`)).toBe(12_345_678n);
  });

  it('a failed transfer: result FAILED, receipt.result REVERT, resMessage in hex, no log', async () => {
    const { chain } = await start();
    chain.setPaused(true);
    const sent = chain.sendUsdt({ to: stranger.address, amount: 1n });
    chain.produceBlocks(1);
    const info = (await post('/wallet/gettransactioninfobyid', { value: sent.transaction.txId })) as Record<
      string,
      unknown
    >;
    expect(info).toMatchObject({
      result: 'FAILED',
      receipt: { result: 'REVERT' },
      resMessage: Buffer.from('REVERT opcode executed').toString('hex'),
    });
    expect(info).not.toHaveProperty('log');
    const block = (await post('/wallet/getblockbynum', { num: 1 })) as { transactions: { ret: unknown }[] };
    expect(block.transactions[0]!.ret).toEqual([{ contractRet: 'REVERT' }]);
  });

  it('estimateenergy and triggerconstantcontract of transfer answer the energy by recipient', async () => {
    const { chain } = await start();
    const payer = chain.payers[0]!.address;
    const body = (to: typeof payer) => ({
      owner_address: tronAddressToHex(payer),
      contract_address: tronAddressToHex(chain.parameters.usdtContract),
      function_selector: 'transfer(address,uint256)',
      parameter: bytesToHex(addressWord(to)) + 1n.toString(16).padStart(64, '0'),
    });
    expect(await post('/wallet/estimateenergy', body(stranger.address))).toEqual({
      result: { result: true },
      energy_required: 130_285,
    });
    expect(await post('/wallet/triggerconstantcontract', body(chain.payers[1]!.address))).toMatchObject({
      energy_used: 64_285,
    });
  });
});

describe('solidity views', () => {
  it('/walletsolidity answers a transaction only once its block is head − 18 or older', async () => {
    const { chain } = await start();
    const sent = chain.sendUsdt({ to: stranger.address, amount: 1_000_000n });
    chain.produceBlocks(1);
    const blockNumber = chain.findTransaction(sent.transaction.txId)!.block.number;
    chain.produceBlocks(17);
    expect(chain.head.number).toBe(blockNumber + 17);
    expect(await post('/walletsolidity/gettransactioninfobyid', { value: sent.transaction.txId })).toEqual({});
    expect(await post('/walletsolidity/getblockbynum', { num: blockNumber })).toEqual({});
    expect(await post('/wallet/gettransactioninfobyid', { value: sent.transaction.txId })).toHaveProperty(
      'id',
      sent.transaction.txId,
    );
    chain.produceBlocks(1);
    expect(await post('/walletsolidity/gettransactioninfobyid', { value: sent.transaction.txId })).toHaveProperty(
      'id',
      sent.transaction.txId,
    );
    const solid = (await post('/walletsolidity/getnowblock')) as { blockID: string };
    expect(solid.blockID).toBe(chain.block(blockNumber)!.id);
  });
});

describe('broadcast', () => {
  it('broadcasthex answers as BroadcastHexServlet: every field, the message as text, the transaction as a JSON string', async () => {
    const { chain } = await start();
    const sent = chain.sendUsdt({ to: stranger.address, amount: 1n });
    const hex = bytesToHex(sent.transaction.bytes);
    chain.produceBlocks(1);
    const answer = await post('/wallet/broadcasthex', { transaction: hex });
    expect(answer).toEqual({
      result: false,
      code: 'DUP_TRANSACTION_ERROR',
      txid: sent.transaction.txId,
      message: 'Dup trans',
      transaction: expect.any(String),
    });
    const { raw_data_hex: _hex, txID: _id, visible: _visible, ...printed } = transactionJson(sent.transaction);
    const printedTransaction = JSON.parse((answer as { transaction: string }).transaction) as Record<string, unknown>;
    expect(printedTransaction).toEqual({
      raw_data: {
        ...printed.raw_data,
        contract: [
          {
            type: 'TriggerSmartContract',
            parameter: {
              type_url: 'type.googleapis.com/protocol.TriggerSmartContract',
              value: expect.stringMatching(/^0a1541[0-9a-f]+$/),
            },
          },
        ],
      },
      signature: printed.signature,
    });
    const fresh = chain.payers[1]!;
    const other = chain.sendUsdt({
      from: fresh.address,
      to: stranger.address,
      amount: 2n,
      expirationMs: chain.head.timestampMs + 120_000,
    });
    expect(other.result).toBe(true);
  });

  it('broadcasttransaction re-encodes the JSON raw_data: exact JSON is accepted, altered JSON fails the signature', async () => {
    const { chain } = await start();
    // Built and signed, not yet broadcast.
    const built = signedTransfer(chain, chain.payers[0]!, { to: stranger.address, amount: 3n });
    const decoded = decodeSignedTransaction(hexToBytes(built.hex));
    if (!decoded.ok) throw new Error(decoded.problem);
    const signed = decoded.transaction;
    const json = transactionJson(signed);
    const altered = { ...json, raw_data: { ...json.raw_data, fee_limit: 99 } };
    expect(
      await post('/wallet/broadcasttransaction', { ...altered, signature: [bytesToHex(signed.signatures[0]!)] }),
    ).toMatchObject({ result: false, code: 'SIGERROR' });
    expect(
      await post('/wallet/broadcasttransaction', { ...json, signature: [bytesToHex(signed.signatures[0]!)] }),
    ).toEqual({ result: true, txid: signed.txId });
    chain.produceBlocks(1);
    expect(chain.findTransaction(signed.txId)?.transaction.receipt.result).toBe('SUCCESS');
  });
});

// Missing, future and unkept data, endpoint by endpoint, as java-tron answers it
// (framework/src/main/java/org/tron/core/services/http/*Servlet.java, Wallet.java).
describe('missing, not yet solidified and unkept data, as java-tron answers it', () => {
  /** A chain with one USDT transfer in block `landed`, solidified only once 18 more blocks exist. */
  async function withTransfer() {
    const { chain } = await start();
    const sent = chain.sendUsdt({ to: stranger.address, amount: 1_000_000n });
    chain.produceBlocks(1);
    return { chain, txId: sent.transaction.txId, landed: chain.findTransaction(sent.transaction.txId)!.block.number };
  }

  it('GetBlockByNumServlet: `{}` for a block not produced yet, and on /walletsolidity for one not solidified yet', async () => {
    const { chain, landed } = await withTransfer();
    expect(await post('/wallet/getblockbynum', { num: chain.head.number + 1 })).toEqual({});
    expect(await post('/walletsolidity/getblockbynum', { num: landed })).toEqual({});
    expect(await post('/wallet/getblockbynum', { num: landed })).toHaveProperty('transactions');
  });

  it('GetTransactionInfoByBlockNumServlet: `{}` only for num ≤ 0; `[]` for a block not produced (or not solidified) yet, exactly as for an empty block', async () => {
    const { chain, landed } = await withTransfer();
    expect(await post('/wallet/gettransactioninfobyblocknum', { num: 0 })).toEqual({});
    expect(await post('/wallet/gettransactioninfobyblocknum', { num: chain.head.number + 5 })).toEqual([]);
    expect(await post('/walletsolidity/gettransactioninfobyblocknum', { num: landed })).toEqual([]);
    expect(await post('/wallet/gettransactioninfobyblocknum', { num: landed })).toHaveLength(1);
  });

  it('GetTransactionInfoByIdServlet: `{}` for a transaction not on chain, and on /walletsolidity for one not solidified yet', async () => {
    const { txId } = await withTransfer();
    expect(await post('/wallet/gettransactioninfobyid', { value: 'cd'.repeat(32) })).toEqual({});
    expect(await post('/walletsolidity/gettransactioninfobyid', { value: txId })).toEqual({});
  });

  it('history off (storage.transHistory.switch): the stores keep no results, so results by id are `{}` and by block `[]`; blocks and transactions are still served', async () => {
    const { chain, txId, landed } = await withTransfer();
    chain.produceBlocks(chain.parameters.solidityDepth);
    const node = server!.node('history-off');
    node.faults.set({ historyOff: true });
    const ask = async (path: string, body: object) =>
      (await fetch(`${node.url}${path}`, { method: 'POST', body: JSON.stringify(body) })).json();
    for (const prefix of ['/wallet', '/walletsolidity']) {
      expect(await ask(`${prefix}/gettransactioninfobyid`, { value: txId })).toEqual({});
      expect(await ask(`${prefix}/gettransactioninfobyblocknum`, { num: landed })).toEqual([]);
      expect(await ask(`${prefix}/getblockbynum`, { num: landed })).toHaveProperty('transactions');
      expect(await ask(`${prefix}/gettransactionbyid`, { value: txId })).toHaveProperty('txID', txId);
    }
    // The chain's own node still keeps them.
    expect(await post('/walletsolidity/gettransactioninfobyid', { value: txId })).toHaveProperty('id', txId);
  });

  it('a lagging node answers as if its head were N blocks back, on every path or only on the paths named', async () => {
    const { chain, landed } = await withTransfer();
    chain.produceBlocks(30);
    const node = server!.node('lagging');
    node.faults.set({ lagBlocks: 25 });
    const ask = async (path: string, body: object = {}) =>
      (await fetch(`${node.url}${path}`, { method: 'POST', body: JSON.stringify(body) })).json();
    expect(
      ((await ask('/wallet/getnowblock')) as { block_header: { raw_data: { number: number } } }).block_header.raw_data
        .number,
    ).toBe(chain.head.number - 25);
    expect(await ask('/walletsolidity/getblockbynum', { num: landed })).toEqual({});
    expect(await ask('/walletsolidity/gettransactioninfobyblocknum', { num: landed })).toEqual([]);
    node.faults.set({ lagPaths: ['/walletsolidity/getblockbynum'] });
    expect(
      ((await ask('/wallet/getnowblock')) as { block_header: { raw_data: { number: number } } }).block_header.raw_data
        .number,
    ).toBe(chain.head.number);
    expect(await ask('/walletsolidity/getblockbynum', { num: landed })).toEqual({});
    expect(await ask('/walletsolidity/gettransactioninfobyblocknum', { num: landed })).toHaveLength(1);
  });

  it('a node that hides transactions shows their blocks without them, `[]` results and `{}` by id (a liar only a second node exposes)', async () => {
    const { chain, txId, landed } = await withTransfer();
    chain.produceBlocks(chain.parameters.solidityDepth);
    const node = server!.node('liar');
    node.faults.set({ hideTransactions: true });
    const ask = async (path: string, body: object) =>
      (await fetch(`${node.url}${path}`, { method: 'POST', body: JSON.stringify(body) })).json();
    expect(await ask('/walletsolidity/getblockbynum', { num: landed })).not.toHaveProperty('transactions');
    expect(await ask('/walletsolidity/gettransactioninfobyblocknum', { num: landed })).toEqual([]);
    expect(await ask('/walletsolidity/gettransactioninfobyid', { value: txId })).toEqual({});
    expect(await post('/walletsolidity/getblockbynum', { num: landed })).toHaveProperty('transactions');
  });
});

// The simulated chain driven by tronweb 6 alone, as a wallet drives a java-tron
// node: node info and chain parameters, TRX sent (tronweb-built and node-built,
// to a new account: the activation is paid), USDT read and sent (the contract
// loaded by getcontract, balanceOf by triggerconstantcontract, transfer built by
// triggersmartcontract, signed, sent by broadcasttransaction and broadcasthex),
// receipts, blocks, account resources, energy estimates. Every tronweb call and
// every node path it requested is recorded: none may fail.
import { bytesToHex } from '@noble/hashes/utils.js';
import { providers, TronWeb, utils as tronwebUtils, type Contract, type Types } from 'tronweb';
import { afterEach, describe, expect, it } from 'vitest';
import { startSimulatedChainServer, type SimulatedChainServer } from '../../../src/crypto/simchain/chain-server.ts';
import { testKey } from './fixtures/transfers.ts';

const TRX = 1_000_000;

let server: SimulatedChainServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** A tronweb wallet on the simulated node, recording each call's outcome and each HTTP path it requested. */
async function wallet() {
  server = await startSimulatedChainServer({ seed: 'tronweb wallet' });
  const { chain } = server;
  chain.produceBlocks(25);
  const payer = chain.payers[0]!;
  const paths: string[] = [];
  const httpFailures: string[] = [];
  const node = new RecordingProvider(server.url, (path, outcome) => {
    paths.push(path);
    if (outcome.failed) httpFailures.push(`${path}: ${outcome.failed}`);
  });
  const tronWeb = new TronWeb({ fullNode: node, solidityNode: node, privateKey: bytesToHex(payer.privateKey) });
  const calls: { readonly name: string; readonly ok: boolean; readonly error?: string }[] = [];
  async function call<T>(name: string, work: () => Promise<T>): Promise<T> {
    try {
      const value = await work();
      calls.push({ name, ok: true });
      return value;
    } catch (error) {
      calls.push({ name, ok: false, error: String(error) });
      throw error;
    }
  }
  /** Includes what was sent, then solidifies it (walletsolidity reads see it). */
  const confirm = () => chain.produceBlocks(1 + chain.parameters.solidityDepth);
  return { chain, payer, tronWeb, paths, httpFailures, calls, call, confirm };
}

/** tronweb's own HTTP provider, telling each node path it requested and whether the answer was a failure. */
class RecordingProvider extends providers.HttpProvider {
  readonly #record: (path: string, outcome: { readonly failed?: string }) => void;

  constructor(url: string, record: (path: string, outcome: { readonly failed?: string }) => void) {
    super(url);
    this.#record = record;
  }

  override async request<T = unknown>(
    url: string,
    payload?: object,
    method?: Parameters<InstanceType<typeof providers.HttpProvider>['request']>[2],
  ): Promise<T> {
    const path = `/${url.replace(/^\//, '')}`;
    try {
      const data = await super.request<T>(url, payload, method);
      // java-tron reports a refused request as HTTP 200 with an `Error` field.
      const refused = typeof data === 'object' && data !== null && 'Error' in data;
      this.#record(path, refused ? { failed: JSON.stringify(data) } : {});
      return data;
    } catch (error) {
      this.#record(path, { failed: String(error) });
      throw error;
    }
  }
}

/** The signed Transaction protobuf in hex, from tronweb's own protobuf classes (what sendHexTransaction takes). */
function signedHex(signed: Types.SignedTransaction): string {
  const pb = tronwebUtils.transaction.txJsonToPb(signed);
  for (const signature of signed.signature)
    pb.addSignature(Uint8Array.from(tronwebUtils.code.hexStr2byteArray(signature)));
  return bytesToHex(pb.serializeBinary());
}

describe('a tronweb wallet against the simulated chain', () => {
  it('reads the node, sends TRX and USDT, reads receipts, blocks and resources, with no call failing', async () => {
    const { chain, payer, tronWeb, paths, httpFailures, calls, call, confirm } = await wallet();
    const usdt = chain.parameters.usdtContract;
    const fresh = testKey('tronweb fresh account').address;
    const holder = testKey('tronweb usdt holder').address;

    // ---- the node ----
    const nodeInfo = await call('trx.getNodeInfo', () => tronWeb.trx.getNodeInfo());
    expect(nodeInfo.configNodeInfo.codeVersion).toBe('4.8.0');
    expect(nodeInfo.block).toBe(`Num:${chain.head.number},ID:${chain.head.id}`);
    await call('getFullnodeVersion', () => tronWeb.getFullnodeVersion());
    expect(tronWeb.fullnodeVersion).toBe('4.8.0');
    const parameters = await call('trx.getChainParameters', () => tronWeb.trx.getChainParameters());
    expect(parameters.find((parameter) => parameter.key === 'getEnergyFee')?.value).toBe(100);
    expect(await call('trx.getEnergyPrices', () => tronWeb.trx.getEnergyPrices())).toBe('0:100');
    expect(await call('trx.getBandwidthPrices', () => tronWeb.trx.getBandwidthPrices())).toBe('0:1000');

    // ---- TRX to a new account, built by tronweb: 1 TRX activation + 0.1 TRX creation bandwidth ----
    const payerBefore = await call('trx.getBalance', () => tronWeb.trx.getBalance(payer.address));
    expect(BigInt(payerBefore)).toBe(chain.state.account(payer.address)!.balanceSun);
    expect(await call('trx.getBalance (new account)', () => tronWeb.trx.getBalance(fresh))).toBe(0);
    const trxTx = await call('transactionBuilder.sendTrx', () =>
      tronWeb.transactionBuilder.sendTrx(fresh, 5 * TRX, payer.address),
    );
    const trxSigned = await call('trx.sign', () => tronWeb.trx.sign(trxTx));
    const trxSent = await call('trx.sendRawTransaction (TRX)', () => tronWeb.trx.sendRawTransaction(trxSigned));
    expect(trxSent).toMatchObject({ result: true, txid: trxTx.txID });
    confirm();
    const trxInfo = await call('trx.getTransactionInfo (TRX)', () => tronWeb.trx.getTransactionInfo(trxTx.txID));
    expect(trxInfo).toMatchObject({ id: trxTx.txID, fee: 1_100_000, receipt: { net_fee: 100_000 } });
    expect(await call('trx.getBalance (activated)', () => tronWeb.trx.getBalance(fresh))).toBe(5 * TRX);
    expect(await call('trx.getBalance (payer after)', () => tronWeb.trx.getBalance(payer.address))).toBe(
      payerBefore - 5 * TRX - 1_100_000,
    );
    const activated = await call('trx.getAccount', () => tronWeb.trx.getAccount(fresh));
    expect(activated.create_time).toBeGreaterThan(0);

    // ---- TRX built by the node (createtransaction), sent as hex (broadcasthex) ----
    const nodeBuilt = await call('wallet/createtransaction', () =>
      tronWeb.fullNode.request<Types.Transaction>(
        'wallet/createtransaction',
        { owner_address: tronWeb.address.toHex(payer.address), to_address: tronWeb.address.toHex(fresh), amount: TRX },
        'post',
      ),
    );
    const nodeBuiltSigned = await call('trx.sign (node-built TRX)', () => tronWeb.trx.sign(nodeBuilt));
    const hexSent = await call('trx.sendHexTransaction (TRX)', () =>
      tronWeb.trx.sendHexTransaction(signedHex(nodeBuiltSigned)),
    );
    expect(hexSent).toMatchObject({ result: true, code: 'SUCCESS', txid: nodeBuilt.txID });
    // The node prints bytes in lower-case hex; tronweb writes v in upper case.
    expect(hexSent.transaction).toMatchObject({
      signature: nodeBuiltSigned.signature.map((signature) => signature.toLowerCase()),
    });
    confirm();
    expect(await call('trx.getBalance (second TRX)', () => tronWeb.trx.getBalance(fresh))).toBe(6 * TRX);

    // ---- USDT: the contract, balances, an energy estimate ----
    const token = await call<Contract>('contract().at', () => tronWeb.contract().at(usdt));
    const payerUsdt = await call('contract.balanceOf.call', () => token.balanceOf(payer.address).call());
    expect(BigInt(String(payerUsdt))).toBe(chain.parameters.payerUsdt);
    const decimals = await call('contract.decimals.call', () => token.decimals().call());
    expect(Number(decimals)).toBe(6);
    const transferParams = [
      { type: 'address', value: holder },
      { type: 'uint256', value: 25_000_000 },
    ];
    const estimate = await call('transactionBuilder.estimateEnergy', () =>
      tronWeb.transactionBuilder.estimateEnergy(usdt, 'transfer(address,uint256)', {}, transferParams, payer.address),
    );
    expect(estimate.energy_required).toBe(chain.parameters.transferEnergyNewHolder);
    const dryRun = await call('transactionBuilder.triggerConstantContract', () =>
      tronWeb.transactionBuilder.triggerConstantContract(
        usdt,
        'transfer(address,uint256)',
        {},
        transferParams,
        payer.address,
      ),
    );
    expect(dryRun.energy_used).toBe(chain.parameters.transferEnergyNewHolder);

    // ---- USDT sent: built by the node (triggersmartcontract), signed, broadcast as JSON ----
    const built = await call('transactionBuilder.triggerSmartContract', () =>
      tronWeb.transactionBuilder.triggerSmartContract(
        usdt,
        'transfer(address,uint256)',
        { feeLimit: 100 * TRX },
        transferParams,
        payer.address,
      ),
    );
    expect(built.result.result).toBe(true);
    expect(built.transaction.raw_data_hex).toMatch(/^[0-9a-f]+$/);
    const usdtSigned = await call('trx.sign (USDT)', () => tronWeb.trx.sign(built.transaction));
    const usdtSent = await call('trx.sendRawTransaction (USDT)', () => tronWeb.trx.sendRawTransaction(usdtSigned));
    expect(usdtSent).toMatchObject({ result: true, txid: built.transaction.txID });
    confirm();
    const usdtInfo = await call('trx.getTransactionInfo (USDT)', () =>
      tronWeb.trx.getTransactionInfo(built.transaction.txID),
    );
    expect(usdtInfo.receipt).toMatchObject({
      result: 'SUCCESS',
      energy_usage_total: chain.parameters.transferEnergyNewHolder,
      energy_fee: chain.parameters.transferEnergyNewHolder * 100,
    });
    expect(usdtInfo.log).toHaveLength(1);
    const holderUsdt = await call('contract.balanceOf.call (recipient)', () => token.balanceOf(holder).call());
    expect(BigInt(String(holderUsdt))).toBe(25_000_000n);

    // ---- USDT through the contract object (triggersmartcontract + sign + broadcasttransaction) ----
    const sentTxId = await call('contract.transfer.send', () =>
      token.transfer(holder, 5_000_000).send({ feeLimit: 100 * TRX }),
    );
    // ---- and a USDT transfer sent as hex (broadcasthex) ----
    const hexBuilt = await call('transactionBuilder.triggerSmartContract (for hex)', () =>
      tronWeb.transactionBuilder.triggerSmartContract(
        usdt,
        'transfer(address,uint256)',
        { feeLimit: 100 * TRX },
        [
          { type: 'address', value: fresh },
          { type: 'uint256', value: 1_000_000 },
        ],
        payer.address,
      ),
    );
    const hexSigned = await call('trx.sign (USDT for hex)', () => tronWeb.trx.sign(hexBuilt.transaction));
    const usdtHexSent = await call('trx.sendHexTransaction (USDT)', () =>
      tronWeb.trx.sendHexTransaction(signedHex(hexSigned)),
    );
    expect(usdtHexSent).toMatchObject({ result: true, txid: hexBuilt.transaction.txID });
    confirm();
    const sentInfo = await call('trx.getTransactionInfo (contract send)', () =>
      tronWeb.trx.getTransactionInfo(String(sentTxId)),
    );
    // The recipient already held USDT: the cheaper transfer.
    expect(sentInfo.receipt).toMatchObject({
      result: 'SUCCESS',
      energy_usage_total: chain.parameters.transferEnergyExistingHolder,
    });
    const holderAfter = await call('contract.balanceOf.call (after)', () => token.balanceOf(holder).call());
    expect(BigInt(String(holderAfter))).toBe(30_000_000n);
    const freshUsdt = await call('contract.balanceOf.call (hex)', () => token.balanceOf(fresh).call());
    expect(BigInt(String(freshUsdt))).toBe(1_000_000n);

    // ---- transactions and blocks ----
    const found = await call('trx.getTransaction', () => tronWeb.trx.getTransaction(built.transaction.txID));
    expect(found.ret?.[0]?.contractRet).toBe('SUCCESS');
    await call('trx.getConfirmedTransaction', () => tronWeb.trx.getConfirmedTransaction(trxTx.txID));
    await call('trx.getUnconfirmedTransactionInfo', () =>
      tronWeb.trx.getUnconfirmedTransactionInfo(built.transaction.txID),
    );
    const included = chain.findTransaction(built.transaction.txID)!.block;
    const byNumber = await call('trx.getBlock(number)', () => tronWeb.trx.getBlock(included.number));
    expect(byNumber.blockID).toBe(included.id);
    const byHash = await call('trx.getBlockByHash', () => tronWeb.trx.getBlockByHash(included.id));
    expect(byHash.block_header.raw_data.number).toBe(included.number);
    const latest = await call('trx.getCurrentBlock', () => tronWeb.trx.getCurrentBlock());
    expect(latest.blockID).toBe(chain.head.id);
    const confirmed = await call('trx.getConfirmedCurrentBlock', () => tronWeb.trx.getConfirmedCurrentBlock());
    expect(confirmed.blockID).toBe(chain.solidBlock.id);
    await call('trx.getBlock(latest)', () => tronWeb.trx.getBlock('latest'));

    // ---- accounts, resources, contract ----
    expect(await call('trx.getUnconfirmedBalance', () => tronWeb.trx.getUnconfirmedBalance(fresh))).toBe(6 * TRX);
    await call('trx.getUnconfirmedAccount', () => tronWeb.trx.getUnconfirmedAccount(fresh));
    const bandwidth = await call('trx.getBandwidth', () => tronWeb.trx.getBandwidth(payer.address));
    expect(bandwidth).toBe(600 - chain.state.freeBandwidthUsed(chain.state.account(payer.address)!, chain.nowMs));
    const resources = await call('trx.getAccountResources', () => tronWeb.trx.getAccountResources(fresh));
    expect(resources).toMatchObject({ freeNetLimit: 600 });
    const contract = await call('trx.getContract', () => tronWeb.trx.getContract(usdt));
    expect(contract).toMatchObject({
      name: 'TetherToken',
      contract_address: tronWeb.address.toHex(usdt).toLowerCase(),
    });
    await call('trx.getContractInfo', () => tronWeb.trx.getContractInfo(usdt));

    const failures = calls.filter((made) => !made.ok);
    expect(failures).toEqual([]);
    expect(httpFailures).toEqual([]);
    // The 49 wallet calls made, in order, every one of them answered.
    expect(calls.map((made) => made.name)).toEqual([
      'trx.getNodeInfo',
      'getFullnodeVersion',
      'trx.getChainParameters',
      'trx.getEnergyPrices',
      'trx.getBandwidthPrices',
      'trx.getBalance',
      'trx.getBalance (new account)',
      'transactionBuilder.sendTrx',
      'trx.sign',
      'trx.sendRawTransaction (TRX)',
      'trx.getTransactionInfo (TRX)',
      'trx.getBalance (activated)',
      'trx.getBalance (payer after)',
      'trx.getAccount',
      'wallet/createtransaction',
      'trx.sign (node-built TRX)',
      'trx.sendHexTransaction (TRX)',
      'trx.getBalance (second TRX)',
      'contract().at',
      'contract.balanceOf.call',
      'contract.decimals.call',
      'transactionBuilder.estimateEnergy',
      'transactionBuilder.triggerConstantContract',
      'transactionBuilder.triggerSmartContract',
      'trx.sign (USDT)',
      'trx.sendRawTransaction (USDT)',
      'trx.getTransactionInfo (USDT)',
      'contract.balanceOf.call (recipient)',
      'contract.transfer.send',
      'transactionBuilder.triggerSmartContract (for hex)',
      'trx.sign (USDT for hex)',
      'trx.sendHexTransaction (USDT)',
      'trx.getTransactionInfo (contract send)',
      'contract.balanceOf.call (after)',
      'contract.balanceOf.call (hex)',
      'trx.getTransaction',
      'trx.getConfirmedTransaction',
      'trx.getUnconfirmedTransactionInfo',
      'trx.getBlock(number)',
      'trx.getBlockByHash',
      'trx.getCurrentBlock',
      'trx.getConfirmedCurrentBlock',
      'trx.getBlock(latest)',
      'trx.getUnconfirmedBalance',
      'trx.getUnconfirmedAccount',
      'trx.getBandwidth',
      'trx.getAccountResources',
      'trx.getContract',
      'trx.getContractInfo',
    ]);
    expect([...new Set(paths)].sort()).toEqual([
      '/wallet/broadcasthex',
      '/wallet/broadcasttransaction',
      '/wallet/createtransaction',
      '/wallet/estimateenergy',
      '/wallet/getaccount',
      '/wallet/getaccountnet',
      '/wallet/getaccountresource',
      '/wallet/getbandwidthprices',
      '/wallet/getblock',
      '/wallet/getblockbyid',
      '/wallet/getblockbynum',
      '/wallet/getchainparameters',
      '/wallet/getcontract',
      '/wallet/getcontractinfo',
      '/wallet/getenergyprices',
      '/wallet/getnodeinfo',
      '/wallet/getnowblock',
      '/wallet/gettransactionbyid',
      '/wallet/gettransactioninfobyid',
      '/wallet/triggerconstantcontract',
      '/wallet/triggersmartcontract',
      '/walletsolidity/getaccount',
      '/walletsolidity/getnowblock',
      '/walletsolidity/gettransactionbyid',
      '/walletsolidity/gettransactioninfobyid',
    ]);
  });
});

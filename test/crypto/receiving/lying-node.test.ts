// The chain watcher reading through a node that lies: a relay in front of the
// simulated chain rewrites its answers (the amount, recipient or emitter of a
// Transfer log, a transaction's status, `[]`/`{}` for data it has), alone or
// beside honest nodes. Whatever it says, nothing is credited that the chain
// did not do: the block's signed transaction refutes a rewritten log
// (tron/signed-calls.ts), and with two or more nodes a credit needs two that
// agree (deposit-confirmation.ts). A transfer no signed calldata states (made
// inside another contract) is credited only when two nodes confirm it, and is
// otherwise held as `unconfirmed`.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { bytesToHex } from '@noble/hashes/utils.js';
import { createInvoice, getInvoice } from '../../../src/crypto/receiving/invoice-service.ts';
import { releaseUnconfirmedDeposit } from '../../../src/crypto/receiving/deposit-settlement.ts';
import { depositsOfInvoice, unconfirmedDeposits } from '../../../src/crypto/receiving/receiving-repository.ts';
import { inTransaction } from '../../../src/db/transaction.ts';
import { logAddressHex } from '../../../src/crypto/simchain/usdt-execution.ts';
import { tronAddress, type TronAddress } from '../../../src/crypto/tron/address.ts';
import { createTronNodeClient, type TronNodeClient } from '../../../src/crypto/tron/node-client.ts';
import { signTriggerSmartContract } from '../../../src/crypto/tron/signing.ts';
import { decodeTriggerSmartContractRaw } from '../../../src/crypto/tron/transaction.ts';
import {
  addressWord,
  TRANSFER_EVENT_TOPIC,
  transferCalldata,
  uint256Word,
  USDT_CONTRACT_NILE,
} from '../../../src/crypto/tron/trc20-usdt.ts';
import { backends } from '../../support/databases.ts';
import {
  startJsonRewritingProxy,
  type JsonRewrite,
  type JsonRewritingProxy,
} from '../../support/json-rewriting-proxy.ts';
import {
  creditsOfDeposit,
  expectLedgerSound,
  openReceivingSetup,
  usdtMainBalance,
  type ReceivingSetup,
} from './receiving-service-support.ts';
import { uniqueName } from '../../support/seeded-random.ts';

interface Log {
  address: string;
  topics: string[];
  data: string;
}
interface Info {
  id: string;
  log?: Log[];
  receipt?: { result?: string };
  result?: string;
  resMessage?: string;
}
interface PrintedTransaction {
  txID: string;
  ret?: { contractRet?: string }[];
  raw_data_hex?: string;
  signature?: string[];
  raw_data?: unknown;
}

const INFO_LISTS = ['/wallet/gettransactioninfobyblocknum', '/walletsolidity/gettransactioninfobyblocknum'];
const INFO_BY_ID = ['/wallet/gettransactioninfobyid', '/walletsolidity/gettransactioninfobyid'];

/** Applies `edit` to every transaction result the node answers, from any endpoint. */
function editInfos(path: string, answer: unknown, edit: (info: Info) => void): unknown {
  if (INFO_LISTS.includes(path) && Array.isArray(answer)) (answer as Info[]).forEach(edit);
  if (INFO_BY_ID.includes(path) && answer !== null && typeof answer === 'object' && 'id' in answer)
    edit(answer as Info);
  return answer;
}

function editBlockTransactions(
  path: string,
  answer: unknown,
  edit: (transaction: PrintedTransaction, index: number, all: PrintedTransaction[]) => void,
): unknown {
  const transactions = (answer as { transactions?: PrintedTransaction[] } | null)?.transactions;
  if (path === '/wallet/getblockbynum' && Array.isArray(transactions)) transactions.forEach(edit);
  return answer;
}

/** Every USDT Transfer log the node shows goes through `edit`. */
function rewriteTransferLogs(usdtLog: string, edit: (log: Log) => Log): JsonRewrite {
  return {
    answer: (path, answer) =>
      editInfos(path, answer, (info) => {
        info.log = info.log?.map((log) =>
          log.address === usdtLog && log.topics[0] === TRANSFER_EVENT_TOPIC ? edit(log) : log,
        );
      }),
  };
}

describe.each(backends)('deposits read through a lying TRON node on %s', (backend) => {
  let setup: ReceivingSetup;
  let liar: JsonRewritingProxy;
  /** An honest relay: a second honest node at another URL. */
  let relay: JsonRewritingProxy;
  const clients: TronNodeClient[] = [];
  beforeEach(async () => {
    setup = await openReceivingSetup(backend);
    liar = await startJsonRewritingProxy(setup.sandbox.url);
    relay = await startJsonRewritingProxy(setup.sandbox.url);
  });
  afterEach(async () => {
    await expectLedgerSound(setup);
    for (const client of clients.splice(0)) await client.close();
    await liar.close();
    await relay.close();
    await setup.close();
  });

  const chain = () => setup.sandbox.chain;
  const honest = () => setup.sandbox.url;
  const usdtLog = () => logAddressHex(chain().parameters.usdtContract);
  const LEADER = 'lying-node-test';

  /** A watcher reading through these node URLs (one lease token throughout, as one process). */
  function watcherOn(urls: string[]) {
    const node = createTronNodeClient({
      urls,
      usdtContract: chain().parameters.usdtContract,
      retryDelayMs: 0,
      maxAttempts: urls.length,
    });
    clients.push(node);
    return setup.watcher({ leaderToken: LEADER, access: { ...setup.access, node } });
  }

  async function invoiceFor(amount: string): Promise<{ id: string; address: TronAddress }> {
    const { invoice } = await createInvoice(setup.deps, setup.shop, {
      external_id: uniqueName('order'),
      amount,
      network: 'TRC20',
    });
    return { id: invoice.invoice_id, address: tronAddress(invoice.address) };
  }

  /** A real USDT transfer, final once the watcher runs. */
  function payFinal(to: TronAddress, amount: bigint): string {
    const sent = chain().sendUsdt({ to, amount });
    expect(sent.result).toBe(true);
    chain().mine(chain().parameters.solidityDepth + 1);
    return sent.transaction.txId;
  }

  /** The merchant's USDT credits still pending (deposits seen, not final): a held deposit's is voided. */
  async function usdtMainPending(): Promise<bigint> {
    const row = await setup.context.db
      .selectFrom('ledger_accounts')
      .select('credits_pending')
      .where('merchant_id', '=', setup.merchant.merchant_id)
      .where('currency', '=', 'USDT')
      .where('kind', '=', 'main')
      .executeTakeFirst();
    return row?.credits_pending ?? 0n;
  }

  async function expectNothingRecorded(invoiceId: string): Promise<void> {
    expect(await depositsOfInvoice(setup.context.db, invoiceId)).toEqual([]);
    expect(await usdtMainBalance(setup)).toBe(0n);
  }

  async function expectCreditedOnce(invoiceId: string, amount: bigint): Promise<void> {
    const deposits = await depositsOfInvoice(setup.context.db, invoiceId);
    expect(
      deposits.map((deposit) => ({ status: deposit.status, amount: deposit.amount_micro, evidence: deposit.evidence })),
    ).toEqual([{ status: 'credited', amount, evidence: 'signed_call' }]);
    expect(await creditsOfDeposit(setup, deposits[0]!.id)).toBe(1);
    expect(await usdtMainBalance(setup)).toBe(amount);
  }

  it('an amount rewritten to 1,000,000 USDT: refused alone; beside one honest node it contradicts, held unconfirmed and never credited', async () => {
    const invoice = await invoiceFor('1.234567');
    payFinal(invoice.address, 1_234_567n);
    liar.rewrite(
      rewriteTransferLogs(usdtLog(), (log) => ({ ...log, data: bytesToHex(uint256Word(1_000_000_000_000n)) })),
    );

    await expect(watcherOn([liar.url]).runPass()).rejects.toThrow(
      /signs a transfer of 1234567 .* logs show 1000000000000/,
    );
    await expectNothingRecorded(invoice.id);

    // Two nodes only, one lying about the result too: no two agree, so nothing is credited.
    await watcherOn([liar.url, honest()]).runPass();
    const [held] = await depositsOfInvoice(setup.context.db, invoice.id);
    expect(held).toMatchObject({ status: 'unconfirmed', amount_micro: 1_234_567n, final_at: null });
    expect(await creditsOfDeposit(setup, held!.id)).toBe(0);
    expect(await usdtMainBalance(setup)).toBe(0n);
    expect(await usdtMainPending()).toBe(0n);
    expect((await getInvoice(setup.deps, setup.shop.shopId, invoice.id)).status).toBe('confirming');
  });

  it('an amount rewritten, with two honest nodes beside the liar: the true amount is credited exactly once', async () => {
    const invoice = await invoiceFor('1.234567');
    payFinal(invoice.address, 1_234_567n);
    liar.rewrite(
      rewriteTransferLogs(usdtLog(), (log) => ({ ...log, data: bytesToHex(uint256Word(1_000_000_000_000n)) })),
    );
    const watcher = watcherOn([liar.url, honest(), relay.url]);
    await watcher.runPass();
    await watcher.runPass();
    await expectCreditedOnce(invoice.id, 1_234_567n);
    expect((await getInvoice(setup.deps, setup.shop.shopId, invoice.id)).status).toBe('paid');
  });

  it('a recipient rewritten to another of our invoices: refused alone; beside honest nodes only the real recipient is credited', async () => {
    const paid = await invoiceFor('3');
    const attacker = await invoiceFor('3');
    payFinal(paid.address, 3_000_000n);
    liar.rewrite(
      rewriteTransferLogs(usdtLog(), (log) => ({
        ...log,
        topics: [log.topics[0]!, log.topics[1]!, bytesToHex(addressWord(attacker.address))],
      })),
    );

    await expect(watcherOn([liar.url]).runPass()).rejects.toThrow(
      new RegExp(`to ${paid.address}, but the node's logs show 3000000 from .* to ${attacker.address}`),
    );
    await expectNothingRecorded(paid.id);
    await expectNothingRecorded(attacker.id);

    await watcherOn([liar.url, honest(), relay.url]).runPass();
    await expectCreditedOnce(paid.id, 3_000_000n);
    expect(await depositsOfInvoice(setup.context.db, attacker.id)).toEqual([]);
  });

  it('the log address rewritten to another contract (a deposit hidden): refused alone; beside honest nodes the deposit is credited', async () => {
    const invoice = await invoiceFor('2');
    payFinal(invoice.address, 2_000_000n);
    liar.rewrite(rewriteTransferLogs(usdtLog(), (log) => ({ ...log, address: logAddressHex(USDT_CONTRACT_NILE) })));

    await expect(watcherOn([liar.url]).runPass()).rejects.toThrow(/signs a transfer of 2000000 .* 0 USDT log/);
    await expectNothingRecorded(invoice.id);

    await watcherOn([liar.url, honest(), relay.url]).runPass();
    await expectCreditedOnce(invoice.id, 2_000_000n);
  });

  it('a REVERT shown as SUCCESS with a Transfer log matching its calldata: recorded from the liar, never credited (the honest node disagrees)', async () => {
    const invoice = await invoiceFor('5');
    chain().setBlacklisted(invoice.address, true);
    const txId = payFinal(invoice.address, 5_000_000n);
    expect(chain().findTransaction(txId)!.transaction.receipt.result).toBe('REVERT');
    const payer = chain().payers[0]!.address;
    const forgedLog: Log = {
      address: usdtLog(),
      topics: [TRANSFER_EVENT_TOPIC, bytesToHex(addressWord(payer)), bytesToHex(addressWord(invoice.address))],
      data: bytesToHex(uint256Word(5_000_000n)),
    };
    liar.rewrite({
      answer: (path, answer) => {
        editBlockTransactions(path, answer, (transaction) => {
          if (transaction.txID === txId) transaction.ret = [{ contractRet: 'SUCCESS' }];
        });
        return editInfos(path, answer, (info) => {
          if (info.id !== txId) return;
          info.receipt = { ...info.receipt, result: 'SUCCESS' };
          delete info.result;
          delete info.resMessage;
          info.log = [forgedLog];
        });
      },
    });
    const watcher = watcherOn([liar.url, honest()]);
    await watcher.runPass();
    const [deposit] = await depositsOfInvoice(setup.context.db, invoice.id);
    expect(deposit).toMatchObject({ status: 'unconfirmed', amount_micro: 5_000_000n, evidence: 'signed_call' });
    await watcher.runPass();
    expect(await creditsOfDeposit(setup, deposit!.id)).toBe(0);
    expect(await usdtMainBalance(setup)).toBe(0n);
  });

  it('a SUCCESS shown as REVERT: nothing is credited (while that node reads the block, the deposit is not seen)', async () => {
    const invoice = await invoiceFor('4');
    const txId = payFinal(invoice.address, 4_000_000n);
    liar.rewrite({
      answer: (path, answer) => {
        editBlockTransactions(path, answer, (transaction) => {
          if (transaction.txID === txId) transaction.ret = [{ contractRet: 'REVERT' }];
        });
        return editInfos(path, answer, (info) => {
          if (info.id !== txId) return;
          info.receipt = { ...info.receipt, result: 'REVERT' };
          info.result = 'FAILED';
          delete info.log;
        });
      },
    });
    await watcherOn([liar.url, honest()]).runPass();
    await expectNothingRecorded(invoice.id);
  });

  it('[] for the results of a block that has transactions: refused alone; beside honest nodes the deposit is credited', async () => {
    const invoice = await invoiceFor('6');
    payFinal(invoice.address, 6_000_000n);
    liar.rewrite({ answer: (path, answer) => (INFO_LISTS.includes(path) ? [] : answer) });

    await expect(watcherOn([liar.url]).runPass()).rejects.toThrow(/transactions but the node gave results for 0/);
    await expectNothingRecorded(invoice.id);

    await watcherOn([liar.url, honest(), relay.url]).runPass();
    await expectCreditedOnce(invoice.id, 6_000_000n);
  });

  it('{} for a block it has: nothing is recorded or credited', async () => {
    const invoice = await invoiceFor('6');
    payFinal(invoice.address, 6_000_000n);
    liar.rewrite({ answer: (path, answer) => (path === '/wallet/getblockbynum' ? {} : answer) });
    const pass = await watcherOn([liar.url]).runPass();
    expect(pass.blocksScanned).toBe(0);
    await expectNothingRecorded(invoice.id);
  });

  it('{} for a final transaction it has: the deposit waits (confirming, not credited) until two nodes confirm it', async () => {
    const invoice = await invoiceFor('7');
    payFinal(invoice.address, 7_000_000n);
    liar.rewrite({ answer: (path, answer) => (path === '/walletsolidity/gettransactioninfobyid' ? {} : answer) });
    const watcher = watcherOn([honest(), liar.url]);
    await watcher.runPass();
    const [waiting] = await depositsOfInvoice(setup.context.db, invoice.id);
    expect(waiting).toMatchObject({ status: 'confirming', amount_micro: 7_000_000n });
    expect(await usdtMainBalance(setup)).toBe(0n);
    liar.rewrite(undefined);
    await watcher.runPass();
    await expectCreditedOnce(invoice.id, 7_000_000n);
  });

  describe('a USDT transfer made inside another contract (no signed calldata states it)', () => {
    const ROUTER = tronAddress('TSeJkUh4Qv67VNFwY8LaAxERygNdy6NQZK');

    /**
     * Nodes that show the payer's transfer as what it would be through a router contract: the
     * block carries the payer's signed call of ROUTER (another txID), and its result the same USDT
     * Transfer log. The transaction id the gateway asks about is mapped back to the real one.
     */
    function throughRouter(realTxId: string): JsonRewrite {
      const payer = chain().payers[0]!;
      const real = chain().findTransaction(realTxId)!.transaction.transaction;
      const decoded = decodeTriggerSmartContractRaw(real.rawBytes);
      if (!decoded.ok) throw new Error(decoded.problem);
      const routed = signTriggerSmartContract(
        {
          ...decoded.raw,
          contractAddress: ROUTER,
          data: Uint8Array.from([0x5a, 0x3f, 0x00, 0x01, ...transferCalldata(ROUTER, 1n).subarray(4)]),
        },
        payer.privateKey,
      );
      return {
        request: (path, body) =>
          INFO_BY_ID.includes(path) && body['value'] === routed.txId ? { ...body, value: realTxId } : body,
        answer: (path, answer) => {
          editBlockTransactions(path, answer, (transaction, index, all) => {
            if (transaction.txID !== realTxId) return;
            all[index] = {
              ret: transaction.ret!,
              signature: [bytesToHex(routed.signatures[0]!)],
              txID: routed.txId,
              raw_data_hex: bytesToHex(routed.rawBytes),
            };
          });
          return editInfos(path, answer, (info) => {
            if (info.id === realTxId) info.id = routed.txId;
          });
        },
      };
    }

    it('with one node configured: recorded as log_only, then held unconfirmed — its pending credit voided, nothing credited — until an operator releases it, once', async () => {
      const invoice = await invoiceFor('8');
      const txId = payFinal(invoice.address, 8_000_000n);
      liar.rewrite(throughRouter(txId));
      const watcher = watcherOn([liar.url]);
      await watcher.runPass();
      const [deposit] = await depositsOfInvoice(setup.context.db, invoice.id);
      expect(deposit).toMatchObject({ status: 'unconfirmed', evidence: 'log_only', amount_micro: 8_000_000n });
      expect(deposit!.tx_id).not.toBe(txId);
      await watcher.runPass();
      expect(await creditsOfDeposit(setup, deposit!.id)).toBe(0);
      expect(await usdtMainBalance(setup)).toBe(0n);
      expect(await usdtMainPending()).toBe(0n);
      expect((await unconfirmedDeposits(setup.context.db, 10)).map((row) => row.id)).toEqual([deposit!.id]);

      // `paygate crypto deposits release`: the operator checked the transaction elsewhere.
      const release = () =>
        inTransaction(setup.context.db, (tx) => releaseUnconfirmedDeposit(tx, setup.clock, deposit!.id));
      expect(await release()).toMatchObject({ id: deposit!.id, status: 'credited', credit_round: 2 });
      expect(await release()).toBeUndefined();
      expect(await creditsOfDeposit(setup, deposit!.id)).toBe(1);
      expect(await usdtMainBalance(setup)).toBe(8_000_000n);
      expect(await usdtMainPending()).toBe(0n);
      expect((await getInvoice(setup.deps, setup.shop.shopId, invoice.id)).status).toBe('paid');
      expect(await unconfirmedDeposits(setup.context.db, 10)).toEqual([]);
    });

    it('with two nodes that both show it: credited once, after the second confirmed it', async () => {
      const invoice = await invoiceFor('8');
      const txId = payFinal(invoice.address, 8_000_000n);
      liar.rewrite(throughRouter(txId));
      relay.rewrite(throughRouter(txId));
      await watcherOn([liar.url, relay.url]).runPass();
      const [deposit] = await depositsOfInvoice(setup.context.db, invoice.id);
      expect(deposit).toMatchObject({ status: 'credited', evidence: 'log_only', amount_micro: 8_000_000n });
      expect(await creditsOfDeposit(setup, deposit!.id)).toBe(1);
      expect(await usdtMainBalance(setup)).toBe(8_000_000n);
    });

    it('beside a node that does not know it: it waits, confirming and not credited', async () => {
      const invoice = await invoiceFor('8');
      const txId = payFinal(invoice.address, 8_000_000n);
      liar.rewrite(throughRouter(txId));
      const watcher = watcherOn([liar.url, honest()]);
      await watcher.runPass();
      await watcher.runPass();
      const [deposit] = await depositsOfInvoice(setup.context.db, invoice.id);
      expect(deposit).toMatchObject({ status: 'confirming', evidence: 'log_only' });
      expect(await creditsOfDeposit(setup, deposit!.id)).toBe(0);
      expect(await usdtMainBalance(setup)).toBe(0n);
      expect(await usdtMainPending()).toBe(8_000_000n);
    });
  });
});

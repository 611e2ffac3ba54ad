// Which Transfer logs become deposits. A node answer is untrusted input: a
// Transfer from another contract, a reverted transaction that still shows a
// Transfer-shaped log, a zero-value transfer (address poisoning) or a log of
// the wrong shape yields no deposit; results that do not belong to the block
// are refused outright.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  createTronNodeClient,
  TronNodeUnavailableError,
  type TronNodeClient,
} from '../../../src/crypto/tron/node-client.ts';
import { TRANSFER_EVENT_TOPIC } from '../../../src/crypto/tron/trc20-usdt.ts';
import {
  addressTopic,
  blockId,
  blockJson,
  DEPOSIT_ADDRESS,
  OTHER_ADDRESS,
  OTHER_TOKEN,
  PAYER,
  rawHexOf,
  signedTransferTx,
  transactionInfo,
  transferLog,
  txId,
  uint256Word,
  USDT,
} from './fixtures/chain-json.ts';
import { startFakeTronNode, type FakeTronNode } from './fixtures/fake-tron-node.ts';
import { serveBlocks } from './fixtures/serve-blocks.ts';

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

const BLOCK = 500;

/** One block holding one transaction with the given logs and results; answers the transfers the client finds. */
async function transfersOf(
  logs: Record<string, unknown>[],
  outcome: { contractRet?: string; receiptResult?: string; failed?: boolean } = {},
  id = txId('single'),
) {
  serveBlocks(node, [
    {
      block: blockJson({ number: BLOCK, transactions: [{ txID: id, contractRet: outcome.contractRet ?? 'SUCCESS' }] }),
      infos: [
        transactionInfo({
          id,
          blockNumber: BLOCK,
          logs,
          receiptResult: outcome.receiptResult ?? 'SUCCESS',
          failed: outcome.failed ?? false,
        }),
      ],
    },
  ]);
  const [scanned] = await client.scanBlocks(BLOCK, 1);
  return scanned!.transfers;
}

describe('USDT transfers in a scanned block', () => {
  it('turns a USDT Transfer log of a successful transaction into a deposit with base58 addresses and a bigint amount', async () => {
    const amount = 12_345_678n;
    const id = signedTransferTx({ amount });
    const transfers = await transfersOf([transferLog({ from: PAYER, to: DEPOSIT_ADDRESS, amount })], {}, id);
    expect(transfers).toEqual([
      {
        txId: id,
        logIndex: 0,
        blockNumber: BLOCK,
        blockId: blockId(BLOCK),
        from: PAYER,
        to: DEPOSIT_ADDRESS,
        amount,
        evidence: 'signed_call',
      },
    ]);
  });

  describe('holds every Transfer log against the calldata its owner signed', () => {
    async function refusal(logs: Record<string, unknown>[], id: string): Promise<string> {
      const error = await transfersOf(logs, {}, id).then(
        () => undefined,
        (caught: unknown) => caught,
      );
      expect(error).toBeInstanceOf(TronNodeUnavailableError);
      const failure = (error as TronNodeUnavailableError).failures[0]!;
      expect(failure.kind).toBe('invalid_answer');
      return failure.detail;
    }

    it('refuses a log whose amount is not the signed amount', async () => {
      const id = signedTransferTx({ amount: 1_234_567n });
      expect(await refusal([transferLog({ amount: 1_000_000_000_000n })], id)).toMatch(
        /signs a transfer of 1234567 .* logs show 1000000000000 from/,
      );
    });

    it('refuses a log whose recipient is not the signed recipient', async () => {
      const id = signedTransferTx({ amount: 5n, to: OTHER_ADDRESS });
      expect(await refusal([transferLog({ amount: 5n, to: DEPOSIT_ADDRESS })], id)).toMatch(
        new RegExp(`to ${OTHER_ADDRESS}, but the node's logs show 5 from ${PAYER} to ${DEPOSIT_ADDRESS}`),
      );
    });

    it('refuses a log whose sender is not the signing owner', async () => {
      const id = signedTransferTx({ amount: 5n });
      expect(await refusal([transferLog({ amount: 5n, from: OTHER_ADDRESS })], id)).toMatch(/signs a transfer of 5/);
    });

    it('refuses a successful signed transfer whose Transfer log is missing (a deposit hidden) or doubled', async () => {
      expect(await refusal([], signedTransferTx({ amount: 7n, label: 'hidden' }))).toMatch(
        /0 USDT log\(s\) and no transfer/,
      );
      expect(
        await refusal(
          [transferLog({ contract: OTHER_TOKEN, amount: 7n })],
          signedTransferTx({ amount: 7n, label: 'moved' }),
        ),
      ).toMatch(/0 USDT log/);
      expect(
        await refusal(
          [transferLog({ amount: 7n }), transferLog({ amount: 7n })],
          signedTransferTx({ amount: 7n, label: 'doubled' }),
        ),
      ).toMatch(/signs a transfer of 7/);
    });

    it('refuses a transaction whose raw_data_hex does not hash to its txID', async () => {
      const id = signedTransferTx({ amount: 9n, label: 'altered' });
      const honest = rawHexOf.get(id)!;
      // The amount word of the calldata rewritten: another transaction under the same id.
      rawHexOf.set(id, { ...honest, rawHex: honest.rawHex.replace(/09(?=[0-9a-f]{0,40}$)/, '0a') });
      expect(rawHexOf.get(id)!.rawHex).not.toBe(honest.rawHex);
      expect(await refusal([transferLog({ amount: 10n })], id)).toMatch(/does not hash to its txID/);
    });

    it('refuses a block transaction with USDT transfers but no raw_data_hex (java-tron Util.printTransactionToJSON always prints it)', async () => {
      const id = txId('no-raw');
      const block = blockJson({ number: BLOCK, transactions: [{ txID: id }] });
      for (const transaction of block.transactions as Record<string, unknown>[]) delete transaction.raw_data_hex;
      serveBlocks(node, [
        {
          block,
          infos: [transactionInfo({ id, blockNumber: BLOCK, receiptResult: 'SUCCESS', logs: [transferLog()] })],
        },
      ]);
      await expect(client.scanBlocks(BLOCK, 1)).rejects.toThrow(/no raw_data_hex/);
    });

    it('reads transferFrom(from, to, amount) as stating the sender it names', async () => {
      const data = Uint8Array.from(
        Buffer.from(`23b872dd${addressTopic(OTHER_ADDRESS)}${addressTopic(DEPOSIT_ADDRESS)}${uint256Word(42n)}`, 'hex'),
      );
      const id = signedTransferTx({ amount: 42n, data, label: 'transferFrom' });
      expect(await transfersOf([transferLog({ from: OTHER_ADDRESS, amount: 42n })], {}, id)).toMatchObject([
        { from: OTHER_ADDRESS, amount: 42n, evidence: 'signed_call' },
      ]);
      const lying = signedTransferTx({ amount: 42n, data, label: 'transferFrom lie' });
      expect(await refusal([transferLog({ from: PAYER, amount: 42n })], lying)).toMatch(/signs a transfer of 42 from/);
    });

    it("marks as log_only a transfer no signed calldata states: another contract called, or a signature that is not the owner's", async () => {
      const viaContract = signedTransferTx({ amount: 3n, contract: OTHER_TOKEN, label: 'router' });
      expect(await transfersOf([transferLog({ amount: 3n })], {}, viaContract)).toMatchObject([
        { amount: 3n, evidence: 'log_only' },
      ]);
      const otherKey = signedTransferTx({ amount: 3n, signingKey: new Uint8Array(32).fill(7), label: 'other key' });
      expect(await transfersOf([transferLog({ amount: 999n })], {}, otherKey)).toMatchObject([
        { amount: 999n, evidence: 'log_only' },
      ]);
    });
  });

  it('keeps every transfer of a transaction apart by log index, across transactions of the block', async () => {
    const first = txId('batch-1');
    const second = txId('batch-2');
    serveBlocks(node, [
      {
        block: blockJson({ number: BLOCK, transactions: [{ txID: first }, { txID: second }] }),
        infos: [
          transactionInfo({
            id: first,
            blockNumber: BLOCK,
            receiptResult: 'SUCCESS',
            logs: [
              transferLog({ to: DEPOSIT_ADDRESS, amount: 1n }),
              transferLog({ contract: OTHER_TOKEN }),
              transferLog({ to: DEPOSIT_ADDRESS, amount: 2n }),
            ],
          }),
          transactionInfo({
            id: second,
            blockNumber: BLOCK,
            receiptResult: 'SUCCESS',
            logs: [transferLog({ to: OTHER_ADDRESS, amount: 3n })],
          }),
        ],
      },
    ]);
    const [scanned] = await client.scanBlocks(BLOCK, 1);
    expect(scanned!.transfers.map(({ txId: id, logIndex, to, amount }) => ({ id, logIndex, to, amount }))).toEqual([
      { id: first, logIndex: 0, to: DEPOSIT_ADDRESS, amount: 1n },
      { id: first, logIndex: 2, to: DEPOSIT_ADDRESS, amount: 2n },
      { id: second, logIndex: 0, to: OTHER_ADDRESS, amount: 3n },
    ]);
    expect(node.requestsTo('/wallet/gettransactioninfobyblocknum')[0]?.body).toEqual({ num: BLOCK });
  });

  it.each([
    ['20-byte EVM hex', 'evm'],
    ['21-byte 41… hex', 'hex41'],
    ['Base58 (visible=true)', 'base58'],
  ] as const)('recognises the USDT contract when the node writes the log address as %s', async (_name, addressForm) => {
    expect(await transfersOf([transferLog({ addressForm, amount: 5n })])).toHaveLength(1);
  });

  it('takes amounts above 2^53 exactly', async () => {
    const amount = 2n ** 60n + 7n;
    expect((await transfersOf([transferLog({ amount })]))[0]?.amount).toBe(amount);
  });

  describe('yields no deposit for', () => {
    it('a Transfer log emitted by another contract (a token posing as USDT)', async () => {
      expect(await transfersOf([transferLog({ contract: OTHER_TOKEN })])).toEqual([]);
    });

    it('a reverted transaction that still carries a Transfer-shaped log', async () => {
      expect(
        await transfersOf([transferLog()], { contractRet: 'REVERT', receiptResult: 'REVERT', failed: true }),
      ).toEqual([]);
    });

    it('a transaction whose block entry says REVERT although its result says SUCCESS', async () => {
      expect(await transfersOf([transferLog()], { contractRet: 'REVERT' })).toEqual([]);
    });

    it('a transaction whose result says OUT_OF_ENERGY although the block says SUCCESS', async () => {
      expect(await transfersOf([transferLog()], { receiptResult: 'OUT_OF_ENERGY' })).toEqual([]);
    });

    it('a transaction marked FAILED', async () => {
      expect(await transfersOf([transferLog()], { failed: true })).toEqual([]);
    });

    it('a zero-value transfer (address poisoning)', async () => {
      expect(await transfersOf([transferLog({ amount: 0n })])).toEqual([]);
    });

    it('a log with the Transfer topic but only two topics', async () => {
      expect(
        await transfersOf([transferLog({ topics: [TRANSFER_EVENT_TOPIC, addressTopic(DEPOSIT_ADDRESS)] })]),
      ).toEqual([]);
    });

    it('a log with four topics', async () => {
      expect(
        await transfersOf([
          transferLog({
            topics: [TRANSFER_EVENT_TOPIC, addressTopic(PAYER), addressTopic(DEPOSIT_ADDRESS), uint256Word(1n)],
          }),
        ]),
      ).toEqual([]);
    });

    it('a log of another event (Approval)', async () => {
      const approval = '8c5be1e5ebec7d5bd14f71427d1e84f3dd0314c0f7b2291e5b200ac8c7c3b925';
      expect(
        await transfersOf([transferLog({ topics: [approval, addressTopic(PAYER), addressTopic(DEPOSIT_ADDRESS)] })]),
      ).toEqual([]);
    });

    it('data that is not exactly 32 bytes', async () => {
      expect(await transfersOf([transferLog({ data: uint256Word(5n) + uint256Word(5n) })])).toEqual([]);
      expect(await transfersOf([transferLog({ data: '05' })])).toEqual([]);
    });

    it('an address topic whose upper 12 bytes are not zero', async () => {
      const dirty = `ff${addressTopic(DEPOSIT_ADDRESS).slice(2)}`;
      expect(await transfersOf([transferLog({ topics: [TRANSFER_EVENT_TOPIC, addressTopic(PAYER), dirty] })])).toEqual(
        [],
      );
    });

    it('an amount no int8 column could hold', async () => {
      expect(await transfersOf([transferLog({ amount: 2n ** 63n })])).toEqual([]);
    });
  });

  describe('refuses the answer when', () => {
    async function refusedDetail(infos: Record<string, unknown>[], transactions = [{ txID: txId('single') }]) {
      serveBlocks(node, [{ block: blockJson({ number: BLOCK, transactions }), infos }]);
      const error = await client.scanBlocks(BLOCK, 1).then(
        () => undefined,
        (caught: unknown) => caught,
      );
      expect(error).toBeInstanceOf(TronNodeUnavailableError);
      const failure = (error as TronNodeUnavailableError).failures[0]!;
      expect(failure.kind).toBe('invalid_answer');
      return failure.detail;
    }

    it('a result belongs to another block', async () => {
      expect(
        await refusedDetail([
          transactionInfo({ id: txId('single'), blockNumber: BLOCK + 1, receiptResult: 'SUCCESS' }),
        ]),
      ).toMatch(/of block 501/);
    });

    it('a result names a transaction that is not in the block', async () => {
      expect(
        await refusedDetail([transactionInfo({ id: txId('stranger'), blockNumber: BLOCK, receiptResult: 'SUCCESS' })]),
      ).toMatch(/not in the block/);
    });

    it('a transaction of the block has no result (a deposit could hide there)', async () => {
      const detail = await refusedDetail(
        [transactionInfo({ id: txId('single'), blockNumber: BLOCK, receiptResult: 'SUCCESS' })],
        [{ txID: txId('single') }, { txID: txId('hidden') }],
      );
      expect(detail).toMatch(/2 transactions but the node gave results for 1/);
    });

    it('a topic is not 32 bytes of hex', async () => {
      const logs = [transferLog({ topics: [TRANSFER_EVENT_TOPIC, addressTopic(PAYER), 'zz'.repeat(32)] })];
      expect(
        await refusedDetail([
          transactionInfo({ id: txId('single'), blockNumber: BLOCK, receiptResult: 'SUCCESS', logs }),
        ]),
      ).toMatch(/topics/);
    });

    it('a log address is neither hex nor Base58', async () => {
      const logs = [{ ...transferLog(), address: 'not-an-address' }];
      expect(
        await refusedDetail([
          transactionInfo({ id: txId('single'), blockNumber: BLOCK, receiptResult: 'SUCCESS', logs }),
        ]),
      ).toMatch(/log 0 has address/);
    });

    it('log data has an odd number of hex digits', async () => {
      const logs = [transferLog({ data: '123' })];
      expect(
        await refusedDetail([
          transactionInfo({ id: txId('single'), blockNumber: BLOCK, receiptResult: 'SUCCESS', logs }),
        ]),
      ).toMatch(/data/);
    });
  });

  it('reads {} from gettransactioninfobyblocknum as no results', async () => {
    // java-tron answers {} for num ≤ 0; a block with transactions but {} results is then refused, never read as "no deposits".
    node.on('/wallet/getblockbynum', { json: blockJson({ number: BLOCK, transactions: [{ txID: txId('x') }] }) });
    node.on('/wallet/gettransactioninfobyblocknum', { json: {} });
    await expect(client.scanBlocks(BLOCK, 1)).rejects.toThrow(/1 transactions but the node gave results for 0/);
  });
});

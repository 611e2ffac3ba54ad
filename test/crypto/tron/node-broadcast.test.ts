// Broadcasting a signed transaction: the node's answer mapped to accepted /
// duplicate / rejected / unknown. Busy nodes and node trouble move on to the
// next node (the same signed bytes are safe to send twice); a definite refusal
// is not retried; when no node gave a definite answer the result is unknown,
// never an exception.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createTronNodeClient, type TronNodeClient } from '../../../src/crypto/tron/node-client.ts';
import { txId, USDT } from './fixtures/chain-json.ts';
import { closedPortUrl, startFakeTronNode, type FakeTronNode } from './fixtures/fake-tron-node.ts';

const PATH = '/wallet/broadcasthex';
const transaction = { txId: txId('signed'), hex: '0a8a010a0202db2208c89d4811359a28004098a4e0a6b52d' };
const hexText = (text: string) => Buffer.from(text, 'utf8').toString('hex');

let primary: FakeTronNode;
let secondary: FakeTronNode;
let client: TronNodeClient;

beforeEach(async () => {
  primary = await startFakeTronNode();
  secondary = await startFakeTronNode();
  client = createTronNodeClient({
    urls: [primary.url, secondary.url],
    usdtContract: USDT,
    timeoutMs: 2_000,
    retryDelayMs: 1,
    maxAttempts: 2,
  });
});

afterEach(async () => {
  await client.close();
  await primary.close();
  await secondary.close();
});

describe('broadcast', () => {
  it('sends the hex as {transaction} and maps result:true to accepted', async () => {
    primary.on(PATH, { json: { result: true, txid: transaction.txId } });
    expect(await client.broadcast(transaction)).toEqual({ kind: 'accepted', txId: transaction.txId });
    expect(primary.requestsTo(PATH)[0]?.body).toEqual({ transaction: transaction.hex });
    expect(secondary.requests).toHaveLength(0);
  });

  it('maps DUP_TRANSACTION_ERROR to duplicate (the node already has it)', async () => {
    primary.on(PATH, {
      json: {
        result: false,
        code: 'DUP_TRANSACTION_ERROR',
        txid: transaction.txId,
        message: hexText('dup transaction'),
      },
    });
    expect(await client.broadcast(transaction)).toEqual({ kind: 'duplicate', txId: transaction.txId });
  });

  it.each([
    'SIGERROR',
    'CONTRACT_VALIDATE_ERROR',
    'TAPOS_ERROR',
    'TRANSACTION_EXPIRATION_ERROR',
    'BANDWITH_ERROR',
  ] as const)('maps %s to rejected with the hex message decoded, and does not retry it', async (code) => {
    primary.on(PATH, { json: { result: false, code, txid: transaction.txId, message: hexText(`${code} explained`) } });
    expect(await client.broadcast(transaction)).toEqual({
      kind: 'rejected',
      txId: transaction.txId,
      code,
      message: `${code} explained`,
    });
    expect(secondary.requests).toHaveLength(0);
  });

  it('keeps a plain-text message as it is (broadcasthex answers text)', async () => {
    primary.on(PATH, {
      json: {
        result: false,
        code: 'TRANSACTION_EXPIRATION_ERROR',
        txid: transaction.txId,
        message: 'Transaction expired',
      },
    });
    expect(await client.broadcast(transaction)).toMatchObject({ kind: 'rejected', message: 'Transaction expired' });
  });

  it('maps a code it does not know to OTHER_ERROR, naming the code', async () => {
    primary.on(PATH, { json: { result: false, code: 'NEW_FANCY_ERROR', message: hexText('what') } });
    expect(await client.broadcast(transaction)).toEqual({
      kind: 'rejected',
      txId: transaction.txId,
      code: 'OTHER_ERROR',
      message: 'NEW_FANCY_ERROR: what',
    });
  });

  it.each(['SERVER_BUSY', 'NOT_ENOUGH_EFFECTIVE_CONNECTION', 'NO_CONNECTION', 'BLOCK_UNSOLIDIFIED'])(
    'tries the next node on %s',
    async (code) => {
      primary.on(PATH, { json: { result: false, code, txid: transaction.txId, message: hexText('busy') } });
      secondary.on(PATH, { json: { result: true, txid: transaction.txId } });
      expect(await client.broadcast(transaction)).toEqual({ kind: 'accepted', txId: transaction.txId });
      expect(primary.requests).toHaveLength(1);
    },
  );

  it('answers unknown when every attempt was busy, listing each failure', async () => {
    primary.on(PATH, { json: { result: false, code: 'SERVER_BUSY' } });
    secondary.on(PATH, { json: { result: false, code: 'SERVER_BUSY' } });
    const result = await client.broadcast(transaction);
    expect(result.kind).toBe('unknown');
    if (result.kind !== 'unknown') return;
    expect(result.failures.map((failure) => failure.kind)).toEqual(['busy', 'busy']);
  });

  it('answers unknown when a node timed out (it may have taken the transaction) and no other answered', async () => {
    primary.on(PATH, { json: { result: true, txid: transaction.txId }, delayMs: 10_000 });
    const down = await closedPortUrl();
    const lonely = createTronNodeClient({
      urls: [primary.url, down],
      usdtContract: USDT,
      timeoutMs: 150,
      retryDelayMs: 1,
      maxAttempts: 2,
    });
    const result = await lonely.broadcast(transaction);
    await lonely.close();
    expect(result.kind).toBe('unknown');
    if (result.kind !== 'unknown') return;
    expect(result.failures.map((failure) => failure.kind)).toEqual(['timeout', 'connection_error']);
  });

  it('after a timeout on the first node, a duplicate from the second node says the transaction is out there', async () => {
    primary.on(PATH, { json: { result: true, txid: transaction.txId }, delayMs: 10_000 });
    secondary.on(PATH, { json: { result: false, code: 'DUP_TRANSACTION_ERROR', txid: transaction.txId } });
    expect(await client.broadcast(transaction)).toEqual({ kind: 'duplicate', txId: transaction.txId });
  });

  it('does not believe a node that names another txid: the next node is asked', async () => {
    primary.on(PATH, { json: { result: true, txid: txId('someone else') } });
    secondary.on(PATH, { json: { result: true, txid: transaction.txId } });
    expect(await client.broadcast(transaction)).toEqual({ kind: 'accepted', txId: transaction.txId });
  });

  it('maps a 4xx to rejected REQUEST_REFUSED without trying the next node', async () => {
    primary.on(PATH, { status: 401, text: 'invalid api key' });
    const result = await client.broadcast(transaction);
    expect(result).toMatchObject({ kind: 'rejected', code: 'REQUEST_REFUSED' });
    expect(secondary.requests).toHaveLength(0);
  });

  it('refuses to send something that is not a signed transaction in hex', async () => {
    await expect(client.broadcast({ txId: transaction.txId, hex: 'xyz' })).rejects.toThrow(/hex/);
    await expect(client.broadcast({ txId: 'abc', hex: transaction.hex })).rejects.toThrow(/64 hex digits/);
    expect(primary.requests).toHaveLength(0);
  });
});

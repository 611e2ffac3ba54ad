// Signature recovery on worker threads (signature-pool.ts): the chain server
// recovers each broadcast's signature off its main thread, and intake still
// refuses every signature that is not the owner's, exactly as without the pool.
import { hexToBytes } from '@noble/hashes/utils.js';
import { afterEach, describe, expect, it } from 'vitest';
import { startSimulatedChainServer, type SimulatedChainServer } from '../../../src/crypto/simchain/chain-server.ts';
import { createSignaturePool, type SignaturePool } from '../../../src/crypto/simchain/signature-pool.ts';
import { decodeChainTransaction } from '../../../src/crypto/simchain/chain-transaction.ts';
import { recoverSignerAddress } from '../../../src/crypto/tron/signing.ts';
import { encodeSignedTransaction } from '../../../src/crypto/tron/transaction.ts';
import { bytesToHex } from '@noble/hashes/utils.js';
import { signedTransfer, testKey } from './fixtures/transfers.ts';

const TRX = 1_000_000n;
let server: SimulatedChainServer | undefined;
let pool: SignaturePool | undefined;
afterEach(async () => {
  await server?.close();
  await pool?.close();
  server = undefined;
  pool = undefined;
});

async function post(path: string, body: unknown): Promise<Record<string, unknown>> {
  const response = await fetch(`${server!.url}${path}`, { method: 'POST', body: JSON.stringify(body) });
  return (await response.json()) as Record<string, unknown>;
}

/** The same transaction with its signature's v flipped (0 ↔ 1): it recovers another key. */
function flippedV(hex: string): string {
  const decoded = decodeChainTransaction(hexToBytes(hex));
  if (!decoded.ok) throw new Error(decoded.problem);
  const signature = Uint8Array.from(decoded.transaction.signatures[0]!);
  signature[64] = 1 - (signature[64] ?? 0);
  return bytesToHex(encodeSignedTransaction(decoded.transaction.rawBytes, [signature]));
}

describe('the chain server recovering signatures on worker threads', () => {
  it("accepts the owner's signatures (v 0/1 and 27/28) and refuses another key's or a wrong v with SIGERROR, as on the main thread", async () => {
    server = await startSimulatedChainServer({ seed: 'signature pool', signatureWorkers: 2 });
    const { chain } = server;
    const sender = testKey('sender');
    chain.faucet(sender.address, { trxSun: 1_000n * TRX, usdt: 100_000_000n });
    chain.produceBlocks(5);

    const good = signedTransfer(chain, sender, { amount: 1n });
    expect(await post('/wallet/broadcasthex', { transaction: good.hex })).toMatchObject({
      result: true,
      code: 'SUCCESS',
      txid: good.txId,
    });
    const tronweb = signedTransfer(chain, sender, { amount: 2n, tronwebV: true });
    expect(await post('/wallet/broadcasthex', { transaction: tronweb.hex })).toMatchObject({
      result: true,
      code: 'SUCCESS',
      txid: tronweb.txId,
    });
    const forged = signedTransfer(chain, sender, { amount: 3n, signWith: testKey('thief').privateKey });
    expect(await post('/wallet/broadcasthex', { transaction: forged.hex })).toMatchObject({
      result: false,
      code: 'SIGERROR',
      txid: forged.txId,
    });
    const wrongV = flippedV(signedTransfer(chain, sender, { amount: 4n }).hex);
    expect(await post('/wallet/broadcasthex', { transaction: wrongV })).toMatchObject({
      result: false,
      code: 'SIGERROR',
    });
    expect(chain.pendingTransactions.map((pending) => pending.transaction.txId)).toEqual([good.txId, tronweb.txId]);
  });

  it('takes many concurrent broadcasts, each checked: the forged ones among them are refused', async () => {
    server = await startSimulatedChainServer({ seed: 'signature pool many', signatureWorkers: 2 });
    const { chain } = server;
    const sender = testKey('sender');
    chain.faucet(sender.address, { trxSun: 10_000n * TRX, usdt: 1_000_000_000n });
    chain.produceBlocks(5);
    const transfers = Array.from({ length: 60 }, (_, index) =>
      signedTransfer(chain, sender, {
        amount: BigInt(index + 1),
        ...(index % 10 === 9 ? { signWith: testKey('thief').privateKey } : {}),
      }),
    );
    const answers = await Promise.all(
      transfers.map((transfer) => post('/wallet/broadcasthex', { transaction: transfer.hex })),
    );
    expect(answers.filter((answer) => answer['result'] === true)).toHaveLength(54);
    expect(answers.filter((answer) => answer['code'] === 'SIGERROR')).toHaveLength(6);
    chain.produceBlocks(1);
    expect(chain.head.transactions).toHaveLength(54);
  });
});

describe('the signature pool', () => {
  it('recovers what recoverSignerAddress recovers, and nothing from a malformed signature', async () => {
    pool = createSignaturePool(2);
    const sender = testKey('pool sender');
    const chainServer = (server = await startSimulatedChainServer({ seed: 'pool direct' }));
    const transfer = signedTransfer(chainServer.chain, sender);
    const decoded = decodeChainTransaction(hexToBytes(transfer.hex));
    if (!decoded.ok) throw new Error(decoded.problem);
    const signature = decoded.transaction.signatures[0]!;
    expect(await pool.recover(transfer.txId, signature)).toBe(sender.address);
    expect(await pool.recover(transfer.txId, signature)).toBe(recoverSignerAddress(transfer.txId, signature));
    expect(await pool.recover(transfer.txId, signature.subarray(0, 64))).toBeUndefined();
    const bad = Uint8Array.from(signature);
    bad[64] = 9;
    expect(await pool.recover(transfer.txId, bad)).toBeUndefined();
  });
});

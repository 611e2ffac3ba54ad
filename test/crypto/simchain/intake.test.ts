// What the simulated node refuses at broadcast, each rule on both sides
// (docs/tron.md §1.4, §3): TaPoS, expiration, duplicates, signature, owner account,
// bandwidth, pool size, contract validation.
import { describe, expect, it } from 'vitest';
import { SimulatedChain } from '../../../src/crypto/simchain/simulated-chain.ts';
import { USDT_CONTRACT_NILE } from '../../../src/crypto/tron/trc20-usdt.ts';
import { signedTransfer, testKey } from './fixtures/transfers.ts';

const TRX = 1_000_000n;

function fundedChain(parameters = {}) {
  const chain = new SimulatedChain({ seed: 'intake', parameters });
  const sender = testKey('sender');
  chain.faucet(sender.address, { trxSun: 1_000n * TRX, usdt: 100_000_000n });
  chain.produceBlocks(5);
  return { chain, sender };
}

describe('TaPoS', () => {
  it('accepts a reference to the head block and to an older block of the chain', () => {
    const { chain, sender } = fundedChain();
    const old = chain.block(2)!;
    const atHead = signedTransfer(chain, sender);
    const atOld = signedTransfer(chain, sender, { ...refOf(old), amount: 2n });
    expect(chain.broadcastHex(atHead.hex)).toEqual({ result: true, txId: atHead.txId });
    expect(chain.broadcastHex(atOld.hex)).toEqual({ result: true, txId: atOld.txId });
  });

  it('refuses a reference whose hash is not the chain block with those number bytes', () => {
    const { chain, sender } = fundedChain();
    const head = chain.head;
    const wrongHash = signedTransfer(chain, sender, {
      refBlockBytes: Uint8Array.of(0, head.number),
      refBlockHash: new Uint8Array(8).fill(7),
    });
    expect(chain.broadcastHex(wrongHash.hex)).toMatchObject({ result: false, code: 'TAPOS_ERROR' });
  });

  it('refuses a reference to a block not produced yet', () => {
    const { chain, sender } = fundedChain();
    const future = signedTransfer(chain, sender, { refBlockBytes: Uint8Array.of(0, chain.head.number + 1) });
    expect(chain.broadcastHex(future.hex)).toMatchObject({
      result: false,
      code: 'TAPOS_ERROR',
      message: expect.stringContaining('block not found'),
    });
  });

  it('only the last 65,536 blocks can be referenced: an older block shares its 2 bytes with a newer one', () => {
    const { chain, sender } = fundedChain();
    const block1 = chain.block(1)!;
    chain.produceBlocks(65_536 - chain.head.number); // head = 65,536: block 1 is still the newest block ending in 0x0001
    expect(
      chain.broadcastHex(
        signedTransfer(chain, sender, { ...refOf(block1), expirationMs: chain.head.timestampMs + 60_000 }).hex,
      ),
    ).toMatchObject({ result: true });
    chain.produceBlocks(1); // block 65,537 now ends in 0x0001 too
    const stale = signedTransfer(chain, sender, {
      ...refOf(block1),
      expirationMs: chain.head.timestampMs + 60_000,
      amount: 3n,
    });
    expect(chain.broadcastHex(stale.hex)).toMatchObject({ result: false, code: 'TAPOS_ERROR' });
  });
});

describe('expiration', () => {
  it('refuses an expiration at or before the head block time and accepts one just after', () => {
    const { chain, sender } = fundedChain();
    const headMs = chain.head.timestampMs;
    expect(chain.broadcastHex(signedTransfer(chain, sender, { expirationMs: headMs }).hex)).toMatchObject({
      result: false,
      code: 'TRANSACTION_EXPIRATION_ERROR',
    });
    expect(chain.broadcastHex(signedTransfer(chain, sender, { expirationMs: headMs + 1 }).hex)).toMatchObject({
      result: true,
    });
  });

  it('accepts an expiration 24 h after the head block and refuses one a millisecond later', () => {
    const { chain, sender } = fundedChain();
    const limitMs = chain.head.timestampMs + 24 * 3_600_000;
    expect(chain.broadcastHex(signedTransfer(chain, sender, { expirationMs: limitMs + 1 }).hex)).toMatchObject({
      result: false,
      code: 'TRANSACTION_EXPIRATION_ERROR',
    });
    expect(chain.broadcastHex(signedTransfer(chain, sender, { expirationMs: limitMs }).hex)).toMatchObject({
      result: true,
    });
  });

  it('drops a pooled transaction that expires before the next block, and includes one that does not', () => {
    const { chain, sender } = fundedChain();
    const headMs = chain.head.timestampMs;
    const expiring = signedTransfer(chain, sender, { expirationMs: headMs + 2_999 });
    const lasting = signedTransfer(chain, sender, { expirationMs: headMs + 3_000, amount: 5n });
    chain.broadcastHex(expiring.hex);
    chain.broadcastHex(lasting.hex);
    const [block] = chain.produceBlocks(1);
    expect(block!.transactions.map((included) => included.transaction.txId)).toEqual([lasting.txId]);
    expect(chain.findTransaction(expiring.txId)).toBeUndefined();
  });
});

describe('duplicates', () => {
  it('answers DUP_TRANSACTION_ERROR for the same bytes while pooled and once on chain; other bytes pass', () => {
    const { chain, sender } = fundedChain();
    const transfer = signedTransfer(chain, sender);
    expect(chain.broadcastHex(transfer.hex).result).toBe(true);
    expect(chain.broadcastHex(transfer.hex)).toMatchObject({
      result: false,
      code: 'DUP_TRANSACTION_ERROR',
      txId: transfer.txId,
    });
    chain.produceBlocks(1);
    expect(chain.findTransaction(transfer.txId)).toBeDefined();
    expect(chain.broadcastHex(transfer.hex)).toMatchObject({ result: false, code: 'DUP_TRANSACTION_ERROR' });
    expect(chain.broadcastHex(signedTransfer(chain, sender, { amount: 2n }).hex).result).toBe(true);
  });
});

describe('signature', () => {
  it("refuses a signature by another key than the owner's (SIGERROR)", () => {
    const { chain, sender } = fundedChain();
    const forged = signedTransfer(chain, sender, { signWith: testKey('thief').privateKey });
    expect(chain.broadcastHex(forged.hex)).toMatchObject({ result: false, code: 'SIGERROR' });
  });

  it('accepts v as 0/1 (java-tron) and as 27/28 (tronweb)', () => {
    const { chain, sender } = fundedChain();
    expect(chain.broadcastHex(signedTransfer(chain, sender, { amount: 1n }).hex).result).toBe(true);
    expect(chain.broadcastHex(signedTransfer(chain, sender, { amount: 2n, tronwebV: true }).hex).result).toBe(true);
  });
});

describe('owner account and contract', () => {
  it('refuses an owner that was never activated, and accepts it once it received TRX', () => {
    const { chain } = fundedChain();
    const fresh = testKey('never activated');
    chain.faucet(fresh.address, { usdt: 10_000_000n }); // USDT does not activate an account
    expect(chain.broadcastHex(signedTransfer(chain, fresh).hex)).toMatchObject({
      result: false,
      code: 'CONTRACT_VALIDATE_ERROR',
    });
    chain.faucet(fresh.address, { trxSun: 1n });
    expect(chain.broadcastHex(signedTransfer(chain, fresh, { amount: 2n }).hex).result).toBe(true);
  });

  it('refuses a call to another contract than the USDT one', () => {
    const { chain, sender } = fundedChain();
    expect(
      chain.broadcastHex(signedTransfer(chain, sender, { contractAddress: USDT_CONTRACT_NILE }).hex),
    ).toMatchObject({ result: false, code: 'CONTRACT_VALIDATE_ERROR' });
  });

  it('accepts fee_limit 15,000 TRX and refuses a sun more', () => {
    const { chain, sender } = fundedChain();
    expect(chain.broadcastHex(signedTransfer(chain, sender, { feeLimitSun: 15_000n * TRX + 1n }).hex)).toMatchObject({
      result: false,
      code: 'CONTRACT_VALIDATE_ERROR',
    });
    expect(chain.broadcastHex(signedTransfer(chain, sender, { feeLimitSun: 15_000n * TRX }).hex).result).toBe(true);
  });

  it('answers undecodable bytes with OTHER_ERROR', () => {
    const { chain } = fundedChain();
    expect(chain.broadcastHex('0a00')).toMatchObject({ result: false, code: 'OTHER_ERROR' });
  });
});

describe('bandwidth', () => {
  it('uses the 600 free bytes first, then burns 1,000 sun a byte, and refuses when the TRX cannot pay (BANDWITH_ERROR)', () => {
    const { chain } = fundedChain();
    const poor = testKey('poor');
    chain.faucet(poor.address, { trxSun: 300_000n, usdt: 5_000_000n }); // less than one transfer's bytes × 1,000 sun
    const first = signedTransfer(chain, poor, { feeLimitSun: 0n });
    // Bandwidth counts the signed transaction plus the 64 result bytes java-tron adds.
    const bytes = first.hex.length / 2 + 64;
    expect(bytes).toBeGreaterThan(300);
    expect(chain.broadcastHex(first.hex).result).toBe(true);
    chain.produceBlocks(1);
    const receipt = chain.findTransaction(first.txId)!.transaction.receipt;
    expect(receipt).toMatchObject({ netUsage: bytes, netFeeSun: 0n });
    // 600 − bytes free left today: the next transfer must burn bytes × 1,000 sun, more than the account has.
    expect(chain.broadcastHex(signedTransfer(chain, poor, { feeLimitSun: 0n, amount: 2n }).hex)).toMatchObject({
      result: false,
      code: 'BANDWITH_ERROR',
    });
    chain.faucet(poor.address, { trxSun: BigInt(bytes) * 1_000n - 300_000n }); // now exactly enough
    const burnt = signedTransfer(chain, poor, { feeLimitSun: 0n, amount: 3n });
    expect(chain.broadcastHex(burnt.hex).result).toBe(true);
    chain.produceBlocks(1);
    expect(chain.findTransaction(burnt.txId)!.transaction.receipt).toMatchObject({
      netUsage: 0,
      netFeeSun: BigInt(bytes) * 1_000n,
      feeSun: BigInt(bytes) * 1_000n,
    });
    expect(chain.state.account(poor.address)!.balanceSun).toBe(0n);
  });

  it('free bandwidth recovers over 24 h', () => {
    const { chain } = fundedChain();
    const poor = testKey('poor again');
    chain.faucet(poor.address, { trxSun: 1n, usdt: 5_000_000n });
    chain.broadcastHex(signedTransfer(chain, poor, { feeLimitSun: 0n }).hex);
    chain.produceBlocks(1);
    const second = signedTransfer(chain, poor, {
      feeLimitSun: 0n,
      amount: 2n,
      expirationMs: chain.head.timestampMs + 24 * 3_600_000,
    });
    expect(chain.broadcastHex(second.hex)).toMatchObject({ result: false, code: 'BANDWITH_ERROR' });
    chain.advance(12 * 3_600_000); // half a day: half the bytes used are back
    expect(chain.broadcastHex(second.hex).result).toBe(true);
  });
});

describe('pool size', () => {
  it('answers SERVER_BUSY when the pending pool is full, and takes transactions again after a block', () => {
    const { chain, sender } = fundedChain({ maxPendingTransactions: 2 });
    expect(chain.broadcastHex(signedTransfer(chain, sender, { amount: 1n }).hex).result).toBe(true);
    expect(chain.broadcastHex(signedTransfer(chain, sender, { amount: 2n }).hex).result).toBe(true);
    expect(chain.broadcastHex(signedTransfer(chain, sender, { amount: 3n }).hex)).toMatchObject({
      result: false,
      code: 'SERVER_BUSY',
    });
    chain.produceBlocks(1);
    expect(chain.broadcastHex(signedTransfer(chain, sender, { amount: 3n }).hex).result).toBe(true);
  });
});

function refOf(block: { number: number; id: string }) {
  return {
    refBlockBytes: Uint8Array.of((block.number >> 8) & 0xff, block.number & 0xff),
    refBlockHash: Uint8Array.from(Buffer.from(block.id.slice(16, 32), 'hex')),
  };
}

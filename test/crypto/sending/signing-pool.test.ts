// Signing on a worker thread (signing-pool.ts): the same signatures as the
// executor's own thread, and the executor sending through it: payouts from the
// hot wallet and a sweep from a deposit address in one pass (two keys, one
// chunk), each confirmed once, after a crash between signing and broadcasting
// the same bytes go out.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ExecutorStepCrash } from '../../../src/crypto/sending/executor-context.ts';
import { findOutgoingTransfer } from '../../../src/crypto/sending/outgoing-transfers.ts';
import { attemptsOf } from '../../../src/crypto/sending/sending-repository.ts';
import { createSigningPool, inThreadSigning, type SigningPool } from '../../../src/crypto/sending/signing-pool.ts';
import { recoverSignerAddress, signTransactionId } from '../../../src/crypto/tron/signing.ts';
import { tronAddressFromPrivateKey } from '../../../src/crypto/tron/address.ts';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { bytesToHex, randomBytes } from '@noble/hashes/utils.js';
import { backends } from '../../support/databases.ts';
import { expectLedgerSound, openReceivingSetup, type ReceivingSetup } from '../receiving/receiving-service-support.ts';
import {
  enqueuePayout,
  executorFor,
  freshAddress,
  fundHotWallet,
  mineToFinal,
  newLog,
  type HandlerLog,
} from './executor-support.ts';

describe('the signing pool', () => {
  let pool: SigningPool | undefined;
  afterEach(async () => {
    await pool?.close();
    pool = undefined;
  });

  it('signs what signTransactionId signs (deterministic), and each recovers to the key', async () => {
    pool = createSigningPool(2);
    const privateKey = secp256k1.utils.randomSecretKey();
    const txIds = Array.from({ length: 40 }, () => bytesToHex(randomBytes(32)));
    const [a, b] = await Promise.all([
      pool.sign(privateKey, txIds.slice(0, 20)),
      pool.sign(privateKey, txIds.slice(20)),
    ]);
    const signatures = [...a, ...b];
    expect(signatures.map((signature) => bytesToHex(signature))).toEqual(
      txIds.map((txId) => bytesToHex(signTransactionId(txId, privateKey))),
    );
    expect(await inThreadSigning.sign(privateKey, txIds)).toEqual(signatures);
    for (const [index, txId] of txIds.entries())
      expect(recoverSignerAddress(txId, signatures[index]!)).toBe(tronAddressFromPrivateKey(privateKey));
  });

  it('answers a bad request with an error, not a signature', async () => {
    pool = createSigningPool(1);
    await expect(pool.sign(secp256k1.utils.randomSecretKey(), ['not a txid'])).rejects.toThrow(/signing worker/);
  });
});

describe.each(backends)('the executor signing on a worker thread on %s', (backend) => {
  let setup: ReceivingSetup;
  let log: HandlerLog;
  let pool: SigningPool;
  beforeEach(async () => {
    setup = await openReceivingSetup(backend);
    log = newLog();
    pool = createSigningPool(1);
  });
  afterEach(async () => {
    await pool.close();
    await expectLedgerSound(setup);
    await setup.close();
  });

  it('sends payouts and a sweep (two keys in one chunk), each confirmed once; after a crash past signing the same bytes go out', async () => {
    fundHotWallet(setup);
    const chain = setup.sandbox.chain;
    const key = await setup.access.signingKey();
    const deposit = key.address(3);
    chain.faucet(deposit, { trxSun: 50_000_000n, usdt: 7_000_000n });
    const recipients = Array.from({ length: 5 }, () => freshAddress());
    const payouts = [];
    for (const [index, to] of recipients.entries())
      payouts.push(await enqueuePayout(setup, to, 1_000_000n + BigInt(index)));
    const sweep = await enqueuePayout(setup, setup.access.addressKey.hotWalletAddress, 7_000_000n, {
      purpose: 'sweep',
      ownerId: 'swp_pool',
      from: { kind: 'deposit_address', address: deposit, derivationIndex: 3 },
    });

    const crashing = executorFor(setup, log, {
      signing: pool,
      onStep: (step) => {
        if (step === 'after-sign') throw new ExecutorStepCrash(step);
      },
    });
    await expect(crashing.runPass()).rejects.toThrow(ExecutorStepCrash);
    await crashing.release();
    const signedHex = new Map<string, string>();
    for (const transfer of [...payouts, sweep]) {
      const attempts = await attemptsOf(setup.context.db, transfer.id);
      expect(attempts).toHaveLength(1);
      signedHex.set(transfer.id, attempts[0]!.signed_hex);
    }
    expect(chain.pendingTransactions).toHaveLength(0);

    const executor = executorFor(setup, log, { signing: pool });
    expect(await executor.runPass()).toMatchObject({ signed: 0, rebroadcast: 6 });
    chain.mine(1);
    mineToFinal(setup);
    expect((await executor.runPass()).confirmed).toBe(6);
    for (const [index, transfer] of payouts.entries()) {
      const final = (await findOutgoingTransfer(setup.context.db, transfer.id))!;
      expect(final.status).toBe('confirmed');
      expect(chain.state.usdtBalance(recipients[index]!)).toBe(1_000_000n + BigInt(index));
    }
    expect((await findOutgoingTransfer(setup.context.db, sweep.id))!.status).toBe('confirmed');
    expect(chain.state.usdtBalance(deposit)).toBe(0n);
    for (const transfer of [...payouts, sweep]) {
      const attempts = await attemptsOf(setup.context.db, transfer.id);
      expect(attempts.map((attempt) => attempt.signed_hex)).toEqual([signedHex.get(transfer.id)]);
    }
  });
});

// The sign-once executor: success, on-chain failures (fee recorded and booked),
// unknown broadcast results (the same bytes again), a transaction accepted but
// never included (exactly one new one after expiry), a blacklisted recipient,
// funds short, crashes between steps (never two transfers), and two executors.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ConfigError } from '../../../src/config.ts';
import { findOutgoingTransfer } from '../../../src/crypto/sending/outgoing-transfers.ts';
import { ExecutorStepCrash, type ExecutorStep } from '../../../src/crypto/sending/executor-context.ts';
import { attemptsOf } from '../../../src/crypto/sending/sending-repository.ts';
import { estimateUsdtTransferCost, sunToMicroUsdt } from '../../../src/crypto/sending/transfer-cost.ts';
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

describe.each(backends)('the sign-once executor on %s', (backend) => {
  let setup: ReceivingSetup;
  let log: HandlerLog;
  beforeEach(async () => {
    setup = await openReceivingSetup(backend);
    log = newLog();
  });
  afterEach(async () => {
    await expectLedgerSound(setup);
    await setup.close();
  });

  const chain = () => setup.sandbox.chain;

  async function feeBooked(transferId: string): Promise<bigint | undefined> {
    const row = await setup.context.db
      .selectFrom('ledger_transfers')
      .select(['amount', 'type'])
      .where('idempotency_key', '=', `outgoing-fee:${transferId}`)
      .executeTakeFirst();
    return row?.amount;
  }

  it('signs once, submits, and confirms once solidified; the fee is recorded and booked', async () => {
    fundHotWallet(setup);
    const to = freshAddress();
    const transfer = await enqueuePayout(setup, to, 12_000_000n);
    const executor = executorFor(setup, log);
    const first = await executor.runPass();
    expect(first).toMatchObject({ leader: true, signed: 1, broadcast: 1 });
    const submitted = (await findOutgoingTransfer(setup.context.db, transfer.id))!;
    expect(submitted.status).toBe('submitted');
    expect(submitted.txId).toMatch(/^[0-9a-f]{64}$/);
    expect(log.submitted.map((entry) => entry.id)).toEqual([transfer.id]);
    chain().mine(1);
    expect((await executor.runPass()).confirmed).toBe(0); // included, not final yet
    mineToFinal(setup);
    expect((await executor.runPass()).confirmed).toBe(1);
    const final = (await findOutgoingTransfer(setup.context.db, transfer.id))!;
    expect(final).toMatchObject({ status: 'confirmed', txId: submitted.txId, errorCode: null });
    expect(final.feeSun).toBeGreaterThan(0n);
    expect(final.blockNumber).toBe(chain().findTransaction(submitted.txId!)!.block.number);
    expect(chain().state.usdtBalance(to)).toBe(12_000_000n);
    expect(log.final.map((entry) => entry.status)).toEqual(['confirmed']);
    expect(await feeBooked(transfer.id)).toBe(sunToMicroUsdt(final.feeSun!, 300_000n));
    // Nothing more happens on later passes.
    mineToFinal(setup);
    expect(await executor.runPass()).toMatchObject({ signed: 0, broadcast: 0, confirmed: 0 });
    expect(await attemptsOf(setup.context.db, transfer.id)).toHaveLength(1);
  });

  it('two transfers alike (sender, recipient, amount) signed in one pass, and a third in the next pass against the same block, are three transactions: the recipient gets all three', async () => {
    fundHotWallet(setup);
    const to = freshAddress();
    const twins = [await enqueuePayout(setup, to, 3_000_000n), await enqueuePayout(setup, to, 3_000_000n)];
    const executor = executorFor(setup, log);
    expect(await executor.runPass()).toMatchObject({ signed: 2, broadcast: 2 });
    // No block in between: the same head and reference block as the first pass.
    const third = await enqueuePayout(setup, to, 3_000_000n);
    expect(await executor.runPass()).toMatchObject({ signed: 1, broadcast: 1 });
    const txIds = await Promise.all(
      [...twins, third].map(async (transfer) => (await findOutgoingTransfer(setup.context.db, transfer.id))!.txId),
    );
    expect(new Set(txIds).size).toBe(3);
    chain().mine(1);
    mineToFinal(setup);
    expect((await executor.runPass()).confirmed).toBe(3);
    expect(chain().state.usdtBalance(to)).toBe(9_000_000n);
  });

  it.each([
    ['revert', 'reverted'],
    ['out_of_energy', 'out_of_energy'],
  ] as const)('a transfer that ends %s on chain fails %s with its fee recorded and booked', async (armed, code) => {
    fundHotWallet(setup);
    const to = freshAddress();
    chain().armNextTransfer(to, armed);
    const transfer = await enqueuePayout(setup, to, 5_000_000n);
    const executor = executorFor(setup, log);
    await executor.runPass();
    chain().mine(1);
    mineToFinal(setup);
    expect((await executor.runPass()).failed).toBe(1);
    const final = (await findOutgoingTransfer(setup.context.db, transfer.id))!;
    expect(final).toMatchObject({ status: 'failed', errorCode: code });
    expect(final.feeSun).toBeGreaterThan(0n);
    expect(await feeBooked(transfer.id)).toBe(sunToMicroUsdt(final.feeSun!, 300_000n));
    expect(chain().state.usdtBalance(to)).toBe(0n);
    expect(log.final.map((entry) => entry.errorCode)).toEqual([code]);
  });

  it('an unknown broadcast result sends the same bytes again', async () => {
    fundHotWallet(setup);
    const to = freshAddress();
    const transfer = await enqueuePayout(setup, to, 3_000_000n);
    const executor = executorFor(setup, log);
    setup.sandbox.faults.set({ http503: true });
    await executor.runPass().catch(() => undefined);
    setup.sandbox.faults.set({ http503: undefined });
    // The pass may fail before signing (its first node request got the 503); run until signed.
    let queued = (await findOutgoingTransfer(setup.context.db, transfer.id))!;
    if (queued.txId === null) {
      setup.sandbox.faults.set({ serverBusy: true });
      await executor.runPass();
      setup.sandbox.faults.set({ serverBusy: undefined });
      queued = (await findOutgoingTransfer(setup.context.db, transfer.id))!;
    }
    expect(queued.status).toBe('queued');
    expect(queued.txId).not.toBeNull();
    const [attempt] = await attemptsOf(setup.context.db, transfer.id);
    expect(attempt!.last_broadcast).toBe('unknown');
    const pass = await executor.runPass();
    expect(pass.rebroadcast).toBe(1);
    expect(pass.signed).toBe(0);
    const after = await attemptsOf(setup.context.db, transfer.id);
    expect(after).toHaveLength(1);
    expect(after[0]!.signed_hex).toBe(attempt!.signed_hex);
    expect((await findOutgoingTransfer(setup.context.db, transfer.id))!.status).toBe('submitted');
    chain().mine(1);
    mineToFinal(setup);
    await executor.runPass();
    expect((await findOutgoingTransfer(setup.context.db, transfer.id))!).toMatchObject({
      status: 'confirmed',
      txId: queued.txId,
    });
    expect(chain().state.usdtBalance(to)).toBe(3_000_000n);
  });

  it('accepted but never included: exactly one new transaction after the old one expires, never two on chain', async () => {
    fundHotWallet(setup);
    const to = freshAddress();
    const transfer = await enqueuePayout(setup, to, 7_000_000n);
    const executor = executorFor(setup, log);
    setup.sandbox.faults.set({ neverInclude: 1 });
    await executor.runPass();
    const first = (await findOutgoingTransfer(setup.context.db, transfer.id))!;
    expect(first.status).toBe('submitted');
    // Until a solidified block is past its expiration, nothing new is signed.
    for (let index = 0; index < 10; index += 1) {
      chain().mine(3);
      expect((await executor.runPass()).signed).toBe(0);
    }
    chain().mine(60);
    const pass = await executor.runPass();
    expect(pass.expiredAttempts).toBe(1);
    expect(pass.signed).toBe(1);
    const second = (await findOutgoingTransfer(setup.context.db, transfer.id))!;
    expect(second.txId).not.toBe(first.txId);
    chain().mine(1);
    mineToFinal(setup);
    await executor.runPass();
    expect((await findOutgoingTransfer(setup.context.db, transfer.id))!).toMatchObject({
      status: 'confirmed',
      txId: second.txId,
    });
    const attempts = await attemptsOf(setup.context.db, transfer.id);
    expect(attempts.map((attempt) => attempt.status)).toEqual(['dead', 'landed']);
    expect(chain().findTransaction(first.txId!)).toBeUndefined();
    expect(chain().state.usdtBalance(to)).toBe(7_000_000n);
    expect(log.submitted).toHaveLength(1);
  });

  it('with the dry run, a blacklisted recipient fails address_blacklisted before anything is signed', async () => {
    fundHotWallet(setup);
    const to = freshAddress();
    chain().setBlacklisted(to, true);
    const transfer = await enqueuePayout(setup, to, 1_000_000n);
    expect((await executorFor(setup, log, { dryRunBeforeSigning: true }).runPass()).failed).toBe(1);
    expect((await findOutgoingTransfer(setup.context.db, transfer.id))!).toMatchObject({
      status: 'failed',
      errorCode: 'address_blacklisted',
      txId: null,
    });
    expect(await attemptsOf(setup.context.db, transfer.id)).toHaveLength(0);
  });

  it('without the dry run, a blacklisted recipient costs one reverted transaction and fails address_blacklisted', async () => {
    fundHotWallet(setup);
    const to = freshAddress();
    chain().setBlacklisted(to, true);
    const transfer = await enqueuePayout(setup, to, 1_000_000n);
    const executor = executorFor(setup, log, { dryRunBeforeSigning: false });
    expect((await executor.runPass()).signed).toBe(1);
    chain().mine(1);
    mineToFinal(setup);
    expect((await executor.runPass()).failed).toBe(1);
    const final = (await findOutgoingTransfer(setup.context.db, transfer.id))!;
    expect(final).toMatchObject({ status: 'failed', errorCode: 'address_blacklisted' });
    expect(final.feeSun).toBeGreaterThan(0n);
    expect(await feeBooked(transfer.id)).toBe(sunToMicroUsdt(final.feeSun!, 300_000n));
  });

  it('a gas top-up sends TRX (TransferContract) and activates the recipient', async () => {
    fundHotWallet(setup);
    const to = freshAddress();
    const transfer = await enqueuePayout(setup, to, 14_000_000n, {
      purpose: 'gas_topup',
      asset: 'TRX',
      ownerId: 'swp_topup',
    });
    const executor = executorFor(setup, log);
    expect((await executor.runPass()).signed).toBe(1);
    chain().mine(1);
    mineToFinal(setup);
    await executor.runPass();
    const final = (await findOutgoingTransfer(setup.context.db, transfer.id))!;
    expect(final).toMatchObject({ status: 'confirmed', asset: 'TRX' });
    expect(chain().state.account(to)?.balanceSun).toBe(14_000_000n);
  });

  it('a sweep is signed by the deposit address key and moves its USDT to the hot wallet', async () => {
    const key = await setup.access.signingKey();
    const index = 42;
    const deposit = key.address(index);
    chain().faucet(deposit, { trxSun: 50_000_000n, usdt: 30_000_000n });
    const hot = setup.access.addressKey.hotWalletAddress;
    const transfer = await enqueuePayout(setup, hot, 30_000_000n, {
      purpose: 'sweep',
      ownerId: 'swp_1',
      from: { kind: 'deposit_address', address: deposit, derivationIndex: index },
    });
    const executor = executorFor(setup, log);
    expect((await executor.runPass()).signed).toBe(1);
    chain().mine(1);
    mineToFinal(setup);
    await executor.runPass();
    expect((await findOutgoingTransfer(setup.context.db, transfer.id))!.status).toBe('confirmed');
    expect(chain().state.usdtBalance(deposit)).toBe(0n);
    expect(chain().state.usdtBalance(hot)).toBe(30_000_000n);
  });

  it('without a dry run, a sweep topped up for exactly the 65k case (the hot wallet holds USDT) is sent', async () => {
    fundHotWallet(setup);
    const key = await setup.access.signingKey();
    const deposit = key.address(7);
    const hot = setup.access.addressKey.hotWalletAddress;
    const exact = await estimateUsdtTransferCost(setup.access, { from: deposit, to: hot, amount: 20_000_000n });
    expect(exact.energy).toBe(64_285n);
    chain().faucet(deposit, { trxSun: exact.totalSun, usdt: 20_000_000n });
    const transfer = await enqueuePayout(setup, hot, 20_000_000n, {
      purpose: 'sweep',
      ownerId: 'swp_exact',
      from: { kind: 'deposit_address', address: deposit, derivationIndex: 7 },
    });
    const executor = executorFor(setup, log, { dryRunBeforeSigning: false });
    expect(await executor.runPass()).toMatchObject({ signed: 1, waitingForFunds: 0 });
    chain().mine(1);
    mineToFinal(setup);
    await executor.runPass();
    expect((await findOutgoingTransfer(setup.context.db, transfer.id))!.status).toBe('confirmed');
    expect(chain().state.usdtBalance(deposit)).toBe(0n);
  });

  it('a hot wallet short of funds: the transfer waits, then fails insufficient_hot_wallet_funds', async () => {
    fundHotWallet(setup, 1_000_000n);
    const transfer = await enqueuePayout(setup, freshAddress(), 5_000_000n);
    const executor = executorFor(setup, log, { fundsWaitSeconds: 60 });
    expect((await executor.runPass()).waitingForFunds).toBe(1);
    expect((await findOutgoingTransfer(setup.context.db, transfer.id))!.status).toBe('queued');
    setup.clock.advance(61_000);
    expect((await executor.runPass()).failed).toBe(1);
    expect((await findOutgoingTransfer(setup.context.db, transfer.id))!).toMatchObject({
      status: 'failed',
      errorCode: 'insufficient_hot_wallet_funds',
    });
  });

  it('no signing key (live sending not configured): the transfer waits, then fails signer_unavailable, so its owner voids the reservation', async () => {
    fundHotWallet(setup);
    const transfer = await enqueuePayout(setup, freshAddress(), 5_000_000n);
    // The gateway's own housekeeping holds no merchant's money: it waits for the key, never fails for want of it.
    const sweep = await enqueuePayout(setup, freshAddress(), 1_000_000n, { purpose: 'sweep', ownerId: 'swp_test' });
    const noKey = () => Promise.reject(new ConfigError('PAYGATE_TRON_SIGNER_KEY_FILE', 'is not set'));
    const executor = executorFor(setup, log, { fundsWaitSeconds: 60, signingKey: noKey });
    expect(await executor.runPass()).toMatchObject({ signed: 0, waitingForFunds: 1 });
    expect((await findOutgoingTransfer(setup.context.db, transfer.id))!.status).toBe('queued');
    setup.clock.advance(61_000);
    expect((await executor.runPass()).failed).toBe(1);
    const failed = (await findOutgoingTransfer(setup.context.db, transfer.id))!;
    expect(failed).toMatchObject({ status: 'failed', errorCode: 'signer_unavailable', txId: null });
    expect(failed.errorMessage).toContain('PAYGATE_TRON_SIGNER_KEY_FILE');
    expect(log.final.map((entry) => entry.errorCode)).toEqual(['signer_unavailable']);
    expect((await findOutgoingTransfer(setup.context.db, sweep.id))!).toMatchObject({ status: 'queued', txId: null });
    // Any other failure to load a key is not a configuration gap: the pass fails loudly, nothing is failed.
    const other = await enqueuePayout(setup, freshAddress(), 5_000_000n);
    await executor.release();
    const broken = executorFor(setup, log, { signingKey: () => Promise.reject(new Error('disk error')) });
    await expect(broken.runPass()).rejects.toThrow('disk error');
    expect((await findOutgoingTransfer(setup.context.db, other.id))!.status).toBe('queued');
  });

  it('funds that arrive in time: the waiting transfer is sent', async () => {
    fundHotWallet(setup, 1_000_000n);
    const to = freshAddress();
    const transfer = await enqueuePayout(setup, to, 5_000_000n);
    const executor = executorFor(setup, log, { fundsWaitSeconds: 60 });
    expect((await executor.runPass()).waitingForFunds).toBe(1);
    fundHotWallet(setup);
    expect((await executor.runPass()).signed).toBe(1);
    chain().mine(1);
    mineToFinal(setup);
    await executor.runPass();
    expect((await findOutgoingTransfer(setup.context.db, transfer.id))!.status).toBe('confirmed');
  });

  it.each<ExecutorStep>(['after-sign', 'after-broadcast', 'before-finish', 'inside-finish'])(
    'a crash %s and a new executor: exactly one transfer',
    async (crashAt) => {
      fundHotWallet(setup);
      const to = freshAddress();
      const transfer = await enqueuePayout(setup, to, 2_000_000n);
      let armed = true;
      const crashing = executorFor(setup, log, {
        onStep: (step) => {
          if (armed && step === crashAt) {
            armed = false;
            throw new ExecutorStepCrash(step);
          }
        },
      });
      for (let pass = 0; pass < 4 && armed; pass += 1) {
        await crashing.runPass().catch((error: unknown) => {
          if (!(error instanceof ExecutorStepCrash)) throw error;
        });
        if (armed) {
          chain().mine(1);
          mineToFinal(setup);
        }
      }
      expect(armed).toBe(false);
      // The crashed one's lease runs out; a new executor finishes the work.
      setup.clock.advance(31_000);
      const successor = executorFor(setup, log);
      for (let pass = 0; pass < 4; pass += 1) {
        await successor.runPass();
        chain().mine(1);
        mineToFinal(setup);
      }
      await successor.runPass();
      expect((await findOutgoingTransfer(setup.context.db, transfer.id))!.status).toBe('confirmed');
      expect(chain().state.usdtBalance(to)).toBe(2_000_000n);
      expect(await attemptsOf(setup.context.db, transfer.id)).toHaveLength(1);
    },
  );

  it('two executors: one leads and sends; the transfer goes out once', async () => {
    fundHotWallet(setup);
    const to = freshAddress();
    const transfer = await enqueuePayout(setup, to, 4_000_000n);
    const [a, b] = [executorFor(setup, log), executorFor(setup, log)];
    const [passA, passB] = await Promise.all([a.runPass(), b.runPass()]);
    expect([passA.leader, passB.leader].filter(Boolean)).toHaveLength(1);
    expect(passA.signed + passB.signed).toBe(1);
    chain().mine(1);
    mineToFinal(setup);
    await Promise.all([a.runPass(), b.runPass()]);
    expect((await findOutgoingTransfer(setup.context.db, transfer.id))!.status).toBe('confirmed');
    expect(chain().state.usdtBalance(to)).toBe(4_000_000n);
  });
});

import { describe, expect, it } from 'vitest';
import { inTransaction } from '../../src/db/transaction.ts';
import { ensureAccounts, merchantAccountKey, systemAccountKey } from '../../src/ledger/ledger-accounts.ts';
import { findAccountsByIds } from '../../src/ledger/ledger-repository.ts';
import {
  executeLinked,
  findTransfer,
  post,
  reserve,
  reverse,
  transfer,
  voidPending,
  type TransferInput,
} from '../../src/ledger/ledger-service.ts';
import { creditPaymentPaid } from '../../src/payments/payment-credit.ts';
import { backends } from '../support/databases.ts';
import { fund, merchantAccounts, newMerchantId, useLedgerDatabase } from './ledger-support.ts';
import { uniqueName } from '../support/seeded-random.ts';

async function totals(db: Parameters<typeof findAccountsByIds>[0], id: string) {
  const [row] = await findAccountsByIds(db, [id]);
  return {
    available: row!.credits_posted - row!.debits_posted - row!.debits_pending,
    debitsPending: row!.debits_pending,
    debitsPosted: row!.debits_posted,
    creditsPending: row!.credits_pending,
    creditsPosted: row!.credits_posted,
  };
}

describe.each(backends)('ledger operations on %s', (backend) => {
  const environment = useLedgerDatabase(backend);
  const uniqueId = (label: string) => uniqueName(`${label}:${backend}`);

  async function fundedMerchant(amount: bigint) {
    const { context } = environment();
    const merchantId = await newMerchantId(context);
    const accounts = await merchantAccounts(context, merchantId);
    if (amount > 0n) await fund(context, accounts.settlement.id, accounts.main.id, amount);
    return { merchantId, ...accounts };
  }

  const run = <T>(work: Parameters<typeof inTransaction<T>>[1]) => inTransaction(environment().context.db, work);

  it('a transfer moves the amount from one account to the other and both totals show it', async () => {
    const { context } = environment();
    const { main, payout } = await fundedMerchant(10_000n);
    const result = await run((tx) =>
      transfer(tx, context.clock, {
        id: uniqueId('t'),
        debitAccountId: main.id,
        creditAccountId: payout.id,
        amount: 2_500n,
        type: 'transfer',
        reference: { type: 'test', id: '1' },
      }),
    );
    expect(result).toMatchObject({ status: 'posted', amount: 2_500n, currency: 'RUB', replayed: false });
    expect(result.transferId).toMatch(/^trf_/);
    expect((await totals(context.db, main.id)).available).toBe(7_500n);
    expect((await totals(context.db, payout.id)).available).toBe(2_500n);
  });

  it('repeating a transfer with the same id and parameters returns the first one and moves nothing', async () => {
    const { context } = environment();
    const { main, payout } = await fundedMerchant(10_000n);
    const input: TransferInput = {
      id: uniqueId('t'),
      debitAccountId: main.id,
      creditAccountId: payout.id,
      amount: 1_000n,
      type: 'transfer',
      reference: { type: 'test', id: '1' },
    };
    const first = await run((tx) => transfer(tx, context.clock, input));
    const second = await run((tx) => transfer(tx, context.clock, input));
    expect(second).toEqual({ ...first, replayed: true });
    expect((await totals(context.db, main.id)).available).toBe(9_000n);
  });

  it('a repeat is recognised even when the balance no longer covers the amount', async () => {
    const { context } = environment();
    const { main, payout } = await fundedMerchant(1_000n);
    const input: TransferInput = {
      id: uniqueId('t'),
      debitAccountId: main.id,
      creditAccountId: payout.id,
      amount: 1_000n,
      type: 'transfer',
      reference: { type: 'test', id: '1' },
    };
    await run((tx) => transfer(tx, context.clock, input));
    const again = await run((tx) => transfer(tx, context.clock, input));
    expect(again.replayed).toBe(true);
  });

  it('the same id with other parameters is duplicate_external_id and moves nothing', async () => {
    const { context } = environment();
    const { main, payout } = await fundedMerchant(10_000n);
    const input: TransferInput = {
      id: uniqueId('t'),
      debitAccountId: main.id,
      creditAccountId: payout.id,
      amount: 1_000n,
      type: 'transfer',
      reference: { type: 'test', id: '1' },
    };
    await run((tx) => transfer(tx, context.clock, input));
    await expect(run((tx) => transfer(tx, context.clock, { ...input, amount: 999n }))).rejects.toMatchObject({
      code: 'duplicate_external_id',
    });
    expect((await totals(context.db, main.id)).available).toBe(9_000n);
  });

  it('a merchant account cannot go below zero available: insufficient_funds, nothing moves', async () => {
    const { context } = environment();
    const { main, payout } = await fundedMerchant(500n);
    await expect(
      run((tx) =>
        transfer(tx, context.clock, {
          id: uniqueId('t'),
          debitAccountId: main.id,
          creditAccountId: payout.id,
          amount: 501n,
          type: 'transfer',
          reference: { type: 'test', id: '1' },
        }),
      ),
    ).rejects.toMatchObject({ code: 'insufficient_funds' });
    expect(await totals(context.db, main.id)).toMatchObject({ available: 500n, debitsPosted: 0n });
  });

  it('a reservation lowers available at once; posting part of it moves that part and releases the rest', async () => {
    const { context } = environment();
    const { main, payout } = await fundedMerchant(10_000n);
    const reserveId = uniqueId('r');
    await run((tx) =>
      reserve(tx, context.clock, {
        id: reserveId,
        debitAccountId: main.id,
        creditAccountId: payout.id,
        amount: 4_000n,
        type: 'payout',
        reference: { type: 'payout', id: 'po_1' },
      }),
    );
    expect(await totals(context.db, main.id)).toMatchObject({ available: 6_000n, debitsPending: 4_000n });
    expect(await totals(context.db, payout.id)).toMatchObject({ available: 0n, creditsPending: 4_000n });
    const posted = await run((tx) =>
      post(tx, context.clock, { id: uniqueId('p'), pendingId: reserveId, amount: 3_000n }),
    );
    expect(posted).toMatchObject({ status: 'posted', amount: 3_000n, type: 'payout' });
    expect(await totals(context.db, main.id)).toMatchObject({
      available: 7_000n,
      debitsPending: 0n,
      debitsPosted: 3_000n,
    });
    expect(await totals(context.db, payout.id)).toMatchObject({ available: 3_000n, creditsPending: 0n });
    expect((await findTransfer(context.db, reserveId))?.currentStatus).toBe('posted');
  });

  it('voiding a reservation gives the whole amount back', async () => {
    const { context } = environment();
    const { main, payout } = await fundedMerchant(10_000n);
    const reserveId = uniqueId('r');
    await run((tx) =>
      reserve(tx, context.clock, {
        id: reserveId,
        debitAccountId: main.id,
        creditAccountId: payout.id,
        amount: 4_000n,
        type: 'payout',
        reference: { type: 'payout', id: 'po_2' },
      }),
    );
    await run((tx) => voidPending(tx, context.clock, { id: uniqueId('v'), pendingId: reserveId }));
    expect(await totals(context.db, main.id)).toMatchObject({
      available: 10_000n,
      debitsPending: 0n,
      debitsPosted: 0n,
    });
    expect((await findTransfer(context.db, reserveId))?.currentStatus).toBe('voided');
  });

  it('a reservation is closed once: a second post or a void after a post is invalid_state', async () => {
    const { context } = environment();
    const { main, payout } = await fundedMerchant(10_000n);
    const reserveId = uniqueId('r');
    await run((tx) =>
      reserve(tx, context.clock, {
        id: reserveId,
        debitAccountId: main.id,
        creditAccountId: payout.id,
        amount: 4_000n,
        type: 'payout',
        reference: { type: 'payout', id: 'po_3' },
      }),
    );
    const postId = uniqueId('p');
    await run((tx) => post(tx, context.clock, { id: postId, pendingId: reserveId }));
    expect((await run((tx) => post(tx, context.clock, { id: postId, pendingId: reserveId }))).replayed).toBe(true);
    await expect(
      run((tx) => post(tx, context.clock, { id: uniqueId('p'), pendingId: reserveId })),
    ).rejects.toMatchObject({ code: 'invalid_state' });
    await expect(
      run((tx) => voidPending(tx, context.clock, { id: uniqueId('v'), pendingId: reserveId })),
    ).rejects.toMatchObject({ code: 'invalid_state' });
    expect(await totals(context.db, main.id)).toMatchObject({ available: 6_000n, debitsPosted: 4_000n });
  });

  it('posting more than was reserved is refused', async () => {
    const { context } = environment();
    const { main, payout } = await fundedMerchant(10_000n);
    const reserveId = uniqueId('r');
    await run((tx) =>
      reserve(tx, context.clock, {
        id: reserveId,
        debitAccountId: main.id,
        creditAccountId: payout.id,
        amount: 1_000n,
        type: 'payout',
        reference: { type: 'payout', id: 'po_4' },
      }),
    );
    await expect(
      run((tx) => post(tx, context.clock, { id: uniqueId('p'), pendingId: reserveId, amount: 1_001n })),
    ).rejects.toMatchObject({ code: 'invalid_request' });
    await expect(
      run((tx) => post(tx, context.clock, { id: uniqueId('p'), pendingId: 'no-such-reservation' })),
    ).rejects.toMatchObject({ code: 'not_found' });
  });

  it('a correction is a new reversing transfer: the original stays, the money goes back, once', async () => {
    const { context } = environment();
    const { main, payout } = await fundedMerchant(10_000n);
    const originalId = uniqueId('t');
    const original = await run((tx) =>
      transfer(tx, context.clock, {
        id: originalId,
        debitAccountId: main.id,
        creditAccountId: payout.id,
        amount: 3_000n,
        type: 'transfer',
        reference: { type: 'test', id: '1' },
      }),
    );
    const reversalId = uniqueId('rev');
    const reversal = await run((tx) => reverse(tx, context.clock, { id: reversalId, originalId }));
    expect(reversal).toMatchObject({
      type: 'reversal',
      debitAccountId: payout.id,
      creditAccountId: main.id,
      amount: 3_000n,
      reference: { type: 'transfer', id: original.transferId },
    });
    expect((await run((tx) => reverse(tx, context.clock, { id: reversalId, originalId }))).replayed).toBe(true);
    expect((await findTransfer(context.db, originalId))?.amount).toBe(3_000n);
    expect((await totals(context.db, main.id)).available).toBe(10_000n);
    expect((await totals(context.db, payout.id)).available).toBe(0n);
    // A second reversal is refused by the cap (the next test shows it with money on the account).
    await expect(run((tx) => reverse(tx, context.clock, { id: uniqueId('rev'), originalId }))).rejects.toMatchObject({
      code: 'invalid_request',
    });
  });

  it('reversals of one transfer never give back more than it moved, even when the account could pay', async () => {
    const { context } = environment();
    const { main, payout, settlement } = await fundedMerchant(10_000n);
    // The payout account holds far more than the transfer, so only the cap can refuse.
    await fund(context, settlement.id, payout.id, 50_000n);
    const originalId = uniqueId('t');
    await run((tx) =>
      transfer(tx, context.clock, {
        id: originalId,
        debitAccountId: main.id,
        creditAccountId: payout.id,
        amount: 3_000n,
        type: 'transfer',
        reference: { type: 'test', id: '2' },
      }),
    );
    await run((tx) => reverse(tx, context.clock, { id: uniqueId('rev'), originalId }));
    await expect(run((tx) => reverse(tx, context.clock, { id: uniqueId('rev'), originalId }))).rejects.toMatchObject({
      code: 'invalid_request',
      message: 'The reversal is larger than what is left of the transfer to reverse.',
      // The amounts name our transfer: internal, logged with the refusal and never sent.
      cause: expect.stringContaining('3000 of it is already reversed'),
    });
    expect((await totals(context.db, main.id)).available).toBe(10_000n);

    const partialId = uniqueId('t');
    await run((tx) =>
      transfer(tx, context.clock, {
        id: partialId,
        debitAccountId: main.id,
        creditAccountId: payout.id,
        amount: 3_000n,
        type: 'transfer',
        reference: { type: 'test', id: '3' },
      }),
    );
    const firstPart = uniqueId('rev');
    await run((tx) => reverse(tx, context.clock, { id: firstPart, originalId: partialId, amount: 1_000n }));
    await run((tx) => reverse(tx, context.clock, { id: uniqueId('rev'), originalId: partialId, amount: 2_000n }));
    // A repeat of an accepted reversal is still a replay once the cap is reached.
    expect(
      (await run((tx) => reverse(tx, context.clock, { id: firstPart, originalId: partialId, amount: 1_000n })))
        .replayed,
    ).toBe(true);
    await expect(
      run((tx) => reverse(tx, context.clock, { id: uniqueId('rev'), originalId: partialId, amount: 1n })),
    ).rejects.toMatchObject({ code: 'invalid_request' });
    expect((await totals(context.db, main.id)).available).toBe(10_000n);
  });

  it('racing reversals of one transfer: exactly as many succeed as the original covers', async () => {
    const { context } = environment();
    const { main, payout, settlement } = await fundedMerchant(10_000n);
    await fund(context, settlement.id, payout.id, 50_000n);
    const originalId = uniqueId('t');
    await run((tx) =>
      transfer(tx, context.clock, {
        id: originalId,
        debitAccountId: main.id,
        creditAccountId: payout.id,
        amount: 3_000n,
        type: 'transfer',
        reference: { type: 'test', id: '4' },
      }),
    );
    const outcomes = await Promise.allSettled(
      Array.from({ length: 8 }, () =>
        run((tx) => reverse(tx, context.clock, { id: uniqueId('rev'), originalId, amount: 1_000n })),
      ),
    );
    expect(outcomes.filter((outcome) => outcome.status === 'fulfilled')).toHaveLength(3);
    for (const outcome of outcomes)
      if (outcome.status === 'rejected') expect(outcome.reason).toMatchObject({ code: 'invalid_request' });
    expect((await totals(context.db, main.id)).available).toBe(10_000n);
  });

  it('accounts of different currencies cannot exchange money', async () => {
    const { context } = environment();
    const merchantId = await newMerchantId(context);
    const [rub, usdt] = await run((tx) =>
      ensureAccounts(tx, context.clock, [
        merchantAccountKey('sandbox', merchantId, 'RUB', 'main'),
        merchantAccountKey('sandbox', merchantId, 'USDT', 'main'),
      ]),
    );
    await expect(
      run((tx) =>
        transfer(tx, context.clock, {
          id: uniqueId('t'),
          debitAccountId: rub!.id,
          creditAccountId: usdt!.id,
          amount: 1n,
          type: 'transfer',
          reference: { type: 'test', id: '1' },
        }),
      ),
    ).rejects.toMatchObject({ code: 'invalid_request' });
  });

  it('linked transfers are all or nothing: when the second fails, the first is not applied', async () => {
    const { context } = environment();
    const { main, payout, settlement } = await fundedMerchant(1_000n);
    const fees = (
      await run((tx) => ensureAccounts(tx, context.clock, [systemAccountKey('sandbox', 'fees', 'RUB')]))
    )[0]!;
    const chain = [
      {
        action: 'reserve' as const,
        id: uniqueId('a'),
        debitAccountId: main.id,
        creditAccountId: payout.id,
        amount: 900n,
        type: 'payout' as const,
        reference: { type: 'payout', id: 'po_5' },
      },
      {
        action: 'reserve' as const,
        id: uniqueId('b'),
        debitAccountId: main.id,
        creditAccountId: fees.id,
        amount: 200n,
        type: 'payout_fee' as const,
        reference: { type: 'payout', id: 'po_5' },
      },
    ];
    await expect(run((tx) => executeLinked(tx, context.clock, chain))).rejects.toMatchObject({
      code: 'insufficient_funds',
    });
    expect(await totals(context.db, main.id)).toMatchObject({ available: 1_000n, debitsPending: 0n });
    expect(await findTransfer(context.db, chain[0]!.id)).toBeUndefined();
    const ok = await run((tx) => executeLinked(tx, context.clock, [chain[0]!, { ...chain[1]!, amount: 100n }]));
    expect(ok.transfers.map((t) => t.chainId)).toEqual([ok.transfers[0]!.transferId, ok.transfers[0]!.transferId]);
    expect(await totals(context.db, main.id)).toMatchObject({ available: 0n, debitsPending: 1_000n });
    void settlement;
  });

  it('merchant accounts are created once per merchant, currency and kind, even by concurrent callers', async () => {
    const { context } = environment();
    const merchantId = await newMerchantId(context);
    const results = await Promise.all(
      Array.from({ length: 5 }, () =>
        run((tx) => ensureAccounts(tx, context.clock, [merchantAccountKey('sandbox', merchantId, 'USDT', 'payout')])),
      ),
    );
    expect(new Set(results.map(([row]) => row!.id)).size).toBe(1);
  });

  it('a paid payment credits the merchant its amount and the fees account the payer fee, once', async () => {
    const { context } = environment();
    const merchantId = await newMerchantId(context);
    const input = {
      paymentId: crypto.randomUUID(),
      merchantId,
      book: 'sandbox' as const,
      amountKopecks: 100_000n,
      feeKopecks: 3_500n,
    };
    const first = await run((tx) => creditPaymentPaid(tx, context.clock, input));
    const again = await run((tx) => creditPaymentPaid(tx, context.clock, input));
    expect(again.replayed).toBe(true);
    expect(first.transfers.map((t) => [t.type, t.amount])).toEqual([
      ['payment', 100_000n],
      ['payment_fee', 3_500n],
    ]);
    const { main } = await merchantAccounts(context, merchantId);
    expect((await totals(context.db, main.id)).available).toBe(100_000n);
  });
});

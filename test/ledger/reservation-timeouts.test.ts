// Reservations with a timeout: past it they cannot be posted, and the expiry
// worker voids them so the money is available again, once, whatever races it.
import { describe, expect, it } from 'vitest';
import { inTransaction } from '../../src/db/transaction.ts';
import { findAccountsByIds } from '../../src/ledger/ledger-repository.ts';
import { findTransfer, post, reserve, transfer, voidPending } from '../../src/ledger/ledger-service.ts';
import { createReservationExpiryWorker, expiryVoidId } from '../../src/ledger/reservation-expiry-worker.ts';
import { backends } from '../support/databases.ts';
import { fund, merchantAccounts, newMerchantId, useLedgerDatabase } from './ledger-support.ts';
import { uniqueName } from '../support/seeded-random.ts';

describe.each(backends)('reservation timeouts on %s', (backend) => {
  const environment = useLedgerDatabase(backend);
  const unique = (label: string) => uniqueName(`${label}:${backend}`);

  async function fundedAccounts(amount: bigint) {
    const { context } = environment();
    const accounts = await merchantAccounts(context, await newMerchantId(context));
    await fund(context, accounts.settlement.id, accounts.main.id, amount);
    return accounts;
  }

  async function available(accountId: string): Promise<bigint> {
    const [row] = await findAccountsByIds(environment().context.db, [accountId]);
    return row!.credits_posted - row!.debits_posted - row!.debits_pending;
  }

  it('an expired reservation cannot be posted; the worker voids it and the money is available again', async () => {
    const { context, clock } = environment();
    const { main, payout } = await fundedAccounts(5_000n);
    const id = unique('hold');
    const reservation = await inTransaction(context.db, (tx) =>
      reserve(tx, context.clock, {
        id,
        debitAccountId: main.id,
        creditAccountId: payout.id,
        amount: 2_000n,
        type: 'payout',
        reference: { type: 'test', id: 'timeout' },
        timeoutSeconds: 60,
      }),
    );
    expect(reservation.expiresAt).toEqual(new Date(clock.now().getTime() + 60_000));
    expect(await available(main.id)).toBe(3_000n);

    const worker = createReservationExpiryWorker(context);
    clock.advance(59_000);
    expect(await worker.runOnce()).toBe(0);
    clock.advance(1_000);
    await expect(
      inTransaction(context.db, (tx) => post(tx, context.clock, { id: unique('post'), pendingId: id })),
    ).rejects.toMatchObject({
      code: 'invalid_state',
      message: expect.stringContaining('expired'),
    });
    expect(await worker.runOnce()).toBe(1);
    expect(await available(main.id)).toBe(5_000n);
    expect((await findTransfer(context.db, id))?.currentStatus).toBe('voided');
    expect((await findTransfer(context.db, expiryVoidId(reservation.transferId)))?.status).toBe('voided');
    // Nothing left to do, and a second pass changes nothing.
    expect(await worker.runOnce()).toBe(0);
    expect(await available(main.id)).toBe(5_000n);
  });

  it('a reservation posted before its timeout is left alone; one without a timeout never expires', async () => {
    const { context, clock } = environment();
    const { main, payout } = await fundedAccounts(5_000n);
    const timed = unique('timed');
    const open = unique('open');
    await inTransaction(context.db, async (tx) => {
      await reserve(tx, context.clock, {
        id: timed,
        debitAccountId: main.id,
        creditAccountId: payout.id,
        amount: 1_000n,
        type: 'payout',
        reference: { type: 'test', id: 't' },
        timeoutSeconds: 10,
      });
      await reserve(tx, context.clock, {
        id: open,
        debitAccountId: main.id,
        creditAccountId: payout.id,
        amount: 1_000n,
        type: 'payout',
        reference: { type: 'test', id: 'o' },
      });
    });
    const postId = unique('post');
    await inTransaction(context.db, (tx) => post(tx, context.clock, { id: postId, pendingId: timed }));
    clock.advance(3_600_000);
    // A repeat of that post after the timeout is still answered as the repeat it is.
    expect(
      (await inTransaction(context.db, (tx) => post(tx, context.clock, { id: postId, pendingId: timed }))).replayed,
    ).toBe(true);
    expect(await createReservationExpiryWorker(context).runOnce()).toBe(0);
    expect((await findTransfer(context.db, timed))?.currentStatus).toBe('posted');
    expect((await findTransfer(context.db, open))?.currentStatus).toBe('pending');
    expect(await available(main.id)).toBe(3_000n);
  });

  it("workers racing the owner's void close the reservation once", async () => {
    const { context, clock } = environment();
    const { main, payout } = await fundedAccounts(5_000n);
    const id = unique('hold');
    await inTransaction(context.db, (tx) =>
      reserve(tx, context.clock, {
        id,
        debitAccountId: main.id,
        creditAccountId: payout.id,
        amount: 2_000n,
        type: 'payout',
        reference: { type: 'test', id: 'race' },
        timeoutSeconds: 5,
      }),
    );
    clock.advance(5_000);
    const owner = inTransaction(context.db, (tx) =>
      voidPending(tx, context.clock, { id: unique('owner-void'), pendingId: id }),
    );
    const workers = [1, 2, 3].map(() => createReservationExpiryWorker(context).runOnce());
    const outcomes = await Promise.allSettled([owner, ...workers]);
    const voidsByWorkers = outcomes
      .slice(1)
      .reduce((sum, outcome) => sum + (outcome.status === 'fulfilled' ? (outcome.value as number) : 0), 0);
    const ownerWon = outcomes[0]!.status === 'fulfilled';
    expect(voidsByWorkers + (ownerWon ? 1 : 0)).toBe(1);
    for (const outcome of outcomes.slice(1)) expect(outcome.status).toBe('fulfilled');
    expect(await available(main.id)).toBe(5_000n);
  });

  it('refuses a timeout on a plain transfer and a timeout out of range', async () => {
    const { context } = environment();
    const { main, payout } = await fundedAccounts(5_000n);
    const base = {
      debitAccountId: main.id,
      creditAccountId: payout.id,
      amount: 1n,
      type: 'payout' as const,
      reference: { type: 'test', id: 'bad' },
    };
    await expect(
      inTransaction(context.db, (tx) => transfer(tx, context.clock, { ...base, id: unique('t'), timeoutSeconds: 5 })),
    ).rejects.toMatchObject({ code: 'invalid_request' });
    for (const timeoutSeconds of [0, 1.5, 31 * 24 * 3600]) {
      await expect(
        inTransaction(context.db, (tx) => reserve(tx, context.clock, { ...base, id: unique('r'), timeoutSeconds })),
      ).rejects.toMatchObject({ code: 'invalid_request' });
    }
  });
});

// Property: any sequence of transfers, reservations, posts, voids and repeats
// leaves the database exactly where a plain in-memory model of the rules says,
// refuses exactly what the model refuses, and keeps every invariant
// (checked after the test by useLedgerDatabase).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { inTransaction } from '../../src/db/transaction.ts';
import { findAccountsByIds } from '../../src/ledger/ledger-repository.ts';
import { executeLinked, type LedgerRequest } from '../../src/ledger/ledger-service.ts';
import { AppError } from '../../src/errors.ts';
import { backends } from '../support/databases.ts';
import { merchantAccounts, newMerchantId, useLedgerDatabase } from './ledger-support.ts';

type Command =
  | { kind: 'transfer' | 'reserve'; from: number; step: number; amount: bigint }
  | { kind: 'post'; which: number; percent: number | null }
  | { kind: 'void'; which: number }
  | { kind: 'repeat'; which: number };

const commandArbitrary: fc.Arbitrary<Command> = fc.oneof(
  fc.record({
    kind: fc.constantFrom('transfer' as const, 'reserve' as const),
    from: fc.nat(2),
    step: fc.integer({ min: 1, max: 2 }),
    amount: fc.bigInt({ min: 1n, max: 5_000n }),
  }),
  fc.record({
    kind: fc.constant('post' as const),
    which: fc.nat(),
    percent: fc.option(fc.integer({ min: 1, max: 100 }), { nil: null }),
  }),
  fc.record({ kind: fc.constant('void' as const), which: fc.nat() }),
  fc.record({ kind: fc.constant('repeat' as const), which: fc.nat() }),
);

interface ModelAccount {
  guarded: boolean;
  debitsPending: bigint;
  debitsPosted: bigint;
  creditsPending: bigint;
  creditsPosted: bigint;
}

interface ModelReservation {
  key: string;
  from: number;
  to: number;
  amount: bigint;
  state: 'open' | 'posted' | 'voided';
}

describe.each(backends)('ledger against an in-memory model on %s', (backend) => {
  const environment = useLedgerDatabase(backend);
  let runNumber = 0;

  it('random transfer/reserve/post/void/repeat sequences give the model balances and refusals', async () => {
    const { context } = environment();
    await fc.assert(
      fc.asyncProperty(fc.array(commandArbitrary, { minLength: 1, maxLength: 25 }), async (commands) => {
        runNumber += 1;
        const merchantId = await newMerchantId(context);
        const { main, payout, settlement } = await merchantAccounts(context, merchantId);
        const ids = [main.id, payout.id, settlement.id];
        const [settlementStart] = await findAccountsByIds(context.db, [settlement.id]);
        const model: ModelAccount[] = [
          { guarded: true, debitsPending: 0n, debitsPosted: 0n, creditsPending: 0n, creditsPosted: 0n },
          { guarded: true, debitsPending: 0n, debitsPosted: 0n, creditsPending: 0n, creditsPosted: 0n },
          {
            guarded: false,
            debitsPending: settlementStart!.debits_pending,
            debitsPosted: settlementStart!.debits_posted,
            creditsPending: settlementStart!.credits_pending,
            creditsPosted: settlementStart!.credits_posted,
          },
        ];
        const reservations: ModelReservation[] = [];
        const done: LedgerRequest[] = [];
        let counter = 0;
        const key = (label: string) => `model:${backend}:${runNumber}:${++counter}:${label}`;

        for (const command of commands) {
          let request: LedgerRequest;
          let expected: 'ok' | 'replayed' | 'insufficient_funds' | 'invalid_state';
          let apply = () => {};
          if (command.kind === 'transfer' || command.kind === 'reserve') {
            const from = command.from;
            const to = (from + command.step) % 3;
            const debit = model[from]!;
            const credit = model[to]!;
            const amount = command.amount;
            request = {
              action: command.kind,
              id: key(command.kind),
              debitAccountId: ids[from]!,
              creditAccountId: ids[to]!,
              amount,
              type: command.kind === 'transfer' ? 'transfer' : 'payout',
              reference: { type: 'model', id: String(counter) },
            };
            const refused = debit.guarded && debit.debitsPending + debit.debitsPosted + amount > debit.creditsPosted;
            expected = refused ? 'insufficient_funds' : 'ok';
            if (command.kind === 'transfer') {
              apply = () => {
                debit.debitsPosted += amount;
                credit.creditsPosted += amount;
              };
            } else {
              const reservation: ModelReservation = { key: request.id, from, to, amount, state: 'open' };
              apply = () => {
                debit.debitsPending += amount;
                credit.creditsPending += amount;
                reservations.push(reservation);
              };
            }
          } else if (command.kind === 'post' || command.kind === 'void') {
            if (reservations.length === 0) continue;
            const reservation = reservations[command.which % reservations.length]!;
            const debit = model[reservation.from]!;
            const credit = model[reservation.to]!;
            if (command.kind === 'post') {
              const amount =
                command.percent === null ? undefined : (reservation.amount * BigInt(command.percent) + 99n) / 100n;
              request = { action: 'post', id: key('post'), pendingId: reservation.key, amount };
              apply = () => {
                const posted = amount ?? reservation.amount;
                debit.debitsPending -= reservation.amount;
                debit.debitsPosted += posted;
                credit.creditsPending -= reservation.amount;
                credit.creditsPosted += posted;
                reservation.state = 'posted';
              };
            } else {
              request = { action: 'void', id: key('void'), pendingId: reservation.key };
              apply = () => {
                debit.debitsPending -= reservation.amount;
                credit.creditsPending -= reservation.amount;
                reservation.state = 'voided';
              };
            }
            expected = reservation.state === 'open' ? 'ok' : 'invalid_state';
          } else if (command.kind === 'repeat') {
            if (done.length === 0) continue;
            request = done[command.which % done.length]!;
            expected = 'replayed';
          } else {
            continue;
          }

          let outcome: string;
          try {
            const result = await inTransaction(context.db, (tx) => executeLinked(tx, context.clock, [request]));
            outcome = result.replayed ? 'replayed' : 'ok';
          } catch (error) {
            if (!(error instanceof AppError)) throw error;
            outcome = error.code;
          }
          expect(outcome, `${request.action} ${request.id}`).toBe(expected);
          if (outcome === 'ok') {
            apply();
            done.push(request);
          }
        }

        const rows = await findAccountsByIds(context.db, ids);
        for (const [index, id] of ids.entries()) {
          const row = rows.find((candidate) => candidate.id === id)!;
          const expected = model[index]!;
          expect({
            dp: row.debits_pending,
            dpo: row.debits_posted,
            cp: row.credits_pending,
            cpo: row.credits_posted,
          }).toEqual({
            dp: expected.debitsPending,
            dpo: expected.debitsPosted,
            cp: expected.creditsPending,
            cpo: expected.creditsPosted,
          });
        }
      }),
      { numRuns: backend === 'pglite' ? 20 : 40 },
    );
  });
});

// The fan-out reservation (one account to several, as CTEs of a caller's one
// statement, which a payout's creation uses): the same money as executeLinked of
// the legs' reservations (transfers, chain, history entries, totals); a refusal
// writes nothing and is explained; concurrent fan-outs never overdraw.
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import type { Db } from '../../src/db/transaction.ts';
import { inTransaction } from '../../src/db/transaction.ts';
import { InsufficientFundsError, InvalidRequestError } from '../../src/errors.ts';
import { ensureAccounts, systemAccountKey } from '../../src/ledger/ledger-accounts.ts';
import { findAccountsByIds } from '../../src/ledger/ledger-repository.ts';
import {
  executeLinked,
  explainUnwrittenReservation,
  fanOutReservations,
  type FanOutReservation,
} from '../../src/ledger/ledger-service.ts';
import type { Clock } from '../../src/clock.ts';
import { backends } from '../support/databases.ts';
import { fund, merchantAccounts, newMerchantId, useLedgerDatabase } from './ledger-support.ts';
import { uniqueName } from '../support/seeded-random.ts';

/** The reservation alone in one statement; true when written. */
async function runFanOut(db: Db, clock: Clock, request: FanOutReservation): Promise<boolean> {
  return (await runFanOuts(db, clock, [request]))[0]!;
}

/** Several reservations in one statement; for each, whether it was written. */
async function runFanOuts(db: Db, clock: Clock, requests: readonly FanOutReservation[]): Promise<boolean[]> {
  const { ctes, writtenCte } = fanOutReservations(clock, requests);
  const result = await sql<{
    reference_id: string;
  }>`with recursive ${ctes} select reference_id from ${sql.table(writtenCte)}`.execute(db);
  const written = new Set(result.rows.map((row) => row.reference_id));
  return requests.map((request) => written.has(request.reference.id));
}

describe.each(backends)('fan-out reservations on %s', (backend) => {
  const environment = useLedgerDatabase(backend, { poolSize: 20 });

  async function setUp(funding: bigint) {
    const { context } = environment();
    const merchant = await merchantAccounts(context, await newMerchantId(context));
    if (funding > 0n) await fund(context, merchant.settlement.id, merchant.main.id, funding);
    const [fees, hot, other] = await inTransaction(context.db, (tx) =>
      ensureAccounts(tx, context.clock, [
        systemAccountKey('sandbox', 'fees', 'RUB'),
        systemAccountKey('sandbox', 'hot_wallet', 'RUB'),
        systemAccountKey('live', 'fees', 'RUB'),
      ]),
    );
    return { merchant, fees: fees!, hot: hot!, liveFees: other! };
  }

  const fanOutOf = (debit: string, legs: [string, bigint][], tag: string): FanOutReservation => ({
    debitAccountId: debit,
    legs: legs.map(([creditAccountId, amount], index) => ({
      id: `fan-out:${tag}:${index}`,
      creditAccountId,
      amount,
      type: index === 0 ? 'payout' : 'payout_fee',
    })),
    reference: { type: 'payout', id: tag },
  });

  it('writes what executeLinked of the same reservations writes: transfers of one chain, history entries, totals', async () => {
    const { context } = environment();
    const a = await setUp(1_000n);
    const b = await setUp(1_000n);
    const tagA = uniqueName('a');
    const tagB = uniqueName('b');
    expect(
      await runFanOut(
        context.db,
        context.clock,
        fanOutOf(
          a.merchant.main.id,
          [
            [a.hot.id, 300n],
            [a.fees.id, 20n],
          ],
          tagA,
        ),
      ),
    ).toBe(true);
    await inTransaction(context.db, (tx) =>
      executeLinked(
        tx,
        context.clock,
        fanOutOf(
          b.merchant.main.id,
          [
            [b.hot.id, 300n],
            [b.fees.id, 20n],
          ],
          tagB,
        ).legs.map((leg) => ({
          action: 'reserve' as const,
          id: leg.id,
          debitAccountId: b.merchant.main.id,
          creditAccountId: leg.creditAccountId,
          amount: leg.amount,
          type: leg.type,
          reference: { type: 'payout', id: tagB },
        })),
      ),
    );
    const transfersOf = async (tag: string) =>
      context.db
        .selectFrom('ledger_transfers')
        .selectAll()
        .where('idempotency_key', 'like', `fan-out:${tag}:%`)
        .orderBy('idempotency_key')
        .execute();
    const [fanned, linked] = [await transfersOf(tagA), await transfersOf(tagB)];
    expect(fanned).toHaveLength(2);
    const shape = (rows: typeof fanned) =>
      rows.map((row) => ({
        amount: row.amount,
        status: row.status,
        type: row.type,
        pending_id: row.pending_id,
        sameChain: row.chain_id === rows[0]!.id,
        currency: row.currency,
        expires_at: row.expires_at,
      }));
    expect(shape(fanned)).toEqual(shape(linked));
    const historyOf = async (accountId: string) =>
      (
        await context.db
          .selectFrom('ledger_operations')
          .select(['amount', 'balance_after', 'transfer_id'])
          .where('account_id', '=', accountId)
          .orderBy('seq')
          .execute()
      ).map((row) => [row.amount, row.balance_after]);
    expect(await historyOf(a.merchant.main.id)).toEqual(await historyOf(b.merchant.main.id));
    expect(await historyOf(a.merchant.main.id)).toEqual([
      [1_000n, 1_000n],
      [-300n, 700n],
      [-20n, 680n],
    ]);
    const [mainA] = await findAccountsByIds(context.db, [a.merchant.main.id]);
    const [mainB] = await findAccountsByIds(context.db, [b.merchant.main.id]);
    expect([mainA!.debits_pending, mainA!.credits_posted]).toEqual([mainB!.debits_pending, mainB!.credits_posted]);
    expect(mainA!.debits_pending).toBe(320n);
  });

  it('not enough available: nothing written, explained as insufficient_funds; a repeat of written ids is refused', async () => {
    const { context } = environment();
    const a = await setUp(100n);
    const request = fanOutOf(
      a.merchant.main.id,
      [
        [a.hot.id, 90n],
        [a.fees.id, 20n],
      ],
      uniqueName('poor'),
    );
    expect(await runFanOut(context.db, context.clock, request)).toBe(false);
    expect(
      await context.db
        .selectFrom('ledger_transfers')
        .select('id')
        .where('idempotency_key', 'like', `${request.legs[0]!.id.slice(0, -2)}%`)
        .execute(),
    ).toEqual([]);
    const [main] = await findAccountsByIds(context.db, [a.merchant.main.id]);
    expect(main!.debits_pending).toBe(0n);
    await expect(explainUnwrittenReservation(context.db, request)).rejects.toBeInstanceOf(InsufficientFundsError);

    const affordable = fanOutOf(
      a.merchant.main.id,
      [
        [a.hot.id, 80n],
        [a.fees.id, 20n],
      ],
      uniqueName('rich'),
    );
    expect(await runFanOut(context.db, context.clock, affordable)).toBe(true);
    expect(await runFanOut(context.db, context.clock, { ...affordable })).toBe(false); // its ids exist: never twice
  });

  it('accounts of different books are refused and explained', async () => {
    const { context } = environment();
    const a = await setUp(1_000n);
    const request = fanOutOf(
      a.merchant.main.id,
      [
        [a.hot.id, 10n],
        [a.liveFees.id, 1n],
      ],
      uniqueName('books'),
    );
    expect(await runFanOut(context.db, context.clock, request)).toBe(false);
    await expect(explainUnwrittenReservation(context.db, request)).rejects.toBeInstanceOf(InvalidRequestError);
  });

  it('refuses malformed requests before writing', () => {
    const { context } = environment();
    expect(() =>
      fanOutReservations(context.clock, [{ debitAccountId: 'x', legs: [], reference: { type: 'payout', id: 'p' } }]),
    ).toThrow(InvalidRequestError);
    expect(() => fanOutReservations(context.clock, [])).toThrow(InvalidRequestError);
    expect(() =>
      fanOutReservations(context.clock, [
        {
          debitAccountId: 'x',
          legs: [
            { id: 'l1', creditAccountId: 'y', amount: 1n, type: 'payout' },
            { id: 'l2', creditAccountId: 'y', amount: 1n, type: 'payout_fee' },
          ],
          reference: { type: 'payout', id: 'p' },
        },
      ]),
    ).toThrow(InvalidRequestError);
    expect(() =>
      fanOutReservations(context.clock, [
        {
          debitAccountId: 'x',
          legs: [{ id: 'l1', creditAccountId: 'y', amount: 0n, type: 'payout' }],
          reference: { type: 'payout', id: 'p' },
        },
      ]),
    ).toThrow(InvalidRequestError);
  });

  it('many at once against one balance: exactly as many as it affords, never overdrawn', async () => {
    const { context } = environment();
    const a = await setUp(1_000n);
    const attempts = 60;
    const results = await Promise.all(
      Array.from({ length: attempts }, (_, index) =>
        runFanOut(
          context.db,
          context.clock,
          fanOutOf(
            a.merchant.main.id,
            [
              [a.hot.id, 90n],
              [a.fees.id, 10n],
            ],
            uniqueName(`race-${index}`),
          ),
        ),
      ),
    );
    expect(results.filter(Boolean)).toHaveLength(10);
    const [main] = await findAccountsByIds(context.db, [a.merchant.main.id]);
    expect(main!.debits_pending).toBe(1_000n);
    expect(main!.credits_posted - main!.debits_posted - main!.debits_pending).toBe(0n);
  });

  it('several in one statement (payouts committed together): each written or refused on its own, shared credit accounts summed', async () => {
    const { context } = environment();
    const rich = await setUp(1_000n);
    const poor = await setUp(50n);
    const other = await setUp(500n);
    // The three share the book's hot-wallet and fees accounts (setUp ensures the same system accounts).
    const tags = [uniqueName('rich'), uniqueName('poor'), uniqueName('other')];
    const requests = [
      fanOutOf(
        rich.merchant.main.id,
        [
          [rich.hot.id, 300n],
          [rich.fees.id, 20n],
        ],
        tags[0]!,
      ),
      fanOutOf(
        poor.merchant.main.id,
        [
          [poor.hot.id, 90n],
          [poor.fees.id, 20n],
        ],
        tags[1]!,
      ),
      fanOutOf(
        other.merchant.main.id,
        [
          [other.hot.id, 200n],
          [other.fees.id, 5n],
        ],
        tags[2]!,
      ),
    ];
    const before = new Map(
      (await findAccountsByIds(context.db, [rich.hot.id, rich.fees.id])).map((row) => [row.id, row.credits_pending]),
    );
    expect(await runFanOuts(context.db, context.clock, requests)).toEqual([true, false, true]);
    const balances = new Map(
      (
        await findAccountsByIds(context.db, [
          rich.merchant.main.id,
          poor.merchant.main.id,
          other.merchant.main.id,
          rich.hot.id,
          rich.fees.id,
        ])
      ).map((row) => [row.id, row]),
    );
    expect(balances.get(rich.merchant.main.id)!.debits_pending).toBe(320n);
    expect(balances.get(poor.merchant.main.id)!.debits_pending).toBe(0n);
    expect(balances.get(other.merchant.main.id)!.debits_pending).toBe(205n);
    expect(balances.get(rich.hot.id)!.credits_pending - before.get(rich.hot.id)!).toBe(500n);
    expect(balances.get(rich.fees.id)!.credits_pending - before.get(rich.fees.id)!).toBe(25n);
    const transfers = await context.db
      .selectFrom('ledger_transfers')
      .selectAll()
      .where('reference_id', 'in', tags)
      .orderBy('idempotency_key')
      .execute();
    expect(transfers.map((row) => [row.reference_id, row.amount, row.status])).toEqual([
      [tags[2], 200n, 'pending'],
      [tags[2], 5n, 'pending'],
      [tags[0], 300n, 'pending'],
      [tags[0], 20n, 'pending'],
    ]);
    // Each written fan-out is one chain of its own, as alone.
    const chains = new Map(transfers.map((row) => [row.reference_id, row.chain_id]));
    expect(new Set(chains.values()).size).toBe(2);
    for (const row of transfers) expect(row.chain_id).toBe(chains.get(row.reference_id));
    const history = async (accountId: string) =>
      (
        await context.db
          .selectFrom('ledger_operations')
          .select(['amount', 'balance_after'])
          .where('account_id', '=', accountId)
          .orderBy('seq')
          .execute()
      ).map((row) => [row.amount, row.balance_after]);
    expect(await history(rich.merchant.main.id)).toEqual([
      [1_000n, 1_000n],
      [-300n, 700n],
      [-20n, 680n],
    ]);
    expect(await history(poor.merchant.main.id)).toEqual([[50n, 50n]]);
    await expect(explainUnwrittenReservation(context.db, requests[1]!)).rejects.toBeInstanceOf(InsufficientFundsError);
  });

  it('several in one statement must credit none of the accounts they debit, under different references', () => {
    const { context } = environment();
    const request = (debit: string, credit: string, reference: string): FanOutReservation => ({
      debitAccountId: debit,
      legs: [{ id: `${reference}:0`, creditAccountId: credit, amount: 1n, type: 'payout' }],
      reference: { type: 'payout', id: reference },
    });
    expect(() => fanOutReservations(context.clock, [request('a', 'h', 'p1'), request('b', 'a', 'p2')])).toThrow(
      InvalidRequestError,
    );
    expect(() => fanOutReservations(context.clock, [request('a', 'h', 'p1'), request('b', 'h', 'p1')])).toThrow(
      InvalidRequestError,
    );
  });

  it('statements of several at once against shared accounts: every merchant gets exactly what it affords', async () => {
    const { context } = environment();
    const merchants = await Promise.all(Array.from({ length: 6 }, () => setUp(300n)));
    // 6 rounds of one fan-out per merchant (100 each): 3 afford, 3 are refused; the rounds run at once.
    const rounds = Array.from({ length: 6 }, (_, round) =>
      merchants.map((m, index) =>
        fanOutOf(
          m.merchant.main.id,
          [
            [m.hot.id, 90n],
            [m.fees.id, 10n],
          ],
          uniqueName(`round-${round}-${index}`),
        ),
      ),
    );
    const results = await Promise.all(rounds.map((round) => runFanOuts(context.db, context.clock, round)));
    for (let index = 0; index < merchants.length; index++)
      expect(results.filter((round) => round[index]).length).toBe(3);
    for (const m of merchants) {
      const [main] = await findAccountsByIds(context.db, [m.merchant.main.id]);
      expect(main!.credits_posted - main!.debits_posted - main!.debits_pending).toBe(0n);
    }
  });

  it('several of one debit account in one statement: taken in order while it affords each, a refused one leaving the next its chance', async () => {
    const { context } = environment();
    const a = await setUp(100n);
    const tag = uniqueName('walk');
    const requests = [60n, 50n, 30n, 20n, 10n].map((total, index) =>
      fanOutOf(
        a.merchant.main.id,
        [
          [a.hot.id, total - 5n],
          [a.fees.id, 5n],
        ],
        `${tag}-${index}`,
      ),
    );
    // 60 taken (40 left), 50 refused, 30 taken (10 left), 20 refused, 10 taken (0 left).
    expect(await runFanOuts(context.db, context.clock, requests)).toEqual([true, false, true, false, true]);
    const [main] = await findAccountsByIds(context.db, [a.merchant.main.id]);
    expect(main!.debits_pending).toBe(100n);
    const history = (
      await context.db
        .selectFrom('ledger_operations')
        .select(['amount', 'balance_after'])
        .where('account_id', '=', a.merchant.main.id)
        .orderBy('seq')
        .execute()
    ).map((row) => [row.amount, row.balance_after]);
    expect(history).toEqual([
      [100n, 100n],
      [-55n, 45n],
      [-5n, 40n],
      [-25n, 15n],
      [-5n, 10n],
      [-5n, 5n],
      [-5n, 0n],
    ]);
    await expect(explainUnwrittenReservation(context.db, requests[1]!)).rejects.toBeInstanceOf(InsufficientFundsError);
  });

  it('statements of several fan-outs of one balance at once: exactly as many as it affords, never overdrawn', async () => {
    const { context } = environment();
    const a = await setUp(1_000n);
    const statements = Array.from({ length: 8 }, (_, round) =>
      Array.from({ length: 6 }, (_, index) =>
        fanOutOf(
          a.merchant.main.id,
          [
            [a.hot.id, 90n],
            [a.fees.id, 10n],
          ],
          uniqueName(`many-${round}-${index}`),
        ),
      ),
    );
    const results = await Promise.all(statements.map((requests) => runFanOuts(context.db, context.clock, requests)));
    expect(results.flat().filter(Boolean)).toHaveLength(10);
    const [main] = await findAccountsByIds(context.db, [a.merchant.main.id]);
    expect(main!.debits_pending).toBe(1_000n);
    expect(main!.credits_posted - main!.debits_posted - main!.debits_pending).toBe(0n);
    const history = await context.db
      .selectFrom('ledger_operations')
      .select(['amount', 'balance_after'])
      .where('account_id', '=', a.merchant.main.id)
      .orderBy('seq')
      .execute();
    let balance = 0n;
    for (const entry of history) {
      balance += entry.amount;
      expect(entry.balance_after).toBe(balance);
    }
  });
});

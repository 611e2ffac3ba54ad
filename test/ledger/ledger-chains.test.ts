// Linked chains: large enough for a 500-item batch payout (an amount and a fee
// reserved per item under one acceptance), and all or nothing even when the
// caller swallows the ledger's error and commits its transaction.
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { inTransaction, type Db } from '../../src/db/transaction.ts';
import { ensureAccounts, merchantAccountKey, systemAccountKey } from '../../src/ledger/ledger-accounts.ts';
import { findAccountsByIds } from '../../src/ledger/ledger-repository.ts';
import {
  executeLinked,
  findTransfer,
  MAX_CHAIN_LENGTH,
  transfer,
  type LedgerRequest,
} from '../../src/ledger/ledger-service.ts';
import type { DatabaseBackend } from '../../src/db/database.ts';
import { backends } from '../support/databases.ts';
import { fund, merchantAccounts, newMerchantId, useLedgerDatabase } from './ledger-support.ts';
import { uniqueName } from '../support/seeded-random.ts';

/**
 * Resolves once the chain's transaction waits for the rival: on PostgreSQL, once a session of
 * this database waits for a lock (the rival's id); PGlite queues the whole transaction behind
 * the rival's, so it waits from the start.
 */
async function chainWaitingForRival(backend: DatabaseBackend, db: Db): Promise<void> {
  if (backend !== 'postgres') return;
  const lockWaiters = async () =>
    (
      await sql<{
        waiting: number;
      }>`select count(*)::int as waiting from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`.execute(
        db,
      )
    ).rows[0]!.waiting;
  await expect.poll(lockWaiters, { timeout: 240_000, interval: 10 }).toBeGreaterThan(0);
}

describe.each(backends)('linked ledger chains on %s', (backend) => {
  const environment = useLedgerDatabase(backend);
  const unique = (label: string) => uniqueName(`${label}:${backend}`);

  it('a 500-item batch (1,000 linked reservations) is accepted whole; a longer chain is refused', async () => {
    const { context } = environment();
    const merchantId = await newMerchantId(context);
    const { main, payout, settlement } = await merchantAccounts(context, merchantId, 'USDT');
    const [fees] = await inTransaction(context.db, (tx) =>
      ensureAccounts(tx, context.clock, [systemAccountKey('sandbox', 'fees', 'USDT')]),
    );
    await fund(context, settlement.id, main.id, 1_000_000_000n);
    const batch = unique('batch');
    const chain: LedgerRequest[] = Array.from({ length: 500 }, (_, item) => [
      {
        action: 'reserve' as const,
        id: `${batch}:${item}:amount`,
        debitAccountId: main.id,
        creditAccountId: payout.id,
        amount: 1_000_000n,
        type: 'payout' as const,
        reference: { type: 'payout_batch', id: batch },
      },
      {
        action: 'reserve' as const,
        id: `${batch}:${item}:fee`,
        debitAccountId: main.id,
        creditAccountId: fees!.id,
        amount: 500_000n,
        type: 'payout_fee' as const,
        reference: { type: 'payout_batch', id: batch },
      },
    ]).flat();
    expect(chain).toHaveLength(MAX_CHAIN_LENGTH);
    const result = await inTransaction(context.db, (tx) => executeLinked(tx, context.clock, chain));
    expect(result.transfers).toHaveLength(1_000);
    expect(new Set(result.transfers.map((row) => row.chainId)).size).toBe(1);
    const [after] = await findAccountsByIds(context.db, [main.id]);
    expect(after!.debits_pending).toBe(750_000_000n);
    const tooLong = [
      ...chain.map((request) => ({ ...request, id: `${request.id}:again` })),
      { ...chain[0]!, id: unique('extra') },
    ];
    await expect(inTransaction(context.db, (tx) => executeLinked(tx, context.clock, tooLong))).rejects.toMatchObject({
      code: 'invalid_request',
    });
  });

  it('a chain racing another transaction for one of its ids is never half written, even if the caller commits anyway', async () => {
    const { context } = environment();
    const merchantId = await newMerchantId(context);
    const { main, payout, settlement } = await merchantAccounts(context, merchantId);
    await fund(context, settlement.id, main.id, 10_000n);
    const other = await newMerchantId(context);
    const [otherMain, otherPayout] = await inTransaction(context.db, (tx) =>
      ensureAccounts(tx, context.clock, [
        merchantAccountKey('sandbox', other, 'RUB', 'main'),
        merchantAccountKey('sandbox', other, 'RUB', 'payout'),
      ]),
    );
    await fund(context, settlement.id, otherMain!.id, 10_000n);
    const contested = unique('contested');
    const first = unique('first');

    // Another transaction takes the chain's second id (on other accounts, so no account lock
    // orders the two) and commits only after the chain has started writing.
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let taken!: () => void;
    const idTaken = new Promise<void>((resolve) => (taken = resolve));
    const rival = inTransaction(context.db, async (tx) => {
      await transfer(tx, context.clock, {
        id: contested,
        debitAccountId: otherMain!.id,
        creditAccountId: otherPayout!.id,
        amount: 100n,
        type: 'transfer',
        reference: { type: 'test', id: 'rival' },
      });
      taken();
      await gate;
    });
    await idTaken;

    let caught: unknown;
    // Its commit fails (PostgreSQL rolls the transaction back): handled from the start, since it may
    // settle while this test still awaits the rival (an unhandled rejection fails the run).
    const careless = inTransaction(context.db, async (tx) => {
      try {
        await executeLinked(tx, context.clock, [
          {
            action: 'transfer',
            id: first,
            debitAccountId: main.id,
            creditAccountId: payout.id,
            amount: 1_000n,
            type: 'transfer',
            reference: { type: 'test', id: 'chain' },
          },
          {
            action: 'transfer',
            id: contested,
            debitAccountId: main.id,
            creditAccountId: payout.id,
            amount: 2_000n,
            type: 'transfer',
            reference: { type: 'test', id: 'chain' },
          },
        ]);
      } catch (error) {
        caught = error; // a careless caller: swallows the error and lets its transaction commit
      }
    }).catch(() => undefined);
    await chainWaitingForRival(backend, context.db);
    release();
    await rival;
    await careless;

    expect(caught).toMatchObject({ code: 'duplicate_external_id' });
    expect(await findTransfer(context.db, first)).toBeUndefined();
    const [mainAfter, payoutAfter] = await findAccountsByIds(context.db, [main.id, payout.id].sort());
    const byId = new Map([mainAfter!, payoutAfter!].map((row) => [row.id, row]));
    expect(byId.get(main.id)!.debits_posted).toBe(0n);
    expect(byId.get(payout.id)!.credits_posted).toBe(0n);
  });
});

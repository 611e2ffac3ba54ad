// The stored-ledger check reads the ledger in batches (transfers by id, history by
// seq, accounts by id). Whatever the batch size — one row per statement, a few, or
// all in one — it must find the same broken invariants, named the same way: a batch
// edge must never hide a mismatch nor split an account's sums into a false one.
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { inTransaction, type Tx } from '../../src/db/transaction.ts';
import { checkLedgerInvariants, type CheckProgress } from '../../src/ledger/ledger-check.ts';
import { post, reserve, voidPending } from '../../src/ledger/ledger-service.ts';
import { backends } from '../support/databases.ts';
import { uniqueName } from '../support/seeded-random.ts';
import { fund, merchantAccounts, newMerchantId, useLedgerDatabase } from './ledger-support.ts';

/** Batch sizes from one row per statement to the whole ledger in one. */
const BATCH_ROWS = [1, 2, 3, 7, 100_000];

/** Breaks one invariant of each kind inside `tx` (the caller rolls it back). */
async function tamper(tx: Tx, ids: { main: string; payout: string; transferId: string }): Promise<void> {
  // Totals that no transfer gave: breaks double entry, the account's totals and its history.
  await sql`update ledger_accounts set credits_posted = credits_posted + 5 where id = ${ids.main}`.execute(tx);
  // A history entry that no longer adds up to the payout account's balance.
  await sql`update ledger_operations set amount = amount + 1
            where seq = (select max(seq) from ledger_operations where account_id = ${ids.payout})`.execute(tx);
  // A posted transfer that moves no money.
  await sql`update ledger_transfers set amount = 0 where id = ${ids.transferId}`.execute(tx);
}

for (const backend of backends) {
  describe(`the batched ledger check on ${backend}`, () => {
    const environment = useLedgerDatabase(backend);

    it('finds the same violations at every batch size, and none on a consistent ledger', async () => {
      const { context } = environment();
      const accounts = await merchantAccounts(context, await newMerchantId(context), 'USDT');
      for (const amount of [100n, 250n, 40n, 75n])
        await fund(context, accounts.settlement.id, accounts.main.id, amount);
      const reservation = () => ({
        id: uniqueName('check-reserve'),
        debitAccountId: accounts.main.id,
        creditAccountId: accounts.payout.id,
        amount: 30n,
        type: 'payout' as const,
        reference: { type: 'test', id: uniqueName('check') },
      });
      const posted = await inTransaction(context.db, async (tx) => {
        const first = await reserve(tx, context.clock, reservation());
        const second = await reserve(tx, context.clock, reservation());
        await reserve(tx, context.clock, reservation());
        await voidPending(tx, context.clock, { id: uniqueName('check-void'), pendingId: second.externalId });
        return post(tx, context.clock, { id: uniqueName('check-post'), pendingId: first.externalId, amount: 20n });
      });

      for (const batchRows of BATCH_ROWS) {
        const clean = await checkLedgerInvariants(context.db, { batchRows });
        expect(clean.violations, `batchRows ${batchRows}`).toEqual([]);
        expect(clean.transfersChecked).toBeGreaterThanOrEqual(8);
      }

      const rollback = new Error('rollback');
      const reports = await context.db
        .transaction()
        .execute(async (tx) => {
          await tamper(tx, { main: accounts.main.id, payout: accounts.payout.id, transferId: posted.transferId });
          const found = [];
          for (const batchRows of BATCH_ROWS) {
            const progress: CheckProgress[] = [];
            const report = await checkLedgerInvariants(tx, { batchRows, onProgress: (step) => progress.push(step) });
            found.push({ batchRows, report, progress });
          }
          throw Object.assign(rollback, { found });
        })
        .catch((error: unknown) => {
          if (error !== rollback) throw error;
          return (
            rollback as Error & {
              found: Array<{ batchRows: number; report: { violations: string[] }; progress: CheckProgress[] }>;
            }
          ).found;
        });

      const expected = reports.at(-1)!.report.violations;
      const text = expected.join('\n');
      expect(text).toMatch(/USDT: posted debits \d+ differ from posted credits \d+/);
      expect(text).toContain(`account ${accounts.main.id}: stored totals`);
      expect(text).toContain(`account ${accounts.payout.id}: available`);
      expect(text).toContain(`transfer ${posted.transferId}: moves no money`);
      for (const { batchRows, report, progress } of reports) {
        expect(report.violations, `batchRows ${batchRows}`).toEqual(expected);
        const historyRead = progress.filter((step) => step.phase === 'history').at(-1)!.rowsRead;
        const entries = await sql<{ n: string }>`select count(*)::text as n from ledger_operations`.execute(context.db);
        expect(historyRead, `batchRows ${batchRows}`).toBe(Number(entries.rows[0]!.n));
      }
      // One row per statement: each phase reports after every batch.
      expect(reports[0]!.progress.filter((step) => step.phase === 'transfers').length).toBeGreaterThan(8);
    });
  });
}

// PostgreSQL only (PGlite is one session, so nothing runs concurrently there):
// many clients moving money between a few accounts at once, with idempotent
// repeats, and with connections killed in the middle of their transactions.
import { sql } from 'kysely';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { AppError } from '../../src/errors.ts';
import { inTransaction, type Db } from '../../src/db/transaction.ts';
import { findAccountsByIds } from '../../src/ledger/ledger-repository.ts';
import { post, reserve, transfer, voidPending, type TransferInput } from '../../src/ledger/ledger-service.ts';
import { TEST_DATABASE_URL } from '../support/databases.ts';
import { randomIndex, randomStreamsForThisTest, type Random } from '../support/seeded-random.ts';
import { fund, merchantAccounts, newMerchantId, useLedgerDatabase } from './ledger-support.ts';

const CLIENTS = 20;
const ACCOUNTS = 10;
const FUNDING_KOPECKS = 1_000_000n;

interface Workload {
  /** Every transfer id of this workload starts with it. */
  readonly prefix: string;
  readonly accountIds: string[];
  readonly successes: TransferInput[];
}

async function openAccounts(environment: ReturnType<ReturnType<typeof useLedgerDatabase>>): Promise<string[]> {
  const { context } = environment;
  const ids: string[] = [];
  for (let merchant = 0; merchant < ACCOUNTS / 2; merchant++) {
    const accounts = await merchantAccounts(context, await newMerchantId(context));
    for (const account of [accounts.main, accounts.payout]) {
      await fund(context, accounts.settlement.id, account.id, FUNDING_KOPECKS);
      ids.push(account.id);
    }
  }
  return ids;
}

function randomTransfer(random: Random, accountIds: readonly string[], id: string): TransferInput {
  const from = randomIndex(random, accountIds.length);
  const to = (from + 1 + randomIndex(random, accountIds.length - 1)) % accountIds.length;
  return {
    id,
    debitAccountId: accountIds[from]!,
    creditAccountId: accountIds[to]!,
    amount: BigInt(1 + randomIndex(random, 400_000)),
    type: 'transfer',
    reference: { type: 'concurrency-test', id },
  };
}

/** The balances the successful transfers imply, computed in memory from the funding. */
function expectedAvailable(workload: Workload): Map<string, bigint> {
  const balances = new Map(workload.accountIds.map((id) => [id, FUNDING_KOPECKS]));
  for (const done of workload.successes) {
    balances.set(done.debitAccountId, balances.get(done.debitAccountId)! - done.amount);
    balances.set(done.creditAccountId, balances.get(done.creditAccountId)! + done.amount);
  }
  return balances;
}

async function expectBalancesMatch(db: Db, workload: Workload): Promise<void> {
  const rows = await findAccountsByIds(db, workload.accountIds);
  const expected = expectedAvailable(workload);
  let sum = 0n;
  for (const row of rows) {
    const available = row.credits_posted - row.debits_posted - row.debits_pending;
    expect(available, row.id).toBe(expected.get(row.id));
    expect(available).toBeGreaterThanOrEqual(0n);
    sum += available;
  }
  expect(sum).toBe(FUNDING_KOPECKS * BigInt(ACCOUNTS));
  const stored = await sql<{
    count: string;
  }>`select count(*)::text as count from ledger_transfers where idempotency_key like ${`${workload.prefix}:%`}`.execute(
    db,
  );
  expect(Number(stored.rows[0]!.count)).toBe(workload.successes.length);
}

/** Watches the ten accounts while the clients run: every snapshot must conserve the total and show no negative balance. */
function startObserver(db: Db, accountIds: readonly string[]): { stop(): Promise<number> } {
  let running = true;
  let snapshots = 0;
  const loop = (async () => {
    while (running) {
      const result = await sql<{ total: string; lowest: string }>`
        select sum(credits_posted - debits_posted - debits_pending)::text as total,
               min(credits_posted - debits_posted - debits_pending)::text as lowest
        from ledger_accounts where id in (${sql.join(accountIds)})`
        .execute(db)
        .catch((error: unknown) => {
          // A kill racing a COMMIT can land on the pooled connection the observer uses next.
          if (isConnectionLoss(error)) return undefined;
          throw error;
        });
      if (result === undefined) continue;
      expect(BigInt(result.rows[0]!.total)).toBe(FUNDING_KOPECKS * BigInt(ACCOUNTS));
      expect(BigInt(result.rows[0]!.lowest)).toBeGreaterThanOrEqual(0n);
      snapshots += 1;
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      return snapshots;
    },
  };
}

const KILL_MODES = ['while-running', 'before-commit', 'racing-commit'] as const;

function isConnectionLoss(error: unknown): boolean {
  const { code, message } = error as { code?: string; message?: string };
  return (
    code === '57P01' || // terminating connection due to administrator command
    code === 'ECONNRESET' ||
    /Connection terminated|not queryable|Client was closed/i.test(message ?? '')
  );
}

describe.skipIf(!TEST_DATABASE_URL)('ledger under concurrency on postgres', () => {
  const environment = useLedgerDatabase('postgres', { poolSize: CLIENTS + 4 });

  // A safety net, not a speed bound: the work takes about 30 s alone, and its 20 clients contend for
  // 10 rows, so beside another suite on two cores it slows far more than the CPU share alone explains.
  const WORKLOAD_TIMEOUT_MS = 900_000;

  it(
    '20 clients, 5,000 random transfers between 10 accounts: no negative balance, totals conserved, repeats are no-ops',
    { timeout: WORKLOAD_TIMEOUT_MS },
    async () => {
      const { context } = environment();
      const workload: Workload = { prefix: 'concurrent', accountIds: await openAccounts(environment()), successes: [] };
      const observer = startObserver(context.db, workload.accountIds);
      let refused = 0;
      let repeats = 0;
      const perClient = 5_000 / CLIENTS;
      const randomOfClient = randomStreamsForThisTest();
      await Promise.all(
        Array.from({ length: CLIENTS }, async (_, client) => {
          const random = randomOfClient(client);
          const mine: TransferInput[] = [];
          for (let index = 0; index < perClient; index++) {
            const input = randomTransfer(random, workload.accountIds, `concurrent:${client}:${index}`);
            try {
              const result = await inTransaction(context.db, (tx) => transfer(tx, context.clock, input));
              expect(result.replayed).toBe(false);
              mine.push(input);
              workload.successes.push(input);
            } catch (error) {
              if (!(error instanceof AppError) || error.code !== 'insufficient_funds') throw error;
              refused += 1;
            }
            if (mine.length > 0 && random() < 0.2) {
              const again = mine[randomIndex(random, mine.length)]!;
              const replay = await inTransaction(context.db, (tx) => transfer(tx, context.clock, again));
              expect(replay.replayed).toBe(true);
              repeats += 1;
            }
          }
        }),
      );
      const snapshots = await observer.stop();
      expect(workload.successes.length + refused).toBe(5_000);
      expect(refused).toBeGreaterThan(0); // the amounts are large enough that balances do run dry
      expect(repeats).toBeGreaterThan(0);
      expect(snapshots).toBeGreaterThan(0);
      await expectBalancesMatch(context.db, workload);
    },
  );

  it('a reservation raced by 20 clients posting and voiding it is closed exactly once', async () => {
    const { context } = environment();
    const [from, to] = await openAccounts(environment());
    for (let round = 0; round < 10; round++) {
      const reservationId = `raced:${round}`;
      await inTransaction(context.db, (tx) =>
        reserve(tx, context.clock, {
          id: reservationId,
          debitAccountId: from!,
          creditAccountId: to!,
          amount: 10_000n,
          type: 'payout',
          reference: { type: 'race', id: String(round) },
        }),
      );
      const outcomes = await Promise.all(
        Array.from({ length: CLIENTS }, (_, client) =>
          inTransaction(context.db, (tx) =>
            client % 2 === 0
              ? post(tx, context.clock, {
                  id: `raced:${round}:post:${client}`,
                  pendingId: reservationId,
                  amount: 5_000n,
                })
              : voidPending(tx, context.clock, { id: `raced:${round}:void:${client}`, pendingId: reservationId }),
          ).then(
            (result) => result.status,
            (error: unknown) => (error instanceof AppError ? error.code : Promise.reject(error)),
          ),
        ),
      );
      const winners = outcomes.filter((outcome) => outcome === 'posted' || outcome === 'voided');
      expect(winners).toHaveLength(1);
      expect(outcomes.filter((outcome) => outcome === 'invalid_state')).toHaveLength(CLIENTS - 1);
      const [row] = await findAccountsByIds(context.db, [from!]);
      expect(row!.debits_pending).toBe(0n);
    }
  });

  it('clients whose connections are killed mid-transaction (pg_terminate_backend) lose nothing and apply nothing twice', async () => {
    const { context, database } = environment();
    const workload: Workload = { prefix: 'killed', accountIds: await openAccounts(environment()), successes: [] };
    const admin = new pg.Client({ connectionString: database.url });
    await admin.connect();
    const observer = startObserver(context.db, workload.accountIds);
    let kills = 0;
    let refused = 0;
    let replays = 0;
    const pendingKills: Promise<void>[] = [];
    const perClient = 60;
    const randomOfClient = randomStreamsForThisTest();
    try {
      await Promise.all(
        Array.from({ length: CLIENTS }, async (_, client) => {
          const random = randomOfClient(client);
          for (let index = 0; index < perClient; index++) {
            const input = randomTransfer(random, workload.accountIds, `killed:${client}:${index}`);
            // Retry the same id until it is decided: applied (first time or as a replay) or refused.
            for (let attempt = 1; ; attempt++) {
              expect(attempt).toBeLessThanOrEqual(20);
              const mode =
                attempt <= 3 && random() < 0.15 ? KILL_MODES[randomIndex(random, KILL_MODES.length)]! : 'none';
              try {
                const result = await inTransaction(context.db, async (tx) => {
                  const pid = (await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(tx)).rows[0]!.pid;
                  const kill = () =>
                    admin.query('select pg_terminate_backend($1)', [pid]).then(() => void (kills += 1));
                  if (mode === 'while-running') {
                    const killing = new Promise((resolve) => setTimeout(resolve, random() * 3)).then(kill);
                    return await transfer(tx, context.clock, input).finally(() => killing);
                  }
                  const transferred = await transfer(tx, context.clock, input);
                  if (mode === 'before-commit') await kill();
                  // Racing the COMMIT: the commit may or may not land before the kill; a retry must then be a replay.
                  if (mode === 'racing-commit')
                    pendingKills.push(new Promise((resolve) => setTimeout(resolve, random())).then(kill));
                  return transferred;
                });
                if (result.replayed) replays += 1;
                workload.successes.push(input);
                break;
              } catch (error) {
                if (error instanceof AppError && error.code === 'insufficient_funds') {
                  refused += 1;
                  break;
                }
                // A racing kill may also hit another client that reused the pooled connection: any client
                // retries after a lost connection; every other failure fails the test.
                if (!isConnectionLoss(error)) throw error;
              }
            }
          }
        }),
      );
      await Promise.all(pendingKills);
    } finally {
      await admin.end();
    }
    await observer.stop();
    expect(kills).toBeGreaterThan(10);
    console.info(`killed ${kills} connections; ${replays} transfers were found already committed on retry`);
    expect(workload.successes.length + refused).toBe(CLIENTS * perClient);
    await expectBalancesMatch(context.db, workload);
  });
});

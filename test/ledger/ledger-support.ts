// Shared set-up of the ledger tests: a fresh database per file, merchants made
// through the real merchant service, and the invariant check after every test.
import { afterAll, afterEach, beforeAll, expect } from 'vitest';
import { Registry } from 'prom-client';
import { ManualClock } from '../../src/clock.ts';
import { DependencyHealth } from '../../src/health/dependency-health.ts';
import { createLogger } from '../../src/logger.ts';
import type { AppContext } from '../../src/context.ts';
import type { DatabaseBackend } from '../../src/db/database.ts';
import { inTransaction } from '../../src/db/transaction.ts';
import { ensureAccounts, merchantAccountKey, systemAccountKey } from '../../src/ledger/ledger-accounts.ts';
import { checkLedgerInvariants } from '../../src/ledger/ledger-check.ts';
import type { AccountRow } from '../../src/ledger/ledger-repository.ts';
import { transfer } from '../../src/ledger/ledger-service.ts';
import type { LedgerCurrency } from '../../src/ledger/ledger-tables.ts';
import { createMerchant } from '../../src/merchants/merchant-service.ts';
import { testConfig } from '../support/app.ts';
import { openTestDatabase, type TestDatabase } from '../support/databases.ts';
import { testKeyring } from '../support/keyring.ts';
import { uniqueName } from '../support/seeded-random.ts';

export interface LedgerTestEnvironment {
  readonly context: AppContext;
  readonly clock: ManualClock;
  readonly database: TestDatabase;
}

let counter = 0;

/** Opens a fresh database for the file and checks the ledger's invariants after every test. */
export function useLedgerDatabase(
  backend: DatabaseBackend,
  options: { poolSize?: number } = {},
): () => LedgerTestEnvironment {
  let environment: LedgerTestEnvironment | undefined;
  beforeAll(async () => {
    const database = await openTestDatabase(backend, { poolSize: options.poolSize ?? 10 });
    const clock = new ManualClock(new Date('2026-11-01T10:00:00.000Z'));
    const config = testConfig();
    const logger = createLogger(config);
    const context: AppContext = {
      db: database.db,
      backend,
      clock,
      config,
      metrics: new Registry(),
      logger,
      health: new DependencyHealth(logger),
      keyring: testKeyring,
    };
    environment = { context, clock, database };
  });
  afterEach(async () => {
    if (!environment) return;
    const report = await checkLedgerInvariants(environment.context.db);
    expect(report.violations).toEqual([]);
  });
  afterAll(async () => {
    await environment?.database.close();
  });
  return () => {
    if (!environment) throw new Error('the ledger test database is not open yet');
    return environment;
  };
}

export async function newMerchantId(context: AppContext): Promise<string> {
  const unique = uniqueName('ledger');
  const created = await createMerchant(context, {
    name: `Ledger shop ${unique}`,
    email: `ledger-${unique}@example.test`,
  });
  return created.merchant_id;
}

/** A merchant's main and payout accounts in one currency, and the gateway's settlement account. */
export async function merchantAccounts(
  context: AppContext,
  merchantId: string,
  currency: LedgerCurrency = 'RUB',
): Promise<{ main: AccountRow; payout: AccountRow; settlement: AccountRow }> {
  const [main, payout, settlement] = await inTransaction(context.db, (tx) =>
    ensureAccounts(tx, context.clock, [
      merchantAccountKey('sandbox', merchantId, currency, 'main'),
      merchantAccountKey('sandbox', merchantId, currency, 'payout'),
      systemAccountKey('sandbox', 'settlement', currency),
    ]),
  );
  return { main: main!, payout: payout!, settlement: settlement! };
}

/** Funds a merchant account from the settlement account, as a paid payment would. */
export async function fund(
  context: AppContext,
  settlementId: string,
  accountId: string,
  amount: bigint,
): Promise<void> {
  counter += 1;
  await inTransaction(context.db, (tx) =>
    transfer(tx, context.clock, {
      id: uniqueName('test-funding'),
      debitAccountId: settlementId,
      creditAccountId: accountId,
      amount,
      type: 'deposit',
      reference: { type: 'test', id: String(counter) },
    }),
  );
}

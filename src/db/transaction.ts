// The one way to write: every write path runs inside `inTransaction`, and every
// call made inside it receives the transaction (`tx`), never the root handle.
// Serialization failures and deadlocks are retried a bounded number of times.
//
// The handles are generic in the tables they see. A repository takes
// `Executor<ItsTables>`, so a query on another module's table does not compile;
// the full handle (`Db`, `Tx`) is assignable to every narrower one (Kysely is
// covariant in its tables), so callers pass it as it is.
import type { IsolationLevel, Kysely, Transaction } from 'kysely';
import type { Database } from './schema.ts';

export type Db<Tables = Database> = Kysely<Tables>;
export type Tx<Tables = Database> = Transaction<Tables>;
/** Something queries can run on: the root handle or an open transaction. */
export type Executor<Tables = Database> = Db<Tables> | Tx<Tables>;

const RETRYABLE_SQLSTATES = new Set(['40001', '40P01']); // serialization_failure, deadlock_detected
const DEFAULT_MAX_ATTEMPTS = 5;

export interface TransactionOptions {
  readonly isolationLevel?: IsolationLevel;
  readonly maxAttempts?: number;
}

function sqlState(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

export function isUniqueViolation(error: unknown, constraint?: string): boolean {
  if (sqlState(error) !== '23505') return false;
  return constraint === undefined || (error as { constraint?: string }).constraint === constraint;
}

export async function inTransaction<T, Tables = Database>(
  db: Db<Tables>,
  work: (tx: Tx<Tables>) => Promise<T>,
  options: TransactionOptions = {},
): Promise<T> {
  const maxAttempts = options.maxAttempts ?? DEFAULT_MAX_ATTEMPTS;
  for (let attempt = 1; ; attempt++) {
    try {
      let builder = db.transaction();
      if (options.isolationLevel) builder = builder.setIsolationLevel(options.isolationLevel);
      return await builder.execute(work);
    } catch (error) {
      const state = sqlState(error);
      if (attempt >= maxAttempts || state === undefined || !RETRYABLE_SQLSTATES.has(state)) throw error;
      // Back off with jitter so the transactions that collided do not collide again.
      await new Promise((resolve) => setTimeout(resolve, Math.random() * 10 * 2 ** attempt));
    }
  }
}

// Named prepared statements for the PostgreSQL pool. An unnamed statement is
// parsed and analysed by the server on every execution; a named one once per
// connection, then only bound and executed. Kysely compiles the same SQL text
// for the same query shape, so the text itself names the statement (a hash of
// it), and pg remembers per connection which names it has already prepared.
import { createHash } from 'node:crypto';
import pg from 'pg';

/** Distinct statement texts this process prepares; past it, new texts run unnamed (e.g. long IN lists of every length). */
const PREPARED_STATEMENTS_MAX = 2_000;
/**
 * Longer texts (multi-row inserts) are rarely repeated exactly; they run unnamed.
 * Statements that pass their rows as arrays repeat exactly whatever their size:
 * the payouts' creating statement is ~9.3 KB, and unnamed it was parsed and
 * planned on every run (bench:payouts, 50 merchants: PostgreSQL 0.29–0.33 ms per
 * payout against 0.22 prepared).
 */
const PREPARED_TEXT_LENGTH_MAX = 16_384;

const statementNames = new Map<string, string>();

/** The name a statement text is prepared under, or undefined when it runs unnamed. */
export function preparedStatementName(text: string): string | undefined {
  const known = statementNames.get(text);
  if (known !== undefined) return known;
  if (text.length > PREPARED_TEXT_LENGTH_MAX || statementNames.size >= PREPARED_STATEMENTS_MAX) return undefined;
  const name = `pg_${createHash('sha256').update(text).digest('base64url').slice(0, 24)}`;
  statementNames.set(text, name);
  return name;
}

type Query = pg.Client['query'];

/**
 * A pg Client that runs every parameterized text query as a named prepared
 * statement. Queries without parameters (BEGIN, COMMIT, scripts) keep the
 * simple protocol; query objects (cursors, configs) pass through untouched.
 */
export class PreparingClient extends pg.Client {
  constructor(config?: string | pg.ClientConfig) {
    super(config);
    const query = this.query.bind(this) as (...args: unknown[]) => unknown;
    this.query = ((text: unknown, values?: unknown, callback?: unknown) => {
      if (typeof text === 'string' && Array.isArray(values) && values.length > 0) {
        const name = preparedStatementName(text);
        if (name !== undefined) return query({ name, text, values }, callback);
      }
      return callback === undefined
        ? values === undefined
          ? query(text)
          : query(text, values)
        : query(text, values, callback);
    }) as Query;
  }
}

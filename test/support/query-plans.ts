// What the planner makes of the queries code runs: capture them from the real query
// builder (QueryRecorder), EXPLAIN each with its parameters, and name the plans' whole
// reads of large tables and large sorts, so a test fails on a missing index by its plan
// (rows counted by the planner, never a duration).
import {
  CompiledQuery,
  PostgresQueryCompiler,
  type Kysely,
  type KyselyPlugin,
  type QueryResult,
  type Transaction,
  type UnknownRow,
} from 'kysely';
import { afterAll, beforeAll } from 'vitest';
import type { DatabaseBackend } from '../../src/db/database.ts';
import { openTestDatabase, type TestDatabase } from './databases.ts';

/** A table with at least this many rows (reltuples, after ANALYZE) is one a whole read of would grow with its data. */
const LARGE_TABLE_ROWS = 5_000;
/** A sort of more rows than this out of a large table reads a large share of it to cut out one page. */
const LARGEST_SORT_ROWS = 1_000;

export interface PlanNode {
  readonly 'Node Type': string;
  readonly 'Relation Name'?: string;
  readonly 'Index Name'?: string;
  readonly 'Plan Rows': number;
  readonly Plans?: readonly PlanNode[];
}

/** Relations read anywhere under `node`. */
export function relationsUnder(node: PlanNode): string[] {
  return [...(node['Relation Name'] ? [node['Relation Name']] : []), ...(node.Plans ?? []).flatMap(relationsUnder)];
}

/** The whole-table reads and large sorts of a plan, as text (none when the plan reads through indexes). */
export function wholeReadsOf(node: PlanNode, large: ReadonlySet<string>): string[] {
  const own: string[] = [];
  const relation = node['Relation Name'];
  if (node['Node Type'] === 'Seq Scan' && relation && large.has(relation)) own.push(`Seq Scan ${relation}`);
  if (node['Node Type'] === 'Sort' && node['Plan Rows'] > LARGEST_SORT_ROWS) {
    const sorted = relationsUnder(node).filter((name) => large.has(name));
    if (sorted.length > 0) own.push(`Sort of ${node['Plan Rows']} rows of ${sorted.join(', ')}`);
  }
  return [...own, ...(node.Plans ?? []).flatMap((child) => wholeReadsOf(child, large))];
}

/** The plan the planner chooses for a captured query with its parameters. */
export async function planOf(db: Pick<Kysely<unknown>, 'executeQuery'>, query: CompiledQuery): Promise<PlanNode> {
  const explained = await db.executeQuery<{ 'QUERY PLAN': unknown }>(
    CompiledQuery.raw(`explain (format json) ${query.sql}`, [...query.parameters]),
  );
  const cell = explained.rows[0]!['QUERY PLAN'];
  // node-postgres parses the json column; PGlite hands it over parsed too, or as its text.
  const plan = (typeof cell === 'string' ? JSON.parse(cell) : cell) as Array<{ Plan: PlanNode }>;
  return plan[0]!.Plan;
}

/** Records the SQL and parameters of every query the app runs while `recording` is on. */
export class QueryRecorder implements KyselyPlugin {
  recording = false;
  readonly queries: CompiledQuery[] = [];
  private readonly compiler = new PostgresQueryCompiler();

  transformQuery: KyselyPlugin['transformQuery'] = (args) => {
    if (this.recording) this.queries.push(this.compiler.compileQuery(args.node, args.queryId));
    return args.node;
  };

  transformResult(args: { result: QueryResult<UnknownRow> }): Promise<QueryResult<UnknownRow>> {
    return Promise.resolve(args.result);
  }

  async during(work: () => Promise<void>): Promise<CompiledQuery[]> {
    this.queries.length = 0;
    this.recording = true;
    try {
      await work();
    } finally {
      this.recording = false;
    }
    return [...this.queries];
  }
}

/** The large tables of the current schema, by the planner's row estimates (run ANALYZE first). */
export async function largeTablesOf(db: Pick<Kysely<unknown>, 'executeQuery'>): Promise<Set<string>> {
  const tables = await db.executeQuery<{ relname: string }>(
    CompiledQuery.raw(
      `select relname from pg_class where relkind = 'r' and relnamespace = 'public'::regnamespace and reltuples >= ${LARGE_TABLE_ROWS}`,
    ),
  );
  return new Set(tables.rows.map((row) => row.relname));
}

export interface AnalyzedNode extends PlanNode {
  readonly 'Actual Rows': number;
  readonly 'Actual Loops': number;
  readonly 'Rows Removed by Filter'?: number;
  readonly 'Rows Removed by Index Recheck'?: number;
  readonly Plans?: readonly AnalyzedNode[];
}

/**
 * The rows a run of a plan read from `table`: every row its scans of the table produced or
 * threw away by a filter, on every loop. A nested-loop look-up by a unique key reads one row
 * a loop, so a page of n rows costs n such reads, while a scan that walks the table's rows
 * of a month to keep the newest 50 shows as thousands.
 */
export function rowsReadFrom(node: AnalyzedNode, table: string): number {
  const own =
    node['Relation Name'] === table
      ? (node['Actual Rows'] + (node['Rows Removed by Filter'] ?? 0) + (node['Rows Removed by Index Recheck'] ?? 0)) *
        node['Actual Loops']
      : 0;
  return own + (node.Plans ?? []).reduce((sum, child) => sum + rowsReadFrom(child, table), 0);
}

/** The plan of a captured query as it ran (EXPLAIN ANALYZE: the query runs, its rows are counted). */
export async function analyzedRunOf(
  db: Pick<Kysely<unknown>, 'executeQuery'>,
  query: CompiledQuery,
): Promise<AnalyzedNode> {
  const explained = await db.executeQuery<{ 'QUERY PLAN': unknown }>(
    CompiledQuery.raw(`explain (analyze, format json) ${query.sql}`, [...query.parameters]),
  );
  const cell = explained.rows[0]!['QUERY PLAN'];
  const plan = (typeof cell === 'string' ? JSON.parse(cell) : cell) as Array<{ Plan: AnalyzedNode }>;
  return plan[0]!.Plan;
}

/**
 * What `work` returns, run in a transaction that is then rolled back: a table changed to see
 * another plan (an index dropped, rows the statistics have not seen) is as it was afterwards.
 */
export async function rolledBack<DB, T>(db: Kysely<DB>, work: (trx: Transaction<DB>) => Promise<T>): Promise<T> {
  const rollback = new Error('rollback');
  let value: { readonly result: T } | undefined;
  await db
    .transaction()
    .execute(async (trx) => {
      value = { result: await work(trx) };
      throw rollback;
    })
    .catch((error: unknown) => {
      if (error !== rollback) throw error;
    });
  return value!.result;
}

/** The whole reads and large sorts in the plans of all these queries, each with the statement it is in. */
export async function wholeReadsOfQueries(
  db: Pick<Kysely<unknown>, 'executeQuery'>,
  queries: readonly CompiledQuery[],
  large: ReadonlySet<string>,
): Promise<Array<{ readonly read: string; readonly sql: string }>> {
  const found: Array<{ read: string; sql: string }> = [];
  for (const query of queries)
    for (const read of wholeReadsOf(await planOf(db, query), large)) found.push({ read, sql: query.sql });
  return found;
}

/**
 * The whole reads of these queries' plans with `indexes` dropped (rolled back after): a plan
 * test's negative control, showing the reads it checks would scan without the index.
 */
export async function wholeReadsWithout<DB>(
  db: Kysely<DB>,
  indexes: readonly string[],
  queries: readonly CompiledQuery[],
  large: ReadonlySet<string>,
): Promise<string[]> {
  return rolledBack(db, async (trx) => {
    for (const index of indexes) await trx.executeQuery(CompiledQuery.raw(`drop index ${index}`));
    return (await wholeReadsOfQueries(trx, queries, large)).map(({ read }) => read);
  });
}

/** Runs the statements that fill a database for a plan test (an ANALYZE among them), then names its large tables. */
async function loadForPlans(
  db: Pick<Kysely<unknown>, 'executeQuery'>,
  statements: readonly string[],
): Promise<Set<string>> {
  for (const statement of statements) await db.executeQuery(CompiledQuery.raw(statement));
  return largeTablesOf(db);
}

/** The database of a describe block's plan tests: opened and filled before its tests, closed after them. */
export function databaseForPlans(
  backend: DatabaseBackend,
  statements: () => readonly string[],
): { readonly database: TestDatabase; readonly large: ReadonlySet<string> } {
  const planned = {} as { database: TestDatabase; large: ReadonlySet<string> };
  beforeAll(async () => {
    planned.database = await openTestDatabase(backend);
    planned.large = await loadForPlans(planned.database.db, statements());
  }, 600_000);
  afterAll(async () => {
    await planned.database?.close();
  });
  return planned;
}

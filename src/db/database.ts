// Opens the gateway's database: a PostgreSQL server through a `pg` pool when a
// URL is given, otherwise the embedded PGlite (PostgreSQL in WASM) in a folder.
// Both backends run the same migrations and the same queries, and both read
// int8 columns (all money) back as `bigint`.
import { chmod, mkdir, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import type { Database } from './schema.ts';
import { listenOnPGlite, listenOnPostgres, type Notifications } from './notifications.ts';
import { PGliteDialect } from './pglite-dialect.ts';
import { PreparingClient } from './prepared-statements.ts';

export type DatabaseBackend = 'postgres' | 'pglite';

export interface DatabaseHandle {
  readonly db: Kysely<Database>;
  readonly backend: DatabaseBackend;
  /**
   * Runs `work` with exclusive use of one session on which multi-statement SQL
   * scripts can be executed (migrations). No other query of this handle shares it.
   */
  withScriptSession<T>(work: (session: ScriptSession) => Promise<T>): Promise<T>;
  /**
   * Starts listening for the database's notifications (db/notifications.ts): on a server through
   * a connection of its own, on PGlite on its session. The caller closes it before the handle.
   */
  listen(options?: { onError?: (error: unknown, message: string) => void }): Promise<Notifications>;
  /** PGlite only: a dump of the data folder, to start other instances from. */
  dumpDataDir?: (compression?: 'none' | 'gzip') => Promise<Blob>;
  close(): Promise<void>;
}

interface ScriptSession {
  /** Runs a parameterless script of one or more statements. */
  run(script: string): Promise<void>;
  /** Runs one parameterless statement and returns its rows. */
  rows<Row>(statement: string): Promise<Row[]>;
}

export interface DatabaseOptions {
  /** A postgres:// URL; when absent the embedded PGlite is used. */
  readonly url?: string | undefined;
  /** PGlite data folder; `memory://` (or undefined) keeps it in memory. */
  readonly dataDir?: string | undefined;
  readonly poolSize?: number | undefined;
  /** PostgreSQL only: bounds on every session's waits (milliseconds; 0 turns one off). */
  readonly timeouts?: SessionTimeouts | undefined;
  /** PGlite only: start from this dump of a data folder (a migrated template) instead of initdb. */
  readonly pgliteDump?: Blob | undefined;
  /**
   * PGlite only: a short-lived process (a CLI command). PostgreSQL sets up its shared
   * buffers at every start; 16 MB instead of the default 128 MB starts it about half a
   * second sooner, and one command's work fits in them.
   */
  readonly shortLived?: boolean | undefined;
}

export interface SessionTimeouts {
  /** Longest a single statement may run. */
  readonly statementMs: number;
  /** Longest a statement may wait for a row or table lock. */
  readonly lockMs: number;
  /** Longest a transaction may sit idle (a stuck caller) before the server ends its session. */
  readonly idleInTransactionMs: number;
}

const DEFAULT_SESSION_TIMEOUTS: SessionTimeouts = { statementMs: 30_000, lockMs: 10_000, idleInTransactionMs: 60_000 };

const INT8_OID = 20;

const parseInt8 = (value: string): bigint => BigInt(value);

export async function openDatabase(options: DatabaseOptions): Promise<DatabaseHandle> {
  if (options.url)
    return openPostgres(options.url, options.poolSize ?? 20, options.timeouts ?? DEFAULT_SESSION_TIMEOUTS);
  return openPGlite(options.dataDir, options.pgliteDump, options.shortLived === true);
}

function openPostgres(url: string, poolSize: number, timeouts: SessionTimeouts): DatabaseHandle {
  const pool = new pg.Pool({
    connectionString: url,
    max: poolSize,
    // Every parameterized statement is prepared once per connection (db/prepared-statements.ts).
    Client: PreparingClient,
    // Sent at connect, so every session of the pool has them: one stuck transaction or
    // runaway statement cannot hold locks, and so stall everyone else, without bound.
    statement_timeout: timeouts.statementMs,
    lock_timeout: timeouts.lockMs,
    idle_in_transaction_session_timeout: timeouts.idleInTransactionMs,
    types: {
      getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
        oid === INT8_OID ? parseInt8 : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
    },
  });
  // An idle client that loses its server (restart, pg_terminate_backend) must not crash the process.
  pool.on('error', () => undefined);
  // Nor may a checked-out one between two queries of a transaction: pg emits 'error' on the client,
  // and the pool's own listener is detached while it is checked out. The next query fails instead,
  // the transaction is abandoned and the pool discards the dead client on release.
  pool.on('connect', (client) => client.on('error', () => undefined));
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  return {
    db,
    backend: 'postgres',
    async withScriptSession(work) {
      const client = await pool.connect();
      try {
        // A script without parameters goes over the simple query protocol, which runs several statements.
        return await work({
          run: async (script) => void (await client.query(script)),
          rows: async <Row>(statement: string) => (await client.query(statement)).rows as Row[],
        });
      } finally {
        client.release();
      }
    },
    listen: (listenOptions) => listenOnPostgres({ url, onError: listenOptions?.onError }),
    close: () => db.destroy(),
  };
}

/** Makes a data folder and everything in it the owner's alone (folders 0700, files 0600), e.g. one written by an older version. */
async function makeOwnerOnly(folder: string): Promise<void> {
  await mkdir(folder, { recursive: true, mode: 0o700 });
  await chmod(folder, 0o700);
  for (const entry of await readdir(folder, { recursive: true, withFileTypes: true })) {
    const path = join(entry.parentPath, entry.name);
    if (entry.isDirectory()) await chmod(path, 0o700);
    else if (entry.isFile()) await chmod(path, 0o600);
  }
}

/** Added to PGlite.defaultStartParams: a `startParams` given replaces them. */
const SHORT_LIVED_START_PARAMS = ['-c', 'shared_buffers=16MB'];

async function openPGlite(
  dataDir: string | undefined,
  dump: Blob | undefined,
  shortLived: boolean,
): Promise<DatabaseHandle> {
  // Loaded only here: a gateway on a PostgreSQL server never needs PGlite's code in memory.
  const { PGlite, types: pgliteTypes } = await import('@electric-sql/pglite');
  const { PrivateNodeFS } = await import('./private-nodefs.ts');
  const inMemory = dataDir === undefined || dataDir.startsWith('memory://');
  if (!inMemory) await makeOwnerOnly(dataDir);
  const pglite = await PGlite.create({
    ...(inMemory ? { dataDir: 'memory://' } : { fs: new PrivateNodeFS(dataDir) }),
    ...(dump ? { loadDataDir: dump } : {}),
    ...(shortLived ? { startParams: [...PGlite.defaultStartParams, ...SHORT_LIVED_START_PARAMS] } : {}),
    parsers: { [pgliteTypes.INT8]: parseInt8 },
    serializers: { [pgliteTypes.INT8]: (value: unknown) => String(value) },
  });
  const db = new Kysely<Database>({ dialect: new PGliteDialect(pglite) });
  return {
    db,
    backend: 'pglite',
    dumpDataDir: (compression = 'none') => pglite.dumpDataDir(compression),
    listen: () => listenOnPGlite(pglite, db),
    // Holding a Kysely connection holds the dialect's session lock, so the script runs alone.
    withScriptSession: (work) =>
      db.connection().execute(() =>
        work({
          run: async (script) => void (await pglite.exec(script)),
          rows: async <Row>(statement: string) => (await pglite.query<Row>(statement)).rows,
        }),
      ),
    close: () => db.destroy(),
  };
}

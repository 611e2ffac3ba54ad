// The backends every database test runs against: PGlite always, and the
// PostgreSQL server of TEST_DATABASE_URL when it is set. Each opened database
// is fresh (its own PGlite instance, or its own database on the server) and migrated.
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { setTimeout as pause } from 'node:timers/promises';
import pg from 'pg';
import { describe, it } from 'vitest';
import {
  openDatabase,
  type DatabaseBackend,
  type DatabaseHandle,
  type SessionTimeouts,
} from '../../src/db/database.ts';
import { migrate } from '../../src/db/migrate.ts';

export const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL || undefined;

export const backends: readonly DatabaseBackend[] = TEST_DATABASE_URL ? ['pglite', 'postgres'] : ['pglite'];

export interface TestDatabase extends DatabaseHandle {
  /** For postgres: the URL of this test's own database (for child processes). */
  readonly url: string | undefined;
}

async function withAdminClient<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

export async function createServerDatabase(): Promise<string> {
  if (!TEST_DATABASE_URL) throw new Error('TEST_DATABASE_URL is not set');
  const name = `paygate_test_${randomBytes(6).toString('hex')}`;
  await withAdminClient((client) => client.query(`create database ${name}`));
  const url = new URL(TEST_DATABASE_URL);
  url.pathname = `/${name}`;
  return url.toString();
}

export async function dropServerDatabase(url: string): Promise<void> {
  const name = new URL(url).pathname.slice(1);
  // DROP DATABASE forces a checkpoint, which fails while test/health/database-storage.test.ts
  // holds its tablespace's disk full in another worker; it succeeds once that test frees it.
  for (;;) {
    try {
      await withAdminClient((client) => client.query(`drop database if exists ${name} with (force)`));
      return;
    } catch (error) {
      if (!(error instanceof Error && error.message === 'checkpoint request failed')) throw error;
      await pause(200);
    }
  }
}

// initdb and migrations take seconds on PGlite; a migrated template, dumped
// once per test process, starts a fresh instance in a few hundred milliseconds.
let pgliteTemplate: Promise<Blob> | undefined;

function migratedPGliteTemplate(): Promise<Blob> {
  pgliteTemplate ??= (async () => {
    const prepared = process.env.PAYGATE_TEST_PGLITE_TEMPLATE;
    if (prepared) return new Blob([await readFile(prepared)]);
    const handle = await openDatabase({ dataDir: 'memory://' });
    await migrate(handle);
    const dump = await handle.dumpDataDir!();
    await handle.close();
    return dump;
  })();
  return pgliteTemplate;
}

export async function openTestDatabase(
  backend: DatabaseBackend,
  options: { migrated?: boolean; poolSize?: number; timeouts?: SessionTimeouts } = {},
): Promise<TestDatabase> {
  const url = backend === 'postgres' ? await createServerDatabase() : undefined;
  const migrated = options.migrated !== false;
  const pgliteDump = backend === 'pglite' && migrated ? await migratedPGliteTemplate() : undefined;
  const handle = await openDatabase({
    url,
    dataDir: 'memory://',
    poolSize: options.poolSize ?? 10,
    pgliteDump,
    timeouts: options.timeouts,
  });
  if (migrated) await migrate(handle);
  return {
    ...handle,
    url,
    async close() {
      await handle.close();
      if (url) await dropServerDatabase(url);
    },
  };
}

/**
 * `it`/`describe` for a test that exists only against a PostgreSQL server (it kills or
 * cuts server connections, which an embedded PGlite has none of): on PGlite the test is
 * not defined at all, rather than reported as skipped, since there is nothing to run.
 */
export function itOnServer(backend: DatabaseBackend): typeof it {
  return backend === 'postgres' ? it : ((() => undefined) as unknown as typeof it);
}

export function describeOnServer(backend: DatabaseBackend): typeof describe {
  return backend === 'postgres' ? describe : ((() => undefined) as unknown as typeof describe);
}

// Applies the ordered SQL files of src/db/migrations, each in its own
// transaction together with its row in schema_migrations. Forward-only: a file
// once applied is never edited; a change is a new file. Concurrent starters on
// PostgreSQL serialize on an advisory lock, so two processes never race.
import { readdir, readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type { DatabaseHandle } from './database.ts';

const MIGRATIONS_DIR = fileURLToPath(new URL('./migrations/', import.meta.url));
// Any constant unique to Paygate; PostgreSQL advisory locks are keyed by int8.
const MIGRATION_LOCK_KEY = 7_391_000_417;

export interface MigrationFile {
  readonly version: string;
  readonly sql: string;
}

export async function readMigrationFiles(): Promise<MigrationFile[]> {
  const names = (await readdir(MIGRATIONS_DIR)).filter((name) => /^\d{4}_[a-z0-9_]+\.sql$/.test(name)).sort();
  return Promise.all(
    names.map(async (name) => ({
      version: name.replace(/\.sql$/, ''),
      sql: await readFile(MIGRATIONS_DIR + name, 'utf8'),
    })),
  );
}

/** Applies pending migrations; returns the versions it applied (empty when up to date). */
export async function migrate(handle: DatabaseHandle): Promise<string[]> {
  const files = await readMigrationFiles();
  return handle.withScriptSession(async (session) => {
    const lock = handle.backend === 'postgres';
    // A migration may rewrite a large table, so no statement bound; the lock-wait bound stays,
    // so an ALTER stuck behind a long transaction fails (and is run again) instead of
    // queueing every payment behind it.
    if (lock) await session.run('set statement_timeout = 0');
    if (lock) await session.run(`select pg_advisory_lock(${MIGRATION_LOCK_KEY})`);
    try {
      await session.run(
        'create table if not exists schema_migrations (version text primary key, applied_at timestamptz not null default now())',
      );
      const rows = await session.rows<{ version: string }>('select version from schema_migrations');
      const applied = new Set(rows.map((row) => row.version));
      const newlyApplied: string[] = [];
      for (const file of files) {
        if (applied.has(file.version)) continue;
        const insertVersion = `insert into schema_migrations (version) values ('${file.version}')`;
        try {
          await session.run(`begin;\n${file.sql}\n;${insertVersion};\ncommit;`);
        } catch (error) {
          await session.run('rollback').catch(() => undefined);
          throw new Error(`migration ${file.version} failed: ${(error as Error).message}`, { cause: error });
        }
        newlyApplied.push(file.version);
      }
      return newlyApplied;
    } finally {
      if (lock) await session.run(`select pg_advisory_unlock(${MIGRATION_LOCK_KEY}); reset statement_timeout`);
    }
  });
}

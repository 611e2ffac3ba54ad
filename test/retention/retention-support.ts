// What the retention tests share: a gateway on a fresh database whose archive
// folder is a temporary one, the retention run as the worker makes it, and the
// archive files read back.
import { createHash } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { sql } from 'kysely';
import type { Config } from '../../src/config.ts';
import type { DatabaseBackend } from '../../src/db/database.ts';
import { retentionSources } from '../../src/modules.ts';
import { retentionDeps } from '../../src/retention/retention-module.ts';
import { runRetention, type RetentionRunOptions } from '../../src/retention/retention-service.ts';
import { createTestApp, type TestApp } from '../support/app.ts';

export interface RetentionTestApp extends TestApp {
  readonly archiveDir: string;
  run(options?: Partial<RetentionRunOptions>): ReturnType<typeof runRetention>;
  /** The rows of an archive file, one parsed JSON line each. */
  archivedRows(fileName: string): Promise<unknown[]>;
  archiveFiles(): Promise<string[]>;
  sha256Of(fileName: string): Promise<string>;
  /** Rows as the archive renders them (row_to_json), for comparison. */
  rowsAsJson(query: ReturnType<typeof sql>): Promise<unknown[]>;
  partitions(table: string): Promise<string[]>;
}

export async function createRetentionTestApp(
  backend: DatabaseBackend,
  retention: Config['retention'],
): Promise<RetentionTestApp> {
  const archiveDir = await mkdtemp(join(tmpdir(), 'paygate-archive-'));
  const testApp = await createTestApp(backend, { config: { archiveDir, retention } });
  const deps = retentionDeps({ ...testApp.context, sources: retentionSources(testApp.context.config) });
  return {
    ...testApp,
    archiveDir,
    run: (options = {}) => runRetention(deps, { unitsPerSourceMax: 100, ...options }),
    async archivedRows(fileName) {
      const text = gunzipSync(await readFile(join(archiveDir, fileName))).toString('utf8');
      return text
        .split('\n')
        .filter((line) => line !== '')
        .map((line) => JSON.parse(line) as unknown);
    },
    archiveFiles: async () => (await readdir(archiveDir)).sort(),
    sha256Of: async (fileName) =>
      createHash('sha256')
        .update(await readFile(join(archiveDir, fileName)))
        .digest('hex'),
    async rowsAsJson(query) {
      const result = await sql<{ line: string }>`select row_to_json(t)::text as line from (${query}) t`.execute(
        testApp.context.db,
      );
      return result.rows.map((row) => JSON.parse(row.line) as unknown);
    },
    async partitions(table) {
      const result = await sql<{ name: string }>`
        select c.relname as name from pg_inherits i join pg_class c on c.oid = i.inhrelid
         where i.inhparent = to_regclass(${table}) order by 1`.execute(testApp.context.db);
      return result.rows.map((row) => row.name);
    },
    async close() {
      await testApp.close();
      await rm(archiveDir, { recursive: true, force: true });
    },
  };
}

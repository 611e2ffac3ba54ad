// The retention module's SQL: the archive records and the run lease.
import type { Executor } from '../db/transaction.ts';
import type { RetentionTables } from './retention-tables.ts';

export type ArchiveRecord = RetentionTables['retention_archives'];

export async function recordArchivesStarted(
  db: Executor<RetentionTables>,
  files: readonly { fileName: string; table: string; period: string }[],
  now: Date,
): Promise<void> {
  await db
    .insertInto('retention_archives')
    .values(
      files.map((file) => ({
        file_name: file.fileName,
        table_name: file.table,
        period: file.period,
        state: 'writing' as const,
        started_at: now,
      })),
    )
    .execute();
}

export async function recordArchived(
  db: Executor<RetentionTables>,
  fileName: string,
  written: { rowCount: number; sha256: string },
  now: Date,
): Promise<void> {
  await db
    .updateTable('retention_archives')
    .set({ state: 'archived', row_count: BigInt(written.rowCount), sha256: written.sha256, archived_at: now })
    .where('file_name', '=', fileName)
    .where('state', '=', 'writing')
    .execute();
}

/** Archives whose rows were never removed (a run that stopped between the file and the removal). */
export async function unfinishedArchives(db: Executor<RetentionTables>): Promise<string[]> {
  const rows = await db.selectFrom('retention_archives').select('file_name').where('state', '=', 'writing').execute();
  return rows.map((row) => row.file_name);
}

export async function forgetUnfinishedArchive(db: Executor<RetentionTables>, fileName: string): Promise<void> {
  await db.deleteFrom('retention_archives').where('file_name', '=', fileName).where('state', '=', 'writing').execute();
}

export async function listArchives(db: Executor<RetentionTables>, limit: number): Promise<ArchiveRecord[]> {
  return db
    .selectFrom('retention_archives')
    .selectAll()
    .orderBy('started_at', 'desc')
    .orderBy('file_name', 'desc')
    .limit(limit)
    .execute();
}

/** Takes or renews the run lease; true when `holder` holds it until `until`. */
export async function takeRetentionLease(
  db: Executor<RetentionTables>,
  holder: string,
  now: Date,
  until: Date,
): Promise<boolean> {
  const result = await db
    .updateTable('retention_lease')
    .set({ holder, lease_until: until })
    .where((eb) => eb.or([eb('holder', 'is', null), eb('holder', '=', holder), eb('lease_until', '<=', now)]))
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

export async function releaseRetentionLease(db: Executor<RetentionTables>, holder: string): Promise<void> {
  await db
    .updateTable('retention_lease')
    .set({ holder: null, lease_until: null })
    .where('holder', '=', holder)
    .execute();
}

export async function retentionLeaseHeldUntil(db: Executor<RetentionTables>): Promise<Date | null> {
  const row = await db.selectFrom('retention_lease').select(['holder', 'lease_until']).executeTakeFirst();
  return row?.holder ? row.lease_until : null;
}

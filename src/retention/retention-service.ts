// A retention run: for each table that ages out, rows past retention are
// written to archive files and only then removed. The order makes it
// crash-safe: the archive records are written first ('writing'), then the
// files (flushed), then one transaction removes the rows and marks the records
// 'archived'. A run that stops before that transaction leaves 'writing'
// records: the next run deletes their files and starts those rows over, so an
// archived row is in exactly one archive file and a removed row in one.
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { Clock } from '../clock.ts';
import { inTransaction, type Db } from '../db/transaction.ts';
import { removeArchiveFile, writeArchiveFile, type ArchiveFileWritten } from './archive-file.ts';
import {
  forgetUnfinishedArchive,
  listArchives,
  recordArchived,
  recordArchivesStarted,
  releaseRetentionLease,
  retentionLeaseHeldUntil,
  takeRetentionLease,
  unfinishedArchives,
} from './retention-repository.ts';
import { RetentionRowsChangedError, type RetentionSource, type RetentionUnit } from './retention-source.ts';

/** How long a run holds the lease without renewing it (it renews every page it writes). */
const LEASE_MS = 10 * 60_000;

export interface RetentionDeps {
  readonly db: Db;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly archiveDir: string;
  readonly sources: readonly RetentionSource[];
}

export interface RetentionRunOptions {
  /** Units per source at most in this run (each a month partition or a batch of 1,000 events). */
  readonly unitsPerSourceMax: number;
  /** Called between writing a unit's files and removing its rows: a test stops the run there. */
  readonly afterArchive?: ((unit: RetentionUnit) => void) | undefined;
}

interface ArchivedFile {
  readonly fileName: string;
  readonly table: string;
  readonly period: string;
  readonly rowCount: number;
  readonly sha256: string;
}

export type RetentionRunReport =
  | { readonly ran: true; readonly archived: readonly ArchivedFile[]; readonly discarded: readonly string[] }
  | { readonly ran: false; readonly leaseHeldUntil: Date | null };

export async function runRetention(deps: RetentionDeps, options: RetentionRunOptions): Promise<RetentionRunReport> {
  const holder = randomUUID();
  const renew = async () => {
    const now = deps.clock.now();
    if (!(await takeRetentionLease(deps.db, holder, now, new Date(now.getTime() + LEASE_MS))))
      throw new Error('the retention lease was lost (another run took it over)');
  };
  const now = deps.clock.now();
  if (!(await takeRetentionLease(deps.db, holder, now, new Date(now.getTime() + LEASE_MS))))
    return { ran: false, leaseHeldUntil: await retentionLeaseHeldUntil(deps.db) };
  try {
    const discarded = await discardUnfinished(deps);
    const archived: ArchivedFile[] = [];
    for (const source of deps.sources) {
      await source.prepare?.(deps.db, deps.clock.now());
      for (let count = 0; count < options.unitsPerSourceMax; count++) {
        const unit = await source.nextUnit(deps.db, deps.clock.now());
        if (unit === undefined) break;
        const files = await archiveUnit(deps, unit, renew, options.afterArchive);
        if (files === undefined) break;
        archived.push(...files);
      }
    }
    return { ran: true, archived, discarded };
  } finally {
    await releaseRetentionLease(deps.db, holder);
  }
}

/** Deletes the files of archives whose rows were never removed, and their records. */
async function discardUnfinished(deps: RetentionDeps): Promise<string[]> {
  const fileNames = await unfinishedArchives(deps.db);
  for (const fileName of fileNames) {
    await removeArchiveFile(deps.archiveDir, fileName);
    await forgetUnfinishedArchive(deps.db, fileName);
    deps.logger.warn(
      { fileName },
      'retention: discarded an archive whose rows were not removed; they are archived again',
    );
  }
  return fileNames;
}

function archiveFileName(table: string, unit: RetentionUnit): string {
  return `${table}-${unit.period}${unit.label ? `-${unit.label}` : ''}.jsonl.gz`;
}

/** Archives one unit and removes its rows; undefined when its rows changed meanwhile (left for a later run). */
async function archiveUnit(
  deps: RetentionDeps,
  unit: RetentionUnit,
  renew: () => Promise<void>,
  afterArchive: RetentionRunOptions['afterArchive'],
): Promise<ArchivedFile[] | undefined> {
  const files = unit.parts.map((part) => ({ part, fileName: archiveFileName(part.table, unit) }));
  await recordArchivesStarted(
    deps.db,
    files.map((file) => ({ fileName: file.fileName, table: file.part.table, period: unit.period })),
    deps.clock.now(),
  );
  const written = new Map<string, ArchiveFileWritten>();
  for (const file of files) {
    written.set(
      file.part.table,
      await writeArchiveFile(deps.archiveDir, file.fileName, renewing(file.part.lines(), renew)),
    );
  }
  afterArchive?.(unit);
  await renew();
  try {
    await inTransaction(deps.db, async (tx) => {
      await unit.remove(tx, new Map([...written].map(([table, file]) => [table, file.rowCount])));
      for (const file of files)
        await recordArchived(tx, file.fileName, written.get(file.part.table)!, deps.clock.now());
    });
  } catch (error) {
    if (!(error instanceof RetentionRowsChangedError)) throw error;
    deps.logger.warn(
      { err: error, period: unit.period },
      'retention: rows changed while archiving; left for a later run',
    );
    for (const file of files) {
      await removeArchiveFile(deps.archiveDir, file.fileName);
      await forgetUnfinishedArchive(deps.db, file.fileName);
    }
    return undefined;
  }
  const archived = files.map((file) => {
    const { rowCount, sha256 } = written.get(file.part.table)!;
    return { fileName: file.fileName, table: file.part.table, period: unit.period, rowCount, sha256 };
  });
  for (const file of archived) deps.logger.info(file, 'retention: archived and removed');
  return archived;
}

async function* renewing(pages: AsyncIterable<readonly string[]>, renew: () => Promise<void>) {
  for await (const page of pages) {
    yield page;
    await renew();
  }
}

/** The latest archive files, newest first, as `paygate retention status` shows them. */
export async function recentArchives(deps: Pick<RetentionDeps, 'db'>, limit: number) {
  const archives = await listArchives(deps.db, limit);
  return archives.map((archive) => ({
    file: archive.file_name,
    table: archive.table_name,
    period: archive.period,
    state: archive.state,
    rows: archive.row_count === null ? null : Number(archive.row_count),
    sha256: archive.sha256,
    archived_at: archive.archived_at?.toISOString() ?? null,
  }));
}

export interface RetentionStatus {
  readonly archiveDir: string;
  readonly leaseHeldUntil: Date | null;
  readonly tables: readonly {
    readonly name: string;
    readonly kept: string;
    readonly holds: string;
    readonly due: boolean;
  }[];
}

export async function retentionStatus(deps: RetentionDeps): Promise<RetentionStatus> {
  const tables = [];
  for (const source of deps.sources) {
    tables.push({
      name: source.name,
      kept: source.kept ?? 'forever',
      holds: await source.describe(deps.db),
      due: (await source.nextUnit(deps.db, deps.clock.now())) !== undefined,
    });
  }
  return { archiveDir: deps.archiveDir, leaseHeldUntil: await retentionLeaseHeldUntil(deps.db), tables };
}

// `paygate retention status|run`: what each append-only table keeps and holds,
// and a retention run now (archive past-retention rows, then remove them), as
// the gateway's hourly worker does (docs/operations.md, "Retention and archive").
import { parseArgs } from 'node:util';
import type { AppContext } from '../context.ts';
import { retentionSources } from '../modules.ts';
import { retentionDeps } from '../retention/retention-module.ts';
import { recentArchives, retentionStatus, runRetention } from '../retention/retention-service.ts';
import { CliUsageError, type CliCommand } from './cli-command.ts';
import { withCliContext } from './database-command.ts';
import { printTable } from './table.ts';

const ARCHIVES_SHOWN = 20;
const UNITS_PER_TABLE_MAX = 1_000;

function configuredRetention(context: AppContext) {
  return retentionDeps({ ...context, sources: retentionSources(context.config) });
}

export const retentionStatusCommand: CliCommand = {
  async run(args, io, config) {
    const { values } = parseArgs({ args, options: { json: { type: 'boolean', default: false } } });
    const { status, recent } = await withCliContext(config, async (context) => {
      const deps = configuredRetention(context);
      return { status: await retentionStatus(deps), recent: await recentArchives(deps, ARCHIVES_SHOWN) };
    });
    if (values.json) {
      io.out(JSON.stringify({ ...status, recent_archives: recent }));
      return 0;
    }
    io.out(`archive folder: ${status.archiveDir}`);
    if (status.leaseHeldUntil) io.out(`a run holds the lease until ${status.leaseHeldUntil.toISOString()}`);
    printTable(
      io.out,
      status.tables,
      [
        { header: 'TABLE', value: (table) => table.name },
        { header: 'KEPT', value: (table) => table.kept },
        { header: 'DUE', value: (table) => (table.due ? 'yes' : 'no') },
        { header: 'HOLDS', value: (table) => table.holds },
      ],
      'no tables age out',
    );
    io.out('');
    printTable(
      io.out,
      recent,
      [
        { header: 'FILE', value: (archive) => archive.file },
        { header: 'STATE', value: (archive) => archive.state },
        { header: 'ROWS', value: (archive) => (archive.rows === null ? '' : String(archive.rows)), align: 'right' },
        { header: 'ARCHIVED', value: (archive) => archive.archived_at ?? '' },
      ],
      'no archives yet',
    );
    return 0;
  },
};

export const retentionRunCommand: CliCommand = {
  async run(args, io, config) {
    const { values } = parseArgs({
      args,
      options: { limit: { type: 'string' }, json: { type: 'boolean', default: false } },
    });
    const limit = values.limit === undefined ? UNITS_PER_TABLE_MAX : Number(values.limit);
    if (!Number.isInteger(limit) || limit < 1 || limit > UNITS_PER_TABLE_MAX)
      throw new CliUsageError(`--limit must be 1..${UNITS_PER_TABLE_MAX}`);
    const report = await withCliContext(config, (context) =>
      runRetention(configuredRetention(context), { unitsPerSourceMax: limit }),
    );
    if (values.json) {
      io.out(JSON.stringify(report));
      return report.ran ? 0 : 1;
    }
    if (!report.ran) {
      io.err(`paygate: another retention run holds the lease until ${report.leaseHeldUntil?.toISOString() ?? '?'}`);
      return 1;
    }
    for (const fileName of report.discarded)
      io.out(`discarded ${fileName} (its rows were not removed; archived again)`);
    for (const file of report.archived)
      io.out(
        `archived ${file.rowCount} rows of ${file.table} (${file.period}) to ${file.fileName}, sha256 ${file.sha256}`,
      );
    io.out(`${report.archived.length} archive files written; their rows removed`);
    return 0;
  },
};

// `paygate backup --to FILE` and `paygate restore --from FILE [--force]`: the embedded
// database's backup (db/embedded-backup.ts). A backup runs inside a running gateway
// (cli/admin-socket.ts) or, with none running, on the folder under its lock; a restore
// runs only with no gateway on the folder. A PostgreSQL server is backed up with its own
// tools (docs/operations.md).
import { parseArgs } from 'node:util';
import { backupEmbedded, restoreEmbedded } from '../db/embedded-backup.ts';
import { CliUsageError, type CliCommand, type CliIo } from './cli-command.ts';
import { withCliDatabase } from './database-command.ts';

function refusePostgres(io: CliIo, databaseUrl: string | undefined, use: string): boolean {
  if (!databaseUrl) return false;
  io.err(`paygate: DATABASE_URL names a PostgreSQL server: use ${use} (docs/operations.md, "Backup and restore")`);
  return true;
}

const ROOT_KEY_REMINDER =
  "the root key is not in the backup: keep PAYGATE_ROOT_KEY (or PAYGATE_ROOT_KEY_FILE, or the data folder's root-key file) " +
  'safe apart from it; a restore without it cannot read the sealed secrets';

export const backupCommand: CliCommand = {
  async run(args, io, config) {
    const { values } = parseArgs({ args, options: { to: { type: 'string' } } });
    if (values.to === undefined || values.to === '') throw new CliUsageError('--to FILE is required');
    if (refusePostgres(io, config.databaseUrl, 'pg_dump')) return 1;
    const file = values.to;
    const bytes = await withCliDatabase(config, (_context, database) => backupEmbedded(database, file));
    io.out(`backed up the embedded database to ${file} (${bytes} bytes)`);
    io.out(ROOT_KEY_REMINDER);
    return 0;
  },
};

export const restoreCommand: CliCommand = {
  async run(args, io, config) {
    const { values } = parseArgs({
      args,
      options: { from: { type: 'string' }, force: { type: 'boolean', default: false } },
    });
    if (values.from === undefined || values.from === '') throw new CliUsageError('--from FILE is required');
    if (refusePostgres(io, config.databaseUrl, 'pg_restore')) return 1;
    const { applied } = await restoreEmbedded(config.dataDir, values.from, { force: values.force });
    for (const version of applied) io.out(`applied ${version}`);
    io.out(`restored ${values.from} into ${config.dataDir}`);
    return 0;
  },
};

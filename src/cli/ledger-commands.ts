// `paygate ledger check`: runs the ledger's invariant check against the
// configured database; exit code 1 when any invariant fails. The check reads
// the ledger in batches (src/ledger/ledger-check.ts), each its own statement
// under the statement timeout, and reports how far it has read on stderr.
import { parseArgs } from 'node:util';
import { CliUsageError, type CliCommand } from './cli-command.ts';
import { withCliContext } from './database-command.ts';
import { checkLedgerInvariants, DEFAULT_BATCH_ROWS, type CheckProgress } from '../ledger/ledger-check.ts';

/** Progress lines are written at most this often per phase, in rows read, so a long check stays readable. */
const PROGRESS_EVERY_ROWS = 1_000_000;

function batchRowsOf(text: string | undefined): number {
  if (text === undefined) return DEFAULT_BATCH_ROWS;
  const rows = Number(text);
  if (!/^[1-9][0-9]{0,6}$/.test(text) || !Number.isSafeInteger(rows))
    throw new CliUsageError('--batch-rows must be a whole number from 1 to 9999999');
  return rows;
}

export const ledgerCheckCommand: CliCommand = {
  async run(args, io, config) {
    const { values } = parseArgs({
      args,
      options: { json: { type: 'boolean', default: false }, 'batch-rows': { type: 'string' } },
    });
    const batchRows = batchRowsOf(values['batch-rows']);
    let reported: CheckProgress | undefined;
    const onProgress = (progress: CheckProgress) => {
      const crossed =
        !reported ||
        reported.phase !== progress.phase ||
        Math.floor(progress.rowsRead / PROGRESS_EVERY_ROWS) > Math.floor(reported.rowsRead / PROGRESS_EVERY_ROWS);
      if (crossed && progress.rowsRead > 0) io.err(`ledger check: ${progress.phase} ${progress.rowsRead} rows read`);
      if (crossed) reported = progress;
    };
    const report = await withCliContext(config, (context) =>
      checkLedgerInvariants(context.db, { batchRows, onProgress }),
    );
    if (values.json) {
      io.out(JSON.stringify(report));
    } else if (report.ok) {
      io.out(
        `ledger ok: ${report.accountsChecked} accounts, ${report.transfersChecked} transfers, every invariant holds`,
      );
    } else {
      io.err(
        `ledger check FAILED: ${report.violations.length} violation(s) in ${report.accountsChecked} accounts, ${report.transfersChecked} transfers`,
      );
      for (const violation of report.violations) io.err(`  ${violation}`);
    }
    return report.ok ? 0 : 1;
  },
};

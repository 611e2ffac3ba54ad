// `paygate ledger check`: runs the ledger's invariant check against the
// configured database; exit code 1 when any invariant fails.
import { parseArgs } from 'node:util';
import type { CliCommand } from './cli-command.ts';
import { withCliContext } from './database-command.ts';
import { checkLedgerInvariants } from '../ledger/ledger-invariants.ts';

export const ledgerCheckCommand: CliCommand = {
  async run(args, io, config) {
    const { values } = parseArgs({ args, options: { json: { type: 'boolean', default: false } } });
    const report = await withCliContext(config, (context) => checkLedgerInvariants(context.db));
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

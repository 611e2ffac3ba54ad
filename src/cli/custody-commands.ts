// `paygate crypto reconcile`: one custody reconciliation run per book (the chain
// of each book read as `paygate crypto addresses` reads it), printed; exit code
// 1 on a shortfall, 3 when a book could not be read. `--acknowledge` resumes a
// book's signing after a shortfall, recording who and why (docs/custody.md).
import { parseArgs } from 'node:util';
import { CliUsageError, type CliCommand } from './cli-command.ts';
import { withCliContext } from './database-command.ts';
import { readOnlyChainModule } from './read-only-chain.ts';
import {
  acknowledgeShortfall,
  NOTE_MAX_LENGTH,
  reconcileAll,
  type ReconciliationView,
} from '../crypto/custody/reconciliation-service.ts';
import type { LedgerBook } from '../ledger/ledger-service.ts';

/** Exit code of a run in which some book could not be read: nothing was judged for it. */
export const RECONCILE_UNREAD_EXIT_CODE = 3;

function bookArgument(value: string | undefined): LedgerBook | undefined {
  if (value === undefined) return undefined;
  if (value !== 'sandbox' && value !== 'live') throw new CliUsageError('--book must be sandbox or live');
  return value;
}

function summary(view: ReconciliationView): string {
  if (view.outcome === 'failed')
    return `${view.book} USDT: NOT READ (${view.error})  run ${view.reconciliation_id}${view.signing_paused ? '  signing PAUSED' : ''}`;
  const chain = view.on_chain!;
  const ledger = view.ledger!;
  return (
    `${view.book} USDT: ${view.outcome === 'shortfall' ? 'SHORTFALL' : 'balanced'}  difference ${view.difference}  shortfall ${view.shortfall} ` +
    `(accepted ${view.accepted_shortfall}, tolerance ${view.tolerance})  run ${view.reconciliation_id} at block ${view.solidified_block}\n` +
    `  on chain ${chain.total} = hot wallet ${chain.hot_wallet} + ${chain.addresses_read} deposit address(es) ${chain.deposit_addresses}\n` +
    `  expected ${view.expected} = deposits credited ${ledger.deposits_credited} − from blocks above it ${ledger.deposits_above_block} − outgoing booked ${ledger.outgoing_booked} − outgoing in flight ${view.outgoing_in_flight}  ` +
    `(sweeps in flight ${view.sweeps_in_flight})\n` +
    `  owed: merchants ${ledger.merchant_balances} (reserved outgoing ${ledger.reserved_outgoing}) + gateway accounts ${ledger.gateway_accounts}` +
    `${view.signing_paused ? '\n  signing PAUSED until acknowledged: paygate crypto reconcile --acknowledge --book ' + view.book + ' --by NAME' : ''}`
  );
}

export const cryptoReconcileCommand: CliCommand = {
  async run(args, io, config) {
    const { values } = parseArgs({
      args,
      options: {
        book: { type: 'string' },
        json: { type: 'boolean', default: false },
        acknowledge: { type: 'boolean', default: false },
        by: { type: 'string' },
        note: { type: 'string' },
      },
    });
    const book = bookArgument(values.book);
    if (values.acknowledge) {
      if (book === undefined) throw new CliUsageError('--acknowledge needs --book sandbox|live');
      if (values.by === undefined || values.by.trim() === '')
        throw new CliUsageError('--acknowledge needs --by NAME: who resumes signing is recorded');
      if (values.note !== undefined && values.note.length > NOTE_MAX_LENGTH)
        throw new CliUsageError(`--note is at most ${NOTE_MAX_LENGTH} characters`);
      const acknowledged = await withCliContext(config, (context) =>
        acknowledgeShortfall(context, { book, acknowledgedBy: values.by!, note: values.note }),
      );
      if (values.json) io.out(JSON.stringify(acknowledged));
      else
        io.out(
          `${book}: signing resumes; shortfall ${acknowledged.accepted_shortfall} USDT accepted by ${acknowledged.acknowledged_by} at ${acknowledged.acknowledged_at}`,
        );
      return 0;
    }
    const views = await withCliContext(config, async (context) => {
      const chain = readOnlyChainModule(config, context, context);
      try {
        return await reconcileAll({ ...context, chain: chain.service }, book === undefined ? {} : { books: [book] });
      } finally {
        await chain.module.close();
      }
    });
    if (values.json) io.out(JSON.stringify(views));
    else if (views.length === 0) io.out('nothing to reconcile: no book has held USDT');
    else {
      for (const view of views) {
        if (view.outcome === 'balanced') io.out(summary(view));
        else io.err(summary(view));
      }
    }
    if (views.some((view) => view.outcome === 'shortfall')) return 1;
    return views.some((view) => view.outcome === 'failed') ? RECONCILE_UNREAD_EXIT_CODE : 0;
  },
};

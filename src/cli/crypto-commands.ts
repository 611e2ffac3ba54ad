// `paygate crypto addresses`: the custody view of our deposit addresses
// (crypto/receiving/custody-service.ts), reading balances from the chain of
// each address's key: the configured TRON nodes for live addresses, the saved
// sandbox chain of the data folder for sandbox ones. `paygate crypto sweeps
// list|retry`: an address's sweep attempts, and an operator's retry of a stuck one.
import { parseArgs } from 'node:util';
import { CliUsageError, type CliCommand } from './cli-command.ts';
import { withCliContext } from './database-command.ts';
import { createCryptoChain } from '../crypto/receiving/crypto-chain.ts';
import { cryptoDepsFor, sealedKeyStoreOf } from '../crypto/receiving/crypto-deps.ts';
import { CUSTODY_PAGE_MAX, listCustodyAddresses, type CustodyLine } from '../crypto/receiving/custody-service.ts';
import { retrySweepsOfAddress, sweepsOfAddress, sweepView, type SweepView } from '../crypto/sweeping/sweeping-service.ts';

function line(entry: CustodyLine): string {
  return (
    `${entry.address}  ${entry.key}/${entry.derivation_index}  ${entry.purpose}  shop ${entry.shop_id}  ` +
    `on chain ${entry.usdt_on_chain} USDT ${entry.trx_on_chain} TRX  credited ${entry.usdt_credited}  held ${entry.usdt_held}  ` +
    `swept ${entry.usdt_swept}  pending ${entry.usdt_sweep_pending}  stuck ${entry.usdt_sweep_stuck}  sweep ${entry.sweep_state}` +
    `${entry.sweep_error === null ? '' : ` (${entry.sweep_error})`}  unaccounted ${entry.usdt_unaccounted}`
  );
}

export const cryptoAddressesCommand: CliCommand = {
  words: ['crypto', 'addresses'],
  usage: `paygate crypto addresses [--shop SHOP_ID] [--limit N (1..${CUSTODY_PAGE_MAX}, 100)] [--after ADDRESS] [--json]`,
  summary: 'Our deposit addresses with on-chain USDT/TRX balances beside the deposits credited in the ledger and held, and what sweeping moved, is moving or is stuck on',
  async run(args, io, config) {
    const { values } = parseArgs({
      args,
      options: { shop: { type: 'string' }, limit: { type: 'string' }, after: { type: 'string' }, json: { type: 'boolean', default: false } },
    });
    const limit = values.limit === undefined ? 100 : Number(values.limit);
    if (!Number.isInteger(limit) || limit < 1 || limit > CUSTODY_PAGE_MAX) throw new CliUsageError(`--limit must be 1..${CUSTODY_PAGE_MAX}`);
    const lines = await withCliContext(config, async (context) => {
      // The sandbox chain is read from its saved file and never saved back: a running gateway owns it.
      const chain = createCryptoChain({ config, dataDir: config.dataDir, logger: context.logger, keyStore: sealedKeyStoreOf(context), sandboxClock: 'manual', sandboxReadOnly: true });
      try {
        return await listCustodyAddresses(cryptoDepsFor(context, chain), { limit, after: values.after, shopId: values.shop });
      } finally {
        await chain.close();
      }
    });
    if (values.json) io.out(JSON.stringify(lines));
    else if (lines.length === 0) io.out('no deposit addresses');
    else for (const entry of lines) io.out(line(entry));
    return 0;
  },
};

function addressArgument(args: string[]): { address: string; json: boolean } {
  const { values } = parseArgs({ args, options: { address: { type: 'string' }, json: { type: 'boolean', default: false } } });
  if (values.address === undefined || !/^T[1-9A-HJ-NP-Za-km-z]{33}$/.test(values.address)) throw new CliUsageError('--address must be one of our TRON deposit addresses');
  return { address: values.address, json: values.json };
}

function sweepLine(view: SweepView): string {
  const fees = `top-up ${view.trx_topup} TRX (fee ${view.trx_topup_fee ?? '-'})  sweep fee ${view.trx_sweep_fee ?? '-'} TRX`;
  const error = view.error === null ? '' : `  error ${view.error.code}${view.cleared ? ' (cleared)' : ''}: ${view.error.message ?? ''}`;
  return `${view.sweep_id}  ${view.status}  moved ${view.usdt_moved ?? '-'} of ${view.usdt_unswept_final} USDT  ${fees}  ${view.created_at}${error}`;
}

export const cryptoSweepsListCommand: CliCommand = {
  words: ['crypto', 'sweeps', 'list'],
  usage: 'paygate crypto sweeps list --address ADDRESS [--json]',
  summary: 'The sweep attempts of one deposit address, newest first: what each moved and what it cost (docs/sweeping.md)',
  async run(args, io, config) {
    const { address, json } = addressArgument(args);
    const views = await withCliContext(config, async (context) => (await sweepsOfAddress(context.db, address)).map(sweepView));
    if (json) io.out(JSON.stringify(views));
    else if (views.length === 0) io.out('no sweep attempts');
    else for (const view of views) io.out(sweepLine(view));
    return 0;
  },
};

export const cryptoSweepsRetryCommand: CliCommand = {
  words: ['crypto', 'sweeps', 'retry'],
  usage: 'paygate crypto sweeps retry --address ADDRESS',
  summary: "Clears a stuck address's failed sweeps so the sweeper tries it again at its next pass (docs/sweeping.md)",
  async run(args, io, config) {
    const { address } = addressArgument(args);
    const cleared = await withCliContext(config, (context) => retrySweepsOfAddress(context, address));
    io.out(cleared === 0 ? `${address}: no failed sweeps to clear` : `${address}: ${cleared} failed sweep(s) cleared; the sweeper tries again within a minute`);
    return 0;
  },
};

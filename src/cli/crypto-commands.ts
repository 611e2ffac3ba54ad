// `paygate crypto addresses`: the custody view of our deposit addresses
// (crypto/receiving/custody-service.ts), reading balances from the chain of
// each address's key: the configured TRON nodes for live addresses, the saved
// sandbox chain of the data folder for sandbox ones.
import { parseArgs } from 'node:util';
import { CliUsageError, type CliCommand } from './cli-command.ts';
import { withCliContext } from './database-command.ts';
import { createCryptoChain } from '../crypto/receiving/crypto-chain.ts';
import { cryptoDepsFor } from '../crypto/receiving/crypto-deps.ts';
import { CUSTODY_PAGE_MAX, listCustodyAddresses, type CustodyLine } from '../crypto/receiving/custody-service.ts';

function line(entry: CustodyLine): string {
  return (
    `${entry.address}  ${entry.key}/${entry.derivation_index}  ${entry.purpose}  shop ${entry.shop_id}  ` +
    `on chain ${entry.usdt_on_chain} USDT ${entry.trx_on_chain} TRX  credited ${entry.usdt_credited}  held ${entry.usdt_held}  unaccounted ${entry.usdt_unaccounted}`
  );
}

export const cryptoAddressesCommand: CliCommand = {
  words: ['crypto', 'addresses'],
  usage: `paygate crypto addresses [--shop SHOP_ID] [--limit N (1..${CUSTODY_PAGE_MAX}, 100)] [--after ADDRESS] [--json]`,
  summary: 'Our deposit addresses with on-chain USDT/TRX balances beside the deposits credited in the ledger and held',
  async run(args, io, config) {
    const { values } = parseArgs({
      args,
      options: { shop: { type: 'string' }, limit: { type: 'string' }, after: { type: 'string' }, json: { type: 'boolean', default: false } },
    });
    const limit = values.limit === undefined ? 100 : Number(values.limit);
    if (!Number.isInteger(limit) || limit < 1 || limit > CUSTODY_PAGE_MAX) throw new CliUsageError(`--limit must be 1..${CUSTODY_PAGE_MAX}`);
    const lines = await withCliContext(config, async (context) => {
      // The sandbox chain is read from its saved file and never saved back: a running gateway owns it.
      const chain = createCryptoChain({ config, dataDir: config.dataDir, logger: context.logger, sandboxClock: 'manual', sandboxReadOnly: true });
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

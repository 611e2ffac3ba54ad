// `paygate chain simulate`: the simulated TRON chain (src/crypto/simchain/) on
// its own, following the wall clock (a block every 3 s), speaking the full
// node's HTTP API on loopback — for trying the crypto side, or pointing
// another gateway or a wallet tool at it. Sandbox only: its money is not real.
import { once } from 'node:events';
import { parseArgs } from 'node:util';
import { startSimulatedChainServer } from '../crypto/simchain/chain-server.ts';
import { CliUsageError, type CliCommand } from './cli-command.ts';

export const chainSimulateCommand: CliCommand = {
  async run(args, io) {
    const { values } = parseArgs({
      args,
      options: {
        port: { type: 'string' },
        host: { type: 'string' },
        seed: { type: 'string' },
        persist: { type: 'string' },
        'retain-blocks': { type: 'string' },
      },
    });
    const port = values.port === undefined ? 0 : Number(values.port);
    if (!Number.isInteger(port) || port < 0 || port > 65_535)
      throw new CliUsageError('--port must be a whole number from 0 to 65535');
    // Blocks below the solidified one that keep their transactions (pruned history bounds memory; docs/crypto.md).
    const retain = values['retain-blocks'];
    if (retain !== undefined && (!/^\d{1,8}$/.test(retain) || Number(retain) < 1))
      throw new CliUsageError('--retain-blocks must be a whole number from 1 to 99999999');
    const server = await startSimulatedChainServer({
      port,
      host: values.host ?? '127.0.0.1',
      seed: values.seed ?? 'paygate-sandbox-chain',
      clock: 'wall',
      ...(retain === undefined ? {} : { parameters: { retainedBlockBodies: Number(retain) } }),
      ...(values.persist === undefined ? {} : { persistFile: values.persist }),
    });
    io.out(`simulated TRON chain listening on ${server.url} (a block every 3 s; solidified = head - 18)`);
    await Promise.race([once(process, 'SIGINT'), once(process, 'SIGTERM')]);
    await server.close();
    io.out('simulated TRON chain stopped');
    return 0;
  },
};

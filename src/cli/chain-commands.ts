// `paygate chain simulate`: the simulated TRON chain (src/crypto/simchain/) on
// its own, following the wall clock (a block every 3 s), speaking the full
// node's HTTP API on loopback — for trying the crypto side, or pointing
// another gateway or a wallet tool at it. Sandbox only: its money is not real.
// `--network nile` runs Nile's USDT contract and prices, so a gateway with
// PAYGATE_TRON_NETWORK=nile can be pointed at it (docs/crypto.md "Nile testnet").
import { once } from 'node:events';
import { parseArgs } from 'node:util';
import { networkChainParameters } from '../crypto/simchain/chain-parameters.ts';
import { startSimulatedChainServer } from '../crypto/simchain/chain-server.ts';
import { TRON_NETWORKS, type TronNetwork } from '../crypto/tron/tron-networks.ts';
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
        network: { type: 'string' },
      },
    });
    const network = simulatedNetwork(values.network ?? io.env.PAYGATE_TRON_NETWORK?.trim() ?? '');
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
      parameters: {
        ...networkChainParameters(network),
        ...(retain === undefined ? {} : { retainedBlockBodies: Number(retain) }),
      },
      ...(values.persist === undefined ? {} : { persistFile: values.persist }),
    });
    const usdt = server.chain.parameters.usdtContract;
    io.out(
      `simulated TRON chain (${network}, USDT ${usdt}) listening on ${server.url} (a block every 3 s; solidified = head - 18)`,
    );
    await Promise.race([once(process, 'SIGINT'), once(process, 'SIGTERM')]);
    await server.close();
    io.out('simulated TRON chain stopped');
    return 0;
  },
};

function simulatedNetwork(raw: string): TronNetwork {
  if (raw === '') return 'mainnet';
  const network = TRON_NETWORKS.find((name) => name === raw);
  if (network === undefined) throw new CliUsageError(`--network must be ${TRON_NETWORKS.join(' or ')}`);
  return network;
}

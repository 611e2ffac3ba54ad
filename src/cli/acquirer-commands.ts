// `paygate acquirer simulate <provider>`: a simulator of an acquirer's public
// API (src/payments/connectors/<provider>/simulator/) on its own, for trying a
// live shop's connection without a contract: point the connection's --api-url
// at it. It speaks the provider's documented API, serves its hosted payment
// page and sends its notifications; its money is not real.
import { once } from 'node:events';
import { parseArgs } from 'node:util';
import { SIMULATOR_TERMINAL, startTBankSimulator } from '../payments/connectors/tbank/simulator/index.ts';
import { SIMULATOR_SHOP, startYooKassaSimulator } from '../payments/connectors/yookassa/simulator/index.ts';
import { CliUsageError, type CliCommand, type CliIo } from './cli-command.ts';

interface SimulatorOptions {
  readonly port: number;
  readonly host: string;
  readonly notify: boolean;
}

interface RunningSimulator {
  readonly url: string;
  close(): Promise<void>;
}

/** Each provider's simulator, and the credentials a connection to it uses. */
const SIMULATORS: Record<string, (options: SimulatorOptions, io: CliIo) => Promise<RunningSimulator>> = {
  async tbank(options, io) {
    const simulator = await startTBankSimulator(options);
    io.out(`T-Bank simulator listening on ${simulator.url}`);
    io.out(`terminal_key=${SIMULATOR_TERMINAL.terminalKey} password=${SIMULATOR_TERMINAL.password}`);
    // A gateway takes T-Bank notifications only from T-Bank's networks unless told where else they come from.
    io.out(
      'a gateway on this machine takes its notifications with PAYGATE_ACQUIRER_NOTIFICATION_SOURCES_TBANK=127.0.0.1/32',
    );
    return simulator;
  },
  async yookassa(options, io) {
    const simulator = await startYooKassaSimulator(options);
    io.out(`YooKassa simulator listening on ${simulator.url}`);
    io.out(`shop_id=${SIMULATOR_SHOP.shopId} secret_key=${SIMULATOR_SHOP.secretKey}`);
    // YooKassa takes the notification URL from the shop's settings, not from each payment.
    const settings = simulator.url.replace(/\/v3$/, '/sim/notification-url');
    io.out(
      `notifications: POST ${settings} {"shop_id":"${SIMULATOR_SHOP.shopId}","url":"<PAYGATE_PUBLIC_URL>/acquirers/yookassa/notifications/<connection id>"}`,
    );
    io.out(
      'a gateway on this machine takes its notifications with PAYGATE_ACQUIRER_NOTIFICATION_SOURCES_YOOKASSA=127.0.0.1/32',
    );
    return simulator;
  },
};

export const acquirerSimulateCommand: CliCommand = {
  async run(args, io) {
    const { values, positionals } = parseArgs({
      args,
      allowPositionals: true,
      options: {
        port: { type: 'string' },
        host: { type: 'string' },
        'no-notify': { type: 'boolean' },
      },
    });
    const provider = positionals[0];
    const start = provider === undefined ? undefined : SIMULATORS[provider];
    if (!start || positionals.length !== 1)
      throw new CliUsageError(`name one provider: ${Object.keys(SIMULATORS).join(', ')}`);
    const port = values.port === undefined ? 0 : Number(values.port);
    if (!Number.isInteger(port) || port < 0 || port > 65_535)
      throw new CliUsageError('--port must be a whole number from 0 to 65535');
    const simulator = await start({ port, host: values.host ?? '127.0.0.1', notify: values['no-notify'] !== true }, io);
    await Promise.race([once(process, 'SIGINT'), once(process, 'SIGTERM')]);
    await simulator.close();
    io.out(`${provider} simulator stopped`);
    return 0;
  },
};

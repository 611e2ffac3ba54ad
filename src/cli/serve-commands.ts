import { parseArgs } from 'node:util';
import { openConfiguredDatabase, ROLES, startGateway, type Gateway, type Role } from '../runtime.ts';
import { CliUsageError, type CliCommand, type CliIo } from './cli-command.ts';
import { withPort } from '../config.ts';
import { checkAdminSocketPath, startAdminSocket } from './admin-socket.ts';

/**
 * SIGTERM and SIGINT, listened for from the moment `serve` runs: a signal that
 * arrives while the gateway is still starting (its HTTP port may already answer
 * /readyz) is kept and acted on once the start is done, instead of killing the
 * process with Node's default action; Ctrl-C again during the start leaves at
 * once. The listeners stay for the whole run.
 */
function listenForShutdownSignals(): {
  readonly first: Promise<NodeJS.Signals>;
  isSecondKeystroke(): boolean;
  onLater(handler: (signal: NodeJS.Signals) => void): void;
} {
  let later = (signal: NodeJS.Signals) => {
    if (signal === 'SIGINT' && isSecondKeystroke()) process.exit(1);
  };
  let resolveFirst!: (signal: NodeJS.Signals) => void;
  let received = false;
  let firstAt = 0;
  // Ctrl-C reaches both bin/paygate.js's hand-over parent, which forwards it, and this
  // process: a SIGINT within a second of the first is that same keystroke.
  const isSecondKeystroke = () => Date.now() - firstAt > 1_000;
  const first = new Promise<NodeJS.Signals>((resolve) => (resolveFirst = resolve));
  const listener = (signal: NodeJS.Signals) => {
    if (received) return later(signal);
    received = true;
    firstAt = Date.now();
    resolveFirst(signal);
  };
  process.on('SIGINT', listener);
  process.on('SIGTERM', listener);
  return { first, isSecondKeystroke, onLater: (handler) => (later = handler) };
}

/**
 * SIGTERM or SIGINT: stop accepting connections, let in-flight requests and
 * webhook deliveries finish, close the database, exit 0. Past the bound, or on
 * a second SIGINT (Ctrl-C again), the process exits 1 at once; a delivery cut
 * short keeps its lease and is sent again after it, so nothing is lost. A
 * repeated SIGTERM changes nothing: one signal to a process group reaches both
 * bin/paygate.js's hand-over parent, which forwards it, and this process.
 */
async function waitForShutdown(
  gateway: Gateway,
  signals: ReturnType<typeof listenForShutdownSignals>,
  timeoutMs: number,
  io: CliIo,
): Promise<number> {
  const signal = await signals.first;
  const { logger } = gateway.context;
  logger.info(
    { signal, timeout_ms: timeoutMs },
    'shutting down: no new connections; finishing in-flight requests and deliveries',
  );
  const outcome = await new Promise<'stopped' | 'timeout' | 'signal'>((resolve) => {
    const timer = setTimeout(() => resolve('timeout'), timeoutMs);
    signals.onLater((again) => {
      if (again === 'SIGINT' && signals.isSecondKeystroke()) resolve('signal');
    });
    void gateway.stop().then(() => {
      clearTimeout(timer);
      resolve('stopped');
    });
  });
  if (outcome === 'stopped') {
    io.out('paygate stopped');
    return 0;
  }
  const why =
    outcome === 'timeout' ? `in-flight work did not finish within ${timeoutMs} ms` : 'a second SIGINT arrived';
  logger.error({ outcome }, `shutdown cut short: ${why}`);
  io.err(`paygate: shutdown cut short: ${why}`);
  // Whatever is still running holds the event loop open; leave without it.
  process.exit(1);
}

/** On the embedded database, CLI commands run inside the gateway (cli/admin-socket.ts); its stop closes the socket first. */
async function withAdminSocket(gateway: Gateway): Promise<Gateway> {
  if (gateway.context.backend !== 'pglite') return gateway;
  let socket;
  try {
    socket = await startAdminSocket(gateway, gateway.context.config);
  } catch (error) {
    await gateway.stop();
    throw error;
  }
  return {
    ...gateway,
    async stop() {
      await socket.close();
      await gateway.stop();
    },
  };
}

export const serveCommand: CliCommand = {
  async run(args, io, config) {
    const signals = listenForShutdownSignals();
    const { values } = parseArgs({
      args,
      options: {
        role: { type: 'string', default: 'all' },
        port: { type: 'string' },
        demo: { type: 'boolean', default: false },
      },
    });
    const role = values.role as Role;
    if (!ROLES.includes(role))
      throw new CliUsageError(`--role must be one of ${ROLES.join(', ')}, got "${values.role}"`);
    let port = config.port;
    if (values.port !== undefined) {
      if (!/^\d+$/.test(values.port) || Number(values.port) > 65_535)
        throw new CliUsageError(`--port must be 0..65535, got "${values.port}"`);
      port = Number(values.port);
    }
    if (!config.databaseUrl) checkAdminSocketPath(config);
    // A worker listens only when told a port: PORT is the API's, and a worker beside it on one host would take it.
    const operationsPort = role === 'worker' && values.port !== undefined ? port : undefined;
    const gateway = await withAdminSocket(
      await startGateway({ ...withPort(config, port), demo: config.demo || values.demo }, { role, operationsPort }),
    );
    // A chosen few workers (PAYGATE_WORKERS) are named, so a split deployment shows which process runs what.
    const chosen = config.workers === undefined ? '' : `, workers ${gateway.workers.join(', ')}`;
    if (role !== 'worker')
      io.out(`paygate listening on ${gateway.url} (role ${role}, database ${gateway.context.backend}${chosen})`);
    else
      io.out(
        `paygate workers running (database ${gateway.context.backend}${chosen})` +
          (gateway.url === undefined ? '' : `; /healthz, /readyz and /metrics on ${gateway.url}`),
      );
    return waitForShutdown(gateway, signals, config.shutdownTimeoutMs, io);
  },
};

export const migrateCommand: CliCommand = {
  async run(args, io, config) {
    parseArgs({ args, options: {} });
    const handle = await openConfiguredDatabase(config);
    await handle.close();
    for (const version of handle.applied) io.out(`applied ${version}`);
    io.out(`migrations up to date (${handle.backend})`);
    return 0;
  },
};

import { parseArgs } from 'node:util';
import { openConfiguredDatabase, ROLES, startGateway, type Role } from '../runtime.ts';
import { CliUsageError, type CliCommand } from './cli-command.ts';
import { ConfigError } from '../config.ts';

export const serveCommand: CliCommand = {
  words: ['serve'],
  usage: 'paygate serve [--role all|api|worker] [--port N]',
  summary: 'Run the gateway: HTTP API and payment page (api), background workers (worker), or both (all, default)',
  async run(args, io, config) {
    const { values } = parseArgs({ args, options: { role: { type: 'string', default: 'all' }, port: { type: 'string' } } });
    const role = values.role as Role;
    if (!ROLES.includes(role)) throw new CliUsageError(`--role must be one of ${ROLES.join(', ')}, got "${values.role}"`);
    let port = config.port;
    if (values.port !== undefined) {
      if (!/^\d+$/.test(values.port) || Number(values.port) > 65_535) throw new CliUsageError(`--port must be 0..65535, got "${values.port}"`);
      port = Number(values.port);
    }
    if (!config.databaseUrl && role !== 'all') {
      throw new ConfigError('DATABASE_URL', `is required for --role ${role}: the embedded database serves one process only`);
    }
    const gateway = await startGateway({ ...config, port }, { role });
    if (gateway.url) io.out(`paygate listening on ${gateway.url} (role ${role}, database ${gateway.context.backend})`);
    else io.out(`paygate workers running (database ${gateway.context.backend})`);
    await new Promise<void>((resolve) => {
      const shutdown = (signal: string) => {
        gateway.context.logger.info({ signal }, 'shutting down');
        void gateway.stop().then(resolve);
      };
      process.once('SIGINT', shutdown);
      process.once('SIGTERM', shutdown);
    });
    return 0;
  },
};

export const migrateCommand: CliCommand = {
  words: ['migrate'],
  usage: 'paygate migrate',
  summary: 'Apply pending database migrations and exit',
  async run(args, io, config) {
    parseArgs({ args, options: {} });
    const handle = await openConfiguredDatabase(config);
    await handle.close();
    for (const version of handle.applied) io.out(`applied ${version}`);
    io.out(`migrations up to date (${handle.backend})`);
    return 0;
  },
};

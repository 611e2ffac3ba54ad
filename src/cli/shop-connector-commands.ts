// `paygate shop connector set|list|remove`: a live shop's connections to production
// acquirers (src/payments/connectors/acquirer-connections.ts). Credentials are checked
// with the provider before saving, stored sealed, and never printed.
import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { InvalidRequestError, NotFoundError } from '../errors.ts';
import {
  listConnections,
  removeConnection,
  saveConnection,
  type ConnectionView,
} from '../payments/connectors/acquirer-connections.ts';
import { ACQUIRER_PROVIDERS } from '../payments/connectors/connector-registry.ts';
import { CliUsageError, type CliCommand } from './cli-command.ts';
import { withCliContext } from './database-command.ts';
import { printTable, type Column } from './table.ts';

function required(value: string | undefined, flag: string): string {
  if (value === undefined || value.trim() === '') throw new CliUsageError(`${flag} is required`);
  return value;
}

function pair(value: string, flag: string): [string, string] {
  const at = value.indexOf('=');
  if (at <= 0) throw new CliUsageError(`${flag} takes NAME=VALUE, got "${value}"`);
  return [value.slice(0, at), value.slice(at + 1)];
}

/** `--credential n=v`, `--credential-file n=path` (a secret kept out of the shell history), and the shorthands. */
async function credentialsOf(values: {
  credential?: string[] | undefined;
  'credential-file'?: string[] | undefined;
  'secret-key-file'?: string | undefined;
  'shop-id'?: string | undefined;
}): Promise<Record<string, string>> {
  const credentials: Record<string, string> = {};
  for (const entry of values.credential ?? []) {
    const [name, value] = pair(entry, '--credential');
    credentials[name] = value;
  }
  const files = (values['credential-file'] ?? []).map((entry) => pair(entry, '--credential-file'));
  if (values['secret-key-file'] !== undefined) files.push(['secret_key', values['secret-key-file']]);
  for (const [name, path] of files) credentials[name] = (await readFile(path, 'utf8')).trim();
  if (values['shop-id'] !== undefined) credentials['shop_id'] = values['shop-id'];
  return credentials;
}

/** The service's refusal as bad usage (exit code 2), with its message. */
async function usage<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof InvalidRequestError || error instanceof NotFoundError) throw new CliUsageError(error.message);
    throw error;
  }
}

const CONNECTION_COLUMNS: readonly Column<ConnectionView>[] = [
  { header: 'ID', value: (view) => view.id },
  { header: 'PROVIDER', value: (view) => view.provider },
  { header: 'METHODS', value: (view) => view.methods.join(',') },
  { header: 'PRIORITY', value: (view) => String(view.priority), align: 'right' },
  { header: 'API URL', value: (view) => view.api_url },
  { header: 'CREDENTIALS', value: (view) => view.credential_names.join(',') },
];

export const shopConnectorSetCommand: CliCommand = {
  async run(args, io, config) {
    const { values } = parseArgs({
      args,
      options: {
        shop: { type: 'string' },
        provider: { type: 'string' },
        credential: { type: 'string', multiple: true },
        'credential-file': { type: 'string', multiple: true },
        'secret-key-file': { type: 'string' },
        'shop-id': { type: 'string' },
        'api-url': { type: 'string' },
        methods: { type: 'string' },
        priority: { type: 'string' },
        json: { type: 'boolean', default: false },
      },
    });
    const shopId = required(values.shop, '--shop');
    const provider = required(values.provider, '--provider');
    const priority = values.priority === undefined ? undefined : Number(values.priority);
    const credentials = await credentialsOf(values);
    const saved = await withCliContext(config, (context) =>
      usage(() =>
        saveConnection(context, ACQUIRER_PROVIDERS, {
          shopId,
          provider,
          credentials,
          apiUrl: values['api-url'],
          methods: values.methods?.split(',').map((method) => method.trim()),
          priority,
        }),
      ),
    );
    io.out(values.json ? JSON.stringify(saved) : `${saved.id} ${saved.provider} ${saved.methods.join(',')}`);
    return 0;
  },
};

export const shopConnectorListCommand: CliCommand = {
  async run(args, io, config) {
    const { values } = parseArgs({
      args,
      options: { shop: { type: 'string' }, json: { type: 'boolean', default: false } },
    });
    const shopId = required(values.shop, '--shop');
    const views = await withCliContext(config, (context) => listConnections(context, shopId));
    if (values.json) io.out(JSON.stringify(views));
    else printTable(io.out, views, CONNECTION_COLUMNS, 'no acquirer connections');
    return 0;
  },
};

export const shopConnectorRemoveCommand: CliCommand = {
  async run(args, io, config) {
    const { values } = parseArgs({
      args,
      options: { shop: { type: 'string' }, connection: { type: 'string' }, json: { type: 'boolean', default: false } },
    });
    const shopId = required(values.shop, '--shop');
    const connectionId = required(values.connection, '--connection');
    const removed = await withCliContext(config, (context) =>
      usage(() => removeConnection(context, shopId, connectionId)),
    );
    io.out(values.json ? JSON.stringify(removed) : `removed ${removed.id}`);
    return 0;
  },
};

// A live shop's connections to production acquirers (migration 0043): stored with
// their credentials sealed by src/kms, checked with the provider before they are
// saved, and turned back into the connection a provider builds its connector from.
//
// Routing: a method goes to the shop's connection with the lowest priority that
// lists it (the oldest on a tie). A removed connection routes nothing new, but
// stays readable so its attempts can still be looked up and refunded.
import type { Selectable } from 'kysely';
import type { Clock } from '../../clock.ts';
import type { AppContext } from '../../context.ts';
import type { Db, Executor } from '../../db/transaction.ts';
import { findShopProfile } from '../../merchants/merchant-service.ts';
import { InvalidRequestError, NotFoundError } from '../../errors.ts';
import { newId } from '../../ids.ts';
import { open, seal } from '../../kms/envelope.ts';
import type { Keyring } from '../../kms/keyring.ts';
import { PAYMENT_METHODS, type PaymentMethod, type PaymentTables } from '../payment-tables.ts';
import { AcquirerCredentialsError, type AcquirerConnection, type AcquirerProvider } from './acquirer-provider.ts';

type ConnectionRow = Selectable<PaymentTables['acquirer_connections']>;

const CREDENTIAL_LENGTH_MAX = 4096;
const CONNECTIONS_PER_SHOP_MAX = 20;
const PRIORITY_MAX = 1000;

export interface ConnectionStoreDeps {
  readonly db: Db;
  readonly clock: Clock;
  readonly keyring: Keyring;
  readonly logger: AppContext['logger'];
  readonly config: { readonly publicUrl: string };
}

/** What an operator sees of a connection: never its credentials, only their names. */
export interface ConnectionView {
  readonly id: string;
  readonly shop_id: string;
  readonly provider: string;
  readonly api_url: string;
  readonly methods: readonly PaymentMethod[];
  readonly priority: number;
  readonly credential_names: readonly string[];
  readonly created_at: string;
}

export interface NewConnection {
  readonly shopId: string;
  readonly provider: string;
  readonly credentials: Readonly<Record<string, string>>;
  readonly apiUrl?: string | undefined;
  /** The provider's methods unless given. */
  readonly methods?: readonly string[] | undefined;
  readonly priority?: number | undefined;
}

function sealContext(connectionId: string): string {
  return `acquirer-connection:${connectionId}`;
}

/** Where the provider notifies us of a connection's charges. */
function notificationUrlOf(publicUrl: string, provider: string, connectionId: string): string {
  return `${publicUrl}/acquirers/${provider}/notifications/${connectionId}`;
}

function connectionOf(deps: ConnectionStoreDeps, row: ConnectionRow): AcquirerConnection {
  const credentials: unknown = JSON.parse(open(deps.keyring, row.credentials_sealed, sealContext(row.id)));
  if (typeof credentials !== 'object' || credentials === null)
    throw new Error(`acquirer connection ${row.id} holds no credentials object`);
  return {
    id: row.id,
    shopId: row.shop_id,
    provider: row.provider,
    apiUrl: row.api_url,
    credentials: Object.fromEntries(
      Object.entries(credentials).filter((entry): entry is [string, string] => typeof entry[1] === 'string'),
    ),
    methods: row.methods,
    notificationUrl: notificationUrlOf(deps.config.publicUrl, row.provider, row.id),
  };
}

function viewOf(deps: ConnectionStoreDeps, row: ConnectionRow): ConnectionView {
  return {
    id: row.id,
    shop_id: row.shop_id,
    provider: row.provider,
    api_url: row.api_url,
    methods: row.methods,
    priority: row.priority,
    credential_names: Object.keys(connectionOf(deps, row).credentials),
    created_at: row.created_at.toISOString(),
  };
}

function methodsOf(provider: AcquirerProvider, requested: readonly string[] | undefined): PaymentMethod[] {
  const methods = requested ?? provider.methods;
  const unknown = methods.filter((method) => !(PAYMENT_METHODS as readonly string[]).includes(method));
  if (unknown.length > 0) throw new InvalidRequestError(`Unknown methods: ${unknown.join(', ')}.`);
  const unsupported = methods.filter((method) => !(provider.methods as readonly string[]).includes(method));
  if (unsupported.length > 0)
    throw new InvalidRequestError(
      `${provider.name} does not charge ${unsupported.join(', ')}; it charges ${provider.methods.join(', ')}.`,
    );
  if (methods.length === 0) throw new InvalidRequestError('Give at least one method.');
  return [...new Set(methods)] as PaymentMethod[];
}

function checkedCredentials(
  provider: AcquirerProvider,
  given: Readonly<Record<string, string>>,
): Record<string, string> {
  const missing = provider.credentialNames.filter((name) => !given[name]);
  if (missing.length > 0)
    throw new InvalidRequestError(`${provider.name} needs the credentials ${missing.join(', ')}.`);
  const extra = Object.keys(given).filter((name) => !provider.credentialNames.includes(name));
  if (extra.length > 0)
    throw new InvalidRequestError(
      `${provider.name} takes the credentials ${provider.credentialNames.join(', ')}, not ${extra.join(', ')}.`,
    );
  if (Object.values(given).some((value) => value.length > CREDENTIAL_LENGTH_MAX))
    throw new InvalidRequestError(`A credential is longer than ${CREDENTIAL_LENGTH_MAX} characters.`);
  return { ...given };
}

function checkedApiUrl(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new InvalidRequestError(`--api-url is not a URL: ${value}.`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    throw new InvalidRequestError('--api-url must be an http(s) URL.');
  return value.replace(/\/+$/, '');
}

/**
 * Checks the credentials with the provider (network I/O, before any transaction),
 * then stores the connection. A provider's refusal is `InvalidRequestError` with its message.
 */
export async function saveConnection(
  deps: ConnectionStoreDeps,
  providers: ReadonlyMap<string, AcquirerProvider>,
  request: NewConnection,
): Promise<ConnectionView> {
  const provider = providers.get(request.provider);
  if (!provider)
    throw new InvalidRequestError(
      `Unknown acquirer provider "${request.provider}"; this build has ${[...providers.keys()].join(', ') || 'none'}.`,
    );
  const priority = request.priority ?? 0;
  if (!Number.isInteger(priority) || priority < 0 || priority > PRIORITY_MAX)
    throw new InvalidRequestError(`Priority must be a whole number from 0 to ${PRIORITY_MAX}.`);
  if (!(await findShopProfile(deps.db, request.shopId))) throw new NotFoundError(`No shop ${request.shopId}.`);
  const existing = await listConnectionRows(deps.db, request.shopId);
  if (existing.length >= CONNECTIONS_PER_SHOP_MAX)
    throw new InvalidRequestError(`A shop has at most ${CONNECTIONS_PER_SHOP_MAX} acquirer connections.`);
  const id = newId('acquirerConnection');
  const connection: AcquirerConnection = {
    id,
    shopId: request.shopId,
    provider: provider.name,
    apiUrl: checkedApiUrl(request.apiUrl ?? provider.defaultApiUrl),
    credentials: checkedCredentials(provider, request.credentials),
    methods: methodsOf(provider, request.methods),
    notificationUrl: notificationUrlOf(deps.config.publicUrl, provider.name, id),
  };
  try {
    await provider.verifyCredentials(connection, deps);
  } catch (error) {
    if (error instanceof AcquirerCredentialsError)
      throw new InvalidRequestError(`${provider.name} refused the credentials: ${error.message}`);
    throw error;
  }
  const now = deps.clock.now();
  const row = await deps.db
    .insertInto('acquirer_connections')
    .values({
      id,
      shop_id: connection.shopId,
      provider: connection.provider,
      api_url: connection.apiUrl,
      credentials_sealed: seal(deps.keyring, JSON.stringify(connection.credentials), sealContext(id)),
      methods: [...connection.methods],
      priority,
      created_at: now,
      updated_at: now,
      removed_at: null,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  deps.logger.info(
    { shop_id: row.shop_id, connection_id: id, provider: row.provider, methods: row.methods },
    'acquirer connection saved',
  );
  return viewOf(deps, row);
}

async function listConnectionRows(db: Executor<PaymentTables>, shopId: string): Promise<ConnectionRow[]> {
  return db
    .selectFrom('acquirer_connections')
    .selectAll()
    .where('shop_id', '=', shopId)
    .where('removed_at', 'is', null)
    .orderBy('priority')
    .orderBy('created_at')
    .orderBy('id')
    .limit(CONNECTIONS_PER_SHOP_MAX)
    .execute();
}

/** The shop's connections in routing order. */
export async function listConnections(deps: ConnectionStoreDeps, shopId: string): Promise<ConnectionView[]> {
  return (await listConnectionRows(deps.db, shopId)).map((row) => viewOf(deps, row));
}

/** Stops routing to a connection; its past attempts keep their connector. */
export async function removeConnection(
  deps: ConnectionStoreDeps,
  shopId: string,
  connectionId: string,
): Promise<ConnectionView> {
  const row = await deps.db
    .updateTable('acquirer_connections')
    .set({ removed_at: deps.clock.now(), updated_at: deps.clock.now() })
    .where('id', '=', connectionId)
    .where('shop_id', '=', shopId)
    .where('removed_at', 'is', null)
    .returningAll()
    .executeTakeFirst();
  if (!row) throw new NotFoundError(`Shop ${shopId} has no acquirer connection ${connectionId}.`);
  deps.logger.info({ shop_id: shopId, connection_id: connectionId }, 'acquirer connection removed');
  return viewOf(deps, row);
}

/** The shop's live connections in routing order, unsealed. */
export async function routedConnections(deps: ConnectionStoreDeps, shopId: string): Promise<AcquirerConnection[]> {
  return (await listConnectionRows(deps.db, shopId)).map((row) => connectionOf(deps, row));
}

/** A connection by id, removed or not (its attempts still need it). */
export async function findConnection(
  deps: ConnectionStoreDeps,
  connectionId: string,
): Promise<AcquirerConnection | undefined> {
  const row = await deps.db
    .selectFrom('acquirer_connections')
    .selectAll()
    .where('id', '=', connectionId)
    .executeTakeFirst();
  return row ? connectionOf(deps, row) : undefined;
}

/** Connections still routing, for the daily comparison; bounded by `limit`. */
export async function listRoutingConnections(deps: ConnectionStoreDeps, limit: number): Promise<AcquirerConnection[]> {
  const rows = await deps.db
    .selectFrom('acquirer_connections')
    .selectAll()
    .where('removed_at', 'is', null)
    .orderBy('id')
    .limit(limit)
    .execute();
  return rows.map((row) => connectionOf(deps, row));
}

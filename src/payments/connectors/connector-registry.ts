// Which acquirer connector serves a shop, and which one an attempt was charged
// through (the reconciliation worker, notifications and refunds find it by the
// stored name). Sandbox shops charge through the sandbox; a live shop through
// its own stored connections (acquirer-connections.ts), each built by its provider.
import type { Clock } from '../../clock.ts';
import type { AppContext } from '../../context.ts';
import type { Db } from '../../db/transaction.ts';
import type { Keyring } from '../../kms/keyring.ts';
import type { PaymentMethod } from '../payment-tables.ts';
import type { AcquirerConnector } from './acquirer-connector.ts';
import { findConnection, routedConnections } from './acquirer-connections.ts';
import type { AcquirerConnection, AcquirerProvider } from './acquirer-provider.ts';
import { createSandboxConnector } from './sandbox/sandbox-connector.ts';
import { tbankProvider } from './tbank/tbank-provider.ts';
import { yookassaProvider } from './yookassa/yookassa-provider.ts';

/** The production providers of this build, by name; a provider folder adds one entry. */
export const ACQUIRER_PROVIDERS: ReadonlyMap<string, AcquirerProvider> = new Map<string, AcquirerProvider>([
  [tbankProvider.name, tbankProvider],
  [yookassaProvider.name, yookassaProvider],
]);

export interface ConnectorDeps {
  readonly db: Db;
  readonly clock: Clock;
  readonly keyring: Keyring;
  readonly logger: AppContext['logger'];
  readonly config: {
    readonly publicUrl: string;
    /** Per provider, where its notifications may come from (PAYGATE_ACQUIRER_NOTIFICATION_SOURCES_<PROVIDER>). */
    readonly acquirerNotificationSources?: Readonly<Record<string, readonly string[]>> | undefined;
  };
  /** The providers live shops connect to: ACQUIRER_PROVIDERS unless a test gives its own. */
  readonly acquirerProviders?: ReadonlyMap<string, AcquirerProvider> | undefined;
}

function providersOf(deps: Pick<ConnectorDeps, 'acquirerProviders'>): ReadonlyMap<string, AcquirerProvider> {
  return deps.acquirerProviders ?? ACQUIRER_PROVIDERS;
}

/** The connector a stored connection builds; undefined when this build lacks its provider. */
export function connectorOf(deps: ConnectorDeps, connection: AcquirerConnection): AcquirerConnector | undefined {
  return providersOf(deps).get(connection.provider)?.connect(connection, {
    clock: deps.clock,
    logger: deps.logger,
    notificationSources: deps.config.acquirerNotificationSources?.[connection.provider],
  });
}

/** The name a connection's connector carries on its attempts. */
export function connectorNameOf(connection: Pick<AcquirerConnection, 'provider' | 'id'>): string {
  return `${connection.provider}:${connection.id}`;
}

interface Route {
  readonly connector: AcquirerConnector;
  readonly methods: readonly PaymentMethod[];
}

/** A live shop's connections whose provider this build has, in routing order, with the methods routed there. */
async function liveRoutes(deps: ConnectorDeps, shopId: string): Promise<Route[]> {
  const connections = await routedConnections(deps, shopId);
  return connections.flatMap((connection) => {
    const connector = connectorOf(deps, connection);
    if (!connector) {
      deps.logger.warn(
        { connection_id: connection.id, provider: connection.provider },
        'acquirer connection names a provider this build lacks; it routes nothing',
      );
      return [];
    }
    return [{ connector, methods: connection.methods.filter((method) => connector.methods.includes(method)) }];
  });
}

/** What charges each method for a shop: every method for a sandbox shop, its connections' methods for a live one. */
export interface ShopAcquirers {
  /** The connector that charges `method`, or undefined. */
  forMethod(method: PaymentMethod): AcquirerConnector | undefined;
  /** The methods some connector charges. */
  readonly methods: readonly PaymentMethod[];
}

/**
 * The shop's acquirers, read once: the sandbox for sandbox shops; for a live shop
 * its connections, a method going to the first (lowest priority) that lists it.
 */
export async function acquirersForShop(
  deps: ConnectorDeps,
  shop: { readonly id: string; readonly mode: 'sandbox' | 'live' },
): Promise<ShopAcquirers> {
  const sandbox = (): Route[] => {
    const connector = createSandboxConnector(deps);
    return [{ connector, methods: connector.methods }];
  };
  const routes = shop.mode === 'sandbox' ? sandbox() : await liveRoutes(deps, shop.id);
  return {
    forMethod: (method) => routes.find((route) => route.methods.includes(method))?.connector,
    methods: [...new Set(routes.flatMap((route) => route.methods))],
  };
}

/** The connector an attempt names; undefined when this build has no such connector. */
export async function connectorNamed(deps: ConnectorDeps, name: string): Promise<AcquirerConnector | undefined> {
  if (name === 'sandbox') return createSandboxConnector(deps);
  const separator = name.indexOf(':');
  if (separator < 0) return undefined;
  const connection = await findConnection(deps, name.slice(separator + 1));
  if (!connection || connection.provider !== name.slice(0, separator)) return undefined;
  return connectorOf(deps, connection);
}

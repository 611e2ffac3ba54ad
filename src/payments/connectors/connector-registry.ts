// Which acquirer connector serves a shop, and which one an attempt was charged
// through (the reconciliation worker and refunds find it by the stored name).
import type { Clock } from '../../clock.ts';
import type { Db } from '../../db/transaction.ts';
import type { AcquirerConnector } from './acquirer-connector.ts';
import { createSandboxConnector } from './sandbox/sandbox-connector.ts';

export interface ConnectorDeps {
  readonly db: Db;
  readonly clock: Clock;
}

/** The sandbox for sandbox shops; live shops need a production connector (none ships yet). */
export function connectorForShop(deps: ConnectorDeps, shopMode: 'sandbox' | 'live'): AcquirerConnector | undefined {
  return shopMode === 'sandbox' ? createSandboxConnector(deps) : undefined;
}

/** The connector an attempt names; undefined when this build has no such connector. */
export function connectorNamed(deps: ConnectorDeps, name: string): AcquirerConnector | undefined {
  return name === 'sandbox' ? createSandboxConnector(deps) : undefined;
}

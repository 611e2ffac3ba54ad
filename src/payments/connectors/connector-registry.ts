// Which acquirer connector serves a shop, and which one an attempt was charged
// through (the reconciliation worker and refunds find it by the stored name).
import type { Clock } from '../../clock.ts';
import type { Db } from '../../db/transaction.ts';
import type { PaymentMethod } from '../payment-tables.ts';
import type { AcquirerConnector } from './acquirer-connector.ts';
import { createSandboxConnector } from './sandbox/sandbox-connector.ts';

export interface ConnectorDeps {
  readonly db: Db;
  readonly clock: Clock;
  /** The production acquirers live shops charge through, in order of preference; none ships yet (docs/connectors.md). */
  readonly liveConnectors?: readonly AcquirerConnector[] | undefined;
}

/**
 * The connector that charges `method` for a shop: the sandbox for sandbox
 * shops; for live shops the first configured production connector that has the
 * method, or undefined (none ships yet, so a live shop can bind no method).
 */
export function connectorForShop(
  deps: ConnectorDeps,
  shopMode: 'sandbox' | 'live',
  method: PaymentMethod,
): AcquirerConnector | undefined {
  if (shopMode === 'sandbox') return createSandboxConnector(deps);
  return deps.liveConnectors?.find((connector) => connector.methods.includes(method));
}

/** The methods live shops can be charged with: those of the configured production connectors. */
export function liveMethods(deps: ConnectorDeps): PaymentMethod[] {
  return [...new Set((deps.liveConnectors ?? []).flatMap((connector) => connector.methods))];
}

/** The connector an attempt names; undefined when this build has no such connector. */
export function connectorNamed(deps: ConnectorDeps, name: string): AcquirerConnector | undefined {
  if (name === 'sandbox') return createSandboxConnector(deps);
  return deps.liveConnectors?.find((connector) => connector.name === name);
}

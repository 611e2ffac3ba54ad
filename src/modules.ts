// The modules of the gateway, as one typed list: each contributes /v1 routes,
// public (non-API) routes and background workers; app.ts and the runtime wire
// them from here. CLI commands live in src/cli/ and call module functions.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AppContext, Worker } from './context.ts';
import { invoicePageRoutes } from './crypto/receiving/page/invoice-page-routes.ts';
import { cryptoReceivingRoutes } from './crypto/receiving/routes/crypto-routes.ts';
import { createAddressPoolWorker, createChainWatcherWorker, createInvoiceExpiryWorker } from './crypto/receiving/receiving-workers.ts';
import { payoutOutcomes } from './crypto/payouts/payout-outcomes.ts';
import { payoutRoutes } from './crypto/payouts/routes/payout-routes.ts';
import { refundOutcomes } from './crypto/refunds/refund-outcomes.ts';
import { refundRoutes } from './crypto/refunds/routes/refund-routes.ts';
import { withdrawalOutcomes } from './crypto/withdrawals/withdrawal-outcomes.ts';
import type { OutgoingOutcomeHandler, OutgoingPurpose } from './crypto/sending/outgoing-transfers.ts';
import { gasTopupOutcomes, sweepOutcomes } from './crypto/sweeping/sweeping-service.ts';
import { createSweeperWorker } from './crypto/sweeping/sweeping-worker.ts';
import { coldStorageOutcomes } from './crypto/cold-storage/cold-storage-service.ts';
import { createColdStorageWorker } from './crypto/cold-storage/cold-storage-worker.ts';
import { createOutgoingTransferWorker } from './crypto/sending/sending-worker.ts';
import { createCustodyReconciliationWorker } from './crypto/custody/reconciliation-worker.ts';
import { createIdempotencyPurgeWorker } from './idempotency/idempotency-purge-worker.ts';
import { balanceRoutes } from './ledger/balance-routes.ts';
import { createReservationExpiryWorker } from './ledger/reservation-expiry-worker.ts';
import { accountRoutes } from './merchants/account-routes.ts';
import { createExpiryWorker } from './payments/expiry-worker.ts';
import { paymentRoutes } from './payments/payment-routes.ts';
import { createReconciliationWorker } from './payments/reconciliation-worker.ts';
import { paymentPageRoutes } from './payments/page/payment-page-routes.ts';
import { createDeliveryWorker } from './webhooks/delivery-worker.ts';
import { webhookRoutes } from './webhooks/webhook-routes.ts';

export type ModuleRoutes = FastifyPluginAsyncTypebox<{ context: AppContext }>;

export interface GatewayModule {
  readonly name: string;
  /** Routes under /v1: authenticated by API key and rate limited. */
  readonly routes?: ModuleRoutes;
  /** Routes outside /v1 (the hosted payment page). */
  readonly publicRoutes?: ModuleRoutes;
  readonly workers?: (context: AppContext) => Worker[];
  /** Outcome handlers of the outgoing transfers this module enqueues, by purpose (the sign-once executor calls them). */
  readonly outgoingOutcomes?: Partial<Record<OutgoingPurpose, OutgoingOutcomeHandler>>;
}

export const modules: readonly GatewayModule[] = [
  { name: 'merchants', routes: accountRoutes },
  {
    name: 'payments',
    routes: paymentRoutes,
    publicRoutes: paymentPageRoutes,
    workers: (context) => [createExpiryWorker(context), createReconciliationWorker(context)],
  },
  { name: 'webhooks', routes: webhookRoutes, workers: (context) => [createDeliveryWorker(context)] },
  { name: 'idempotency', workers: (context) => [createIdempotencyPurgeWorker(context)] },
  { name: 'ledger', routes: balanceRoutes, workers: (context) => [createReservationExpiryWorker(context)] },
  {
    name: 'crypto',
    routes: cryptoReceivingRoutes,
    publicRoutes: invoicePageRoutes,
    workers: (context) => [createChainWatcherWorker(context), createInvoiceExpiryWorker(context), createAddressPoolWorker(context)],
  },
  // The sign-once executor of every outgoing transfer; the handlers are the other modules' (outgoingOutcomes).
  { name: 'crypto-sending', workers: (context) => [createOutgoingTransferWorker(context, outgoingOutcomeHandlers())] },
  { name: 'crypto-payouts', routes: payoutRoutes, outgoingOutcomes: { payout: payoutOutcomes } },
  { name: 'crypto-refunds', routes: refundRoutes, outgoingOutcomes: { refund: refundOutcomes } },
  // Cabinet withdrawals: no API route (the cabinet and the CLI call the service).
  { name: 'crypto-withdrawals', outgoingOutcomes: { withdrawal: withdrawalOutcomes } },
  {
    name: 'crypto-sweeping',
    workers: (context) => [createSweeperWorker(context)],
    outgoingOutcomes: { sweep: sweepOutcomes, gas_topup: gasTopupOutcomes },
  },
  // On-chain holdings against the ledger; a shortfall pauses the book's signing (docs/custody.md).
  { name: 'crypto-custody', workers: (context) => [createCustodyReconciliationWorker(context)] },
  // The hot wallet's surplus above its ceiling, reported and moved to the cold address.
  { name: 'crypto-cold-storage', workers: (context) => [createColdStorageWorker(context)], outgoingOutcomes: { cold_storage: coldStorageOutcomes } },
];

/** Every module's outcome handlers of outgoing transfers, by purpose (the sign-once executor calls them). */
export function outgoingOutcomeHandlers(): Partial<Record<OutgoingPurpose, OutgoingOutcomeHandler>> {
  return Object.assign({}, ...modules.map((module) => module.outgoingOutcomes ?? {})) as Partial<Record<OutgoingPurpose, OutgoingOutcomeHandler>>;
}

export const apiRoutePlugins: readonly ModuleRoutes[] = modules.flatMap((module) => (module.routes ? [module.routes] : []));

export const publicRoutePlugins: readonly ModuleRoutes[] = modules.flatMap((module) => (module.publicRoutes ? [module.publicRoutes] : []));

export function createWorkers(context: AppContext): Worker[] {
  return modules.flatMap((module) => module.workers?.(context) ?? []);
}

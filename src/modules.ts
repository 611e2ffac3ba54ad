// The modules of the gateway, as one typed list: each contributes /v1 routes,
// public (non-API) routes and background workers; app.ts and the runtime wire
// them from here. CLI commands live in src/cli/ and call module functions.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AppContext, Worker } from './context.ts';
import { invoicePageRoutes } from './crypto/receiving/page/invoice-page-routes.ts';
import { cryptoReceivingRoutes } from './crypto/receiving/routes/crypto-routes.ts';
import { createChainWatcherWorker, createInvoiceExpiryWorker } from './crypto/receiving/receiving-workers.ts';
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
    workers: (context) => [createChainWatcherWorker(context), createInvoiceExpiryWorker(context)],
  },
];

export const apiRoutePlugins: readonly ModuleRoutes[] = modules.flatMap((module) => (module.routes ? [module.routes] : []));

export const publicRoutePlugins: readonly ModuleRoutes[] = modules.flatMap((module) => (module.publicRoutes ? [module.publicRoutes] : []));

export function createWorkers(context: AppContext): Worker[] {
  return modules.flatMap((module) => module.workers?.(context) ?? []);
}

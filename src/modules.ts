// The modules of the gateway. Each contributes /v1 routes, public (non-API)
// routes and background workers; app.ts and the runtime wire them from here.
import type { FastifyPluginAsync } from 'fastify';
import type { AppContext, Worker } from './context.ts';
import { balanceRoutes } from './ledger/balance-routes.ts';
import { createReservationExpiryWorker } from './ledger/reservation-expiry-worker.ts';
import { accountRoutes } from './merchants/account-routes.ts';
import { createExpiryWorker } from './payments/expiry-worker.ts';
import { paymentRoutes } from './payments/payment-routes.ts';
import { createReconciliationWorker } from './payments/reconciliation-worker.ts';
import { paymentPageRoutes } from './payments/page/payment-page-routes.ts';
import { createDeliveryWorker } from './webhooks/delivery-worker.ts';
import { webhookRoutes } from './webhooks/webhook-routes.ts';

type RoutePlugin = FastifyPluginAsync<{ context: AppContext }>;

/** Routes under /v1: authenticated by API key and rate limited. */
export const apiRoutePlugins: readonly RoutePlugin[] = [accountRoutes as RoutePlugin, paymentRoutes as RoutePlugin, webhookRoutes as RoutePlugin, balanceRoutes as RoutePlugin];

/** Routes outside /v1 (the hosted payment page). */
export const publicRoutePlugins: readonly RoutePlugin[] = [paymentPageRoutes];

export function createWorkers(context: AppContext): Worker[] {
  return [createExpiryWorker(context), createReconciliationWorker(context), createDeliveryWorker(context), createReservationExpiryWorker(context)];
}

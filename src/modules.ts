// The modules of the gateway. Each contributes /v1 routes, public (non-API)
// routes and background workers; app.ts and the runtime wire them from here.
import type { FastifyPluginAsync } from 'fastify';
import type { AppContext, Worker } from './context.ts';
import { accountRoutes } from './merchants/account-routes.ts';

type RoutePlugin = FastifyPluginAsync<{ context: AppContext }>;

/** Routes under /v1: authenticated by API key and rate limited. */
export const apiRoutePlugins: readonly RoutePlugin[] = [accountRoutes as RoutePlugin];

/** Routes outside /v1 (the hosted payment page). */
export const publicRoutePlugins: readonly RoutePlugin[] = [];

export function createWorkers(context: AppContext): Worker[] {
  void context;
  return [];
}

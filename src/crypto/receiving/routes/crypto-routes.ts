// Every /v1 route of crypto receiving, as the one plugin modules.ts lists.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../../context.ts';
import { chainTestHelperRoutes } from './chain-test-helper-routes.ts';
import { invoiceRoutes } from './invoice-routes.ts';
import { walletRoutes } from './wallet-routes.ts';

export const cryptoReceivingRoutes: FastifyPluginAsyncTypebox<{ context: AppContext }> = async (app, options) => {
  await app.register(invoiceRoutes, options);
  await app.register(walletRoutes, options);
  await app.register(chainTestHelperRoutes, options);
};

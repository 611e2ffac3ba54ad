// /cabinet/shops/:shopId/operations: the ledger operations of the shop's book
// as a table (operation-listing.ts) with its CSV download.
import type { FastifyInstance } from 'fastify';
import type { CabinetHttpDeps } from '../cabinet-http.ts';
import type { CabinetDeps } from '../cabinet-context.ts';
import { installListing } from '../listings/listing-routes.ts';
import { operationListing } from './operation-listing.ts';

export function operationRoutes(deps: CabinetDeps, http: CabinetHttpDeps) {
  return async (app: FastifyInstance) => {
    installListing(app, deps, http, operationListing(deps));
  };
}

// The cabinet's payouts area: the tables and pages of payouts and batch payouts
// (payout-listings.ts), the single payout form (payout-form-routes.ts) and the
// batch upload from CSV (batch-upload-routes.ts).
import type { FastifyInstance } from 'fastify';
import type { CabinetHttpDeps } from '../cabinet-http.ts';
import type { CabinetModuleDeps } from '../cabinet-context.ts';
import { installBatchUpload } from './batch-upload-routes.ts';
import { installPayoutForm } from './payout-form-routes.ts';
import { installPayoutListings } from './payout-listings.ts';

export function payoutAreaRoutes(deps: CabinetModuleDeps, http: CabinetHttpDeps) {
  return async (app: FastifyInstance) => {
    installPayoutListings(app, deps, http);
    installPayoutForm(app, deps, http);
    await installBatchUpload(app, deps, http);
  };
}

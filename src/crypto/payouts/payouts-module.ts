// The crypto payouts module: payouts and batch payouts from the balance (docs/payouts-api.md).
// It owns the statement batchers its creations share (creation-batches.ts) and its
// memory of committed ledger account ids (payout-ledger.ts). Its service lets the
// cabinet create payouts and batches as the API does, with the person who asked audited.
import type { BuiltModule } from '../../gateway-module.ts';
import { createBatch, reviewBatch, type BatchReview, type CreateBatchRequest } from './batch-service.ts';
import { createCommittedAccountIds } from './payout-ledger.ts';
import { createPayoutCreationBatches } from './creation-batches.ts';
import {
  createPayout,
  quotePayout,
  type CreatePayoutRequest,
  type CreationOptions,
  type PayoutDeps,
  type PayoutShop,
  type QuoteRequest,
  type QuoteView,
} from './payout-service.ts';
import type { BatchView, PayoutView } from './payouts-views.ts';
import { payoutRoutes } from './routes/payout-routes.ts';

export type PayoutsModuleDeps = Omit<PayoutDeps, 'batches' | 'committedAccountIds'>;

/** What other modules (the cabinet) ask of payouts: the API's creations, with the same rules. */
export interface PayoutsService {
  quote(shop: PayoutShop, request: QuoteRequest): Promise<QuoteView>;
  create(
    shop: PayoutShop,
    request: CreatePayoutRequest,
    options: CreationOptions,
  ): Promise<{ created: boolean; payout: PayoutView }>;
  review(shop: PayoutShop, payouts: CreateBatchRequest['payouts']): Promise<BatchReview>;
  createBatch(
    shop: PayoutShop,
    request: CreateBatchRequest,
    options: CreationOptions,
  ): Promise<{ created: boolean; batch: BatchView }>;
}

export function createPayoutsModule(deps: PayoutsModuleDeps): BuiltModule<PayoutsService> {
  const batches = createPayoutCreationBatches(deps.db, deps.clock);
  const committedAccountIds = createCommittedAccountIds();
  const payoutDeps: PayoutDeps = { ...deps, batches, committedAccountIds };
  return {
    module: { name: 'crypto-payouts', routes: payoutRoutes(payoutDeps) },
    service: {
      quote: (shop, request) => quotePayout(payoutDeps, shop, request),
      create: (shop, request, options) => createPayout(payoutDeps, shop, request, options),
      review: (shop, payouts) => reviewBatch(payoutDeps, shop, payouts),
      createBatch: (shop, request, options) => createBatch(payoutDeps, shop, request, options),
    },
  };
}

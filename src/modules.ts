// The modules of the gateway, as one typed list: each contributes /v1 routes,
// public (non-API) routes and background workers; app.ts and the runtime wire
// them from here. CLI commands live in src/cli/ and call module functions.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AppContext, Worker } from './context.ts';
import { createChainModule } from './crypto/chain/chain-module.ts';
import type { CryptoChain } from './crypto/chain/crypto-chain.ts';
import { coldStorageOutcomes } from './crypto/cold-storage/cold-storage-service.ts';
import { createColdStorageModule } from './crypto/cold-storage/cold-storage-module.ts';
import { createCustodyModule } from './crypto/custody/custody-module.ts';
import { payoutOutcomes } from './crypto/payouts/payout-outcomes.ts';
import { createPayoutsModule } from './crypto/payouts/payouts-module.ts';
import { createKeyOfDatabaseCheck } from './crypto/receiving/address-allocation.ts';
import { createReceivingModule } from './crypto/receiving/receiving-module.ts';
import { refundOutcomes } from './crypto/refunds/refund-outcomes.ts';
import { createRefundsModule } from './crypto/refunds/refunds-module.ts';
import type { OutgoingOutcomeHandler, OutgoingPurpose } from './crypto/sending/outgoing-transfers.ts';
import { createOutgoingTransferWorker } from './crypto/sending/sending-worker.ts';
import { gasTopupOutcomes, sweepOutcomes } from './crypto/sweeping/sweeping-service.ts';
import { createSweepingModule } from './crypto/sweeping/sweeping-module.ts';
import { withdrawalOutcomes } from './crypto/withdrawals/withdrawal-outcomes.ts';
import { createWithdrawalsModule } from './crypto/withdrawals/withdrawals-module.ts';
import type { GatewayModule as ModuleObject } from './gateway-module.ts';
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
];

/** The outcome handlers of outgoing transfers, by purpose, of the crypto modules that enqueue them (the sign-once executor calls them). */
const outgoingOutcomes: Partial<Record<OutgoingPurpose, OutgoingOutcomeHandler>> = {
  payout: payoutOutcomes,
  refund: refundOutcomes,
  withdrawal: withdrawalOutcomes,
  sweep: sweepOutcomes,
  gas_topup: gasTopupOutcomes,
  cold_storage: coldStorageOutcomes,
};

/** Every module's outcome handlers of outgoing transfers, by purpose (the sign-once executor calls them). */
export function outgoingOutcomeHandlers(): Partial<Record<OutgoingPurpose, OutgoingOutcomeHandler>> {
  return { ...outgoingOutcomes };
}

/** The crypto modules, built once per gateway process; `close` closes them in reverse order (the chain handle last). */
export interface CryptoModules {
  readonly modules: readonly ModuleObject[];
  /** The chain module's handle, which every crypto module received (tests drive its sandbox chain). */
  readonly chain: CryptoChain;
  close(): Promise<void>;
}

/** Builds the crypto modules in dependency order; `chain` replaces the configured chain (tests). */
export function createCryptoModules(context: AppContext, options: { readonly chain?: CryptoChain } = {}): CryptoModules {
  const chain = createChainModule({ ...context, chain: options.chain, checkKey: createKeyOfDatabaseCheck(context.db) });
  const deps = { ...context, chain: chain.service };
  const custody = createCustodyModule(deps);
  const built: ModuleObject[] = [
    chain.module,
    createReceivingModule(deps).module,
    // The sign-once executor of every outgoing transfer; the handlers are the other modules' (outgoingOutcomes).
    { name: 'crypto-sending', workers: () => [createOutgoingTransferWorker(deps, outgoingOutcomeHandlers())] },
    createPayoutsModule({ ...deps, signingPause: custody.service.signingPause }).module,
    createRefundsModule(deps).module,
    createWithdrawalsModule().module,
    createSweepingModule(deps).module,
    custody.module,
    createColdStorageModule(deps).module,
  ];
  let closing: Promise<void> | undefined;
  return {
    modules: built,
    chain: chain.service,
    close() {
      // Once: an app's onClose and its owner may both close them.
      closing ??= (async () => {
        for (const module of [...built].reverse()) await module.close?.();
      })();
      return closing;
    },
  };
}

export const apiRoutePlugins: readonly ModuleRoutes[] = modules.flatMap((module) => (module.routes ? [module.routes] : []));

export const publicRoutePlugins: readonly ModuleRoutes[] = modules.flatMap((module) => (module.publicRoutes ? [module.publicRoutes] : []));

export function createWorkers(context: AppContext, crypto: CryptoModules): Worker[] {
  return [...modules.flatMap((module) => module.workers?.(context) ?? []), ...crypto.modules.flatMap((module) => module.workers?.() ?? [])];
}

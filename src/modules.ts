// The modules of the gateway, built once in dependency order: each takes the platform
// parts it uses and the services of the modules before it, and contributes /v1 routes,
// public (non-API) routes, background workers and what it must close (gateway-module.ts).
// app.ts mounts their routes; runtime.ts starts their workers and closes them.
// CLI commands live in src/cli/ and call module functions.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AppContext, Worker } from './context.ts';
import type { GatewayModule, ModuleRoutes } from './gateway-module.ts';
import { closeCryptoDeps } from './crypto/receiving/crypto-deps.ts';
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
import { createIdempotencyModule } from './idempotency/idempotency-module.ts';
import { createLedgerModule } from './ledger/ledger-module.ts';
import { createMerchantsModule, type MerchantsService } from './merchants/merchants-module.ts';
import { createPaymentsModule } from './payments/payments-module.ts';
import { createWebhooksModule, type WebhooksService } from './webhooks/webhooks-module.ts';

/** The built modules and the services the runtime itself calls. */
export interface GatewayModules {
  /** In the order their routes are mounted (the OpenAPI document lists paths in it); closed in reverse. */
  readonly list: readonly GatewayModule[];
  readonly merchants: MerchantsService;
  readonly webhooks: WebhooksService;
}

/** Every module of the gateway, built once on `platform`, each after the modules it needs. */
export function createModules(platform: AppContext): GatewayModules {
  const idempotency = createIdempotencyModule(platform);
  const webhooks = createWebhooksModule(platform);
  const merchants = createMerchantsModule(platform);
  const ledger = createLedgerModule(platform);
  const payments = createPaymentsModule(platform);
  const crypto = cryptoModules.map((entry) => adaptCryptoModule(entry, platform));
  return {
    list: [merchants.module, payments.module, webhooks.module, idempotency.module, ledger.module, ...crypto],
    merchants: merchants.service,
    webhooks: webhooks.service,
  };
}

/** The workers of every module, for a process that runs them. */
export function createWorkers(modules: readonly GatewayModule[]): Worker[] {
  return modules.flatMap((module) => module.workers?.() ?? []);
}

/** Closes every module, the last listed first; a failure of one does not keep the others open (the first is thrown). */
export async function closeModules(modules: readonly GatewayModule[]): Promise<void> {
  const failures: unknown[] = [];
  for (const module of [...modules].reverse()) await module.close?.().catch((error: unknown) => failures.push(error));
  if (failures.length > 0) throw failures[0];
}

type ContextRoutes = FastifyPluginAsyncTypebox<{ context: AppContext }>;

/** A crypto module in its earlier shape (routes taking `{ context }`, workers made from the context). */
interface CryptoModuleEntry {
  readonly name: string;
  readonly routes?: ContextRoutes;
  readonly publicRoutes?: ContextRoutes;
  readonly workers?: (context: AppContext) => Worker[];
  /** Outcome handlers of the outgoing transfers this module enqueues, by purpose (the sign-once executor calls them). */
  readonly outgoingOutcomes?: Partial<Record<OutgoingPurpose, OutgoingOutcomeHandler>>;
  /** Closes what the module opened on this context. */
  readonly close?: (context: AppContext) => Promise<void>;
}

export const cryptoModules: readonly CryptoModuleEntry[] = [
  {
    name: 'crypto',
    routes: cryptoReceivingRoutes,
    publicRoutes: invoicePageRoutes,
    workers: (context) => [createChainWatcherWorker(context), createInvoiceExpiryWorker(context), createAddressPoolWorker(context)],
    // The chain handle (node clients, the in-process sandbox chain) serves routes and workers alike.
    close: (context) => closeCryptoDeps(context),
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

/** Every crypto module's outcome handlers of outgoing transfers, by purpose (the sign-once executor calls them). */
export function outgoingOutcomeHandlers(): Partial<Record<OutgoingPurpose, OutgoingOutcomeHandler>> {
  const handlers: Partial<Record<OutgoingPurpose, OutgoingOutcomeHandler>> = {};
  for (const module of cryptoModules) Object.assign(handlers, module.outgoingOutcomes);
  return handlers;
}

/** A crypto module of the earlier shape as a GatewayModule: its routes and workers on `platform`. */
function adaptCryptoModule(entry: CryptoModuleEntry, platform: AppContext): GatewayModule {
  const { routes, publicRoutes, workers, close } = entry;
  return {
    name: entry.name,
    ...(routes && { routes: withContext(routes, platform) }),
    ...(publicRoutes && { publicRoutes: withContext(publicRoutes, platform) }),
    ...(workers && { workers: () => workers(platform) }),
    ...(close && { close: () => close(platform) }),
  };
}

function withContext(plugin: ContextRoutes, context: AppContext): ModuleRoutes {
  return async (app) => {
    await app.register(plugin, { context });
  };
}

// The modules of the gateway, built once in dependency order: each takes the platform
// parts it uses and the services of the modules before it, and contributes /v1 routes,
// public (non-API) routes, background workers and what it must close (gateway-module.ts).
// app.ts mounts their routes; runtime.ts starts their workers and closes them.
// CLI commands live in src/cli/ and call module functions.
import type { AppContext, Worker } from './context.ts';
import type { GatewayModule } from './gateway-module.ts';
import { createCabinetModule, type CabinetModuleService } from './cabinet/cabinet-module.ts';
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
import { energyDelegationOutcomes, energyUndelegationOutcomes } from './crypto/sweeping/sweep-delegation.ts';
import { createSweepingModule } from './crypto/sweeping/sweeping-module.ts';
import { withdrawalOutcomes } from './crypto/withdrawals/withdrawal-outcomes.ts';
import { createWithdrawalsModule } from './crypto/withdrawals/withdrawals-module.ts';
import { createIdempotencyModule } from './idempotency/idempotency-module.ts';
import { createLedgerModule } from './ledger/ledger-module.ts';
import { createMerchantsModule, type MerchantsService } from './merchants/merchants-module.ts';
import { createPaymentsModule, type PaymentsOptions } from './payments/payments-module.ts';
import { auditRetentionSource } from './audit/audit-retention.ts';
import { ConfigError, selectsWorker, type Config, type WorkerSelection } from './config.ts';
import { createRetentionModule } from './retention/retention-module.ts';
import type { RetentionSource } from './retention/retention-source.ts';
import { webhookRetentionSource } from './webhooks/webhook-retention.ts';
import { createWebhooksModule, type WebhooksService } from './webhooks/webhooks-module.ts';

/** The built modules and the services the runtime itself calls. */
export interface GatewayModules {
  /** In the order their routes are mounted (the OpenAPI document lists paths in it); closed in reverse. */
  readonly list: readonly GatewayModule[];
  readonly merchants: MerchantsService;
  readonly webhooks: WebhooksService;
  /** The chain module's handle, which every crypto module received (tests drive its sandbox chain). */
  readonly chain: CryptoChain;
  /** The cabinet's service (its route table, for the route × role matrix). */
  readonly cabinet: CabinetModuleService;
}

/** Every module of the gateway, built once on `platform`, each after the modules it needs; `chain` replaces the configured chain (tests); `payments` gives the acquirers and a test's crash-point hook. */
export function createModules(
  platform: AppContext,
  options: { readonly chain?: CryptoChain; readonly payments?: PaymentsOptions } = {},
): GatewayModules {
  const idempotency = createIdempotencyModule(platform);
  const webhooks = createWebhooksModule(platform);
  const merchants = createMerchantsModule(platform);
  const ledger = createLedgerModule(platform);
  const payments = createPaymentsModule({ ...platform, ...options.payments });
  const chain = createChainModule({
    ...platform,
    chain: options.chain,
    checkKey: createKeyOfDatabaseCheck(platform.db),
  });
  const crypto = { ...platform, chain: chain.service };
  const custody = createCustodyModule(crypto);
  const payouts = createPayoutsModule({ ...crypto, signingPause: custody.service.signingPause });
  const cabinet = createCabinetModule({ ...crypto, payouts: payouts.service });
  return {
    list: [
      merchants.module,
      payments.module,
      webhooks.module,
      idempotency.module,
      createRetentionModule({ ...platform, sources: retentionSources(platform.config) }).module,
      ledger.module,
      // Closed last of the crypto modules: the chain handle (node clients, the in-process sandbox chain) serves them all.
      chain.module,
      createReceivingModule(crypto).module,
      // The sign-once executor of every outgoing transfer; the handlers are the other modules' (outgoingOutcomes).
      {
        name: 'crypto-sending',
        workers: () => [
          createOutgoingTransferWorker(
            { ...crypto, signingPaused: custody.service.isSigningPaused },
            outgoingOutcomeHandlers(),
          ),
        ],
      },
      payouts.module,
      createRefundsModule(crypto).module,
      createWithdrawalsModule(crypto).module,
      createSweepingModule(crypto).module,
      custody.module,
      createColdStorageModule(crypto).module,
      cabinet.module,
    ],
    merchants: merchants.service,
    webhooks: webhooks.service,
    chain: chain.service,
    cabinet: cabinet.service,
  };
}

/** The outcome handlers of outgoing transfers, by purpose, of the crypto modules that enqueue them (the sign-once executor calls them). */
const outgoingOutcomes: Partial<Record<OutgoingPurpose, OutgoingOutcomeHandler>> = {
  payout: payoutOutcomes,
  refund: refundOutcomes,
  withdrawal: withdrawalOutcomes,
  sweep: sweepOutcomes,
  gas_topup: gasTopupOutcomes,
  energy_delegation: energyDelegationOutcomes,
  energy_undelegation: energyUndelegationOutcomes,
  cold_storage: coldStorageOutcomes,
};

/** Every module's outcome handlers of outgoing transfers, by purpose (the sign-once executor calls them). */
export function outgoingOutcomeHandlers(): Partial<Record<OutgoingPurpose, OutgoingOutcomeHandler>> {
  return { ...outgoingOutcomes };
}

/** The append-only tables that age out, each as its module says, with the configured retention (docs/operations.md). */
export function retentionSources(config: Config): RetentionSource[] {
  return [auditRetentionSource(config.retention.auditMonths), webhookRetentionSource(config.retention.webhookDays)];
}

/**
 * The workers of every module, for a process that runs them: all of them, or those `selection`
 * chooses (PAYGATE_WORKERS). A name no worker has is refused, naming the workers there are. The
 * workers not chosen are made but never started, and a worker opens nothing until it starts.
 */
export function createWorkers(modules: readonly GatewayModule[], selection?: WorkerSelection): Worker[] {
  const workers = modules.flatMap((module) => module.workers?.() ?? []);
  if (selection === undefined) return workers;
  const unknown = selection.names.filter((name) => !workers.some((worker) => worker.name === name));
  if (unknown.length > 0)
    throw new ConfigError(
      'PAYGATE_WORKERS',
      `names ${unknown.join(', ')}, which no worker is: the workers are ${workers.map((worker) => worker.name).join(', ')}`,
    );
  return workers.filter((worker) => selectsWorker(selection, worker.name));
}

/** Something opened while starting, closed again on stop or after a failed start. */
export type Closer = () => Promise<unknown> | unknown;

/** Runs every closer, the last opened first; a failure of one does not keep the others open (the first is thrown once all have run). */
export async function closeInReverse(opened: readonly Closer[]): Promise<void> {
  const failures: unknown[] = [];
  for (const close of [...opened].reverse()) {
    try {
      await close();
    } catch (error) {
      failures.push(error);
    }
  }
  if (failures.length > 0) throw failures[0];
}

/** Closes every module, the last listed first. */
export function closeModules(modules: readonly GatewayModule[]): Promise<void> {
  return closeInReverse(modules.map((module) => () => module.close?.()));
}

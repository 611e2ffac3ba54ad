// The payments module: RUB payments and their API, the hosted payment page, payment
// expiry and charge reconciliation, merchants' refunds, and captures held in suspense.
import type { AppContext } from '../context.ts';
import type { BuiltModule } from '../gateway-module.ts';
import type { ConnectorDeps } from './connectors/connector-registry.ts';
import type { CrashPointHook } from './crash-points.ts';
import { createAcquirerDailyReconciliation } from './acquirer-daily-reconciliation.ts';
import { acquirerNotificationRoutes } from './acquirer-notification-routes.ts';
import { createExpiryWorker } from './expiry-worker.ts';
import { createMethodSettingsSource } from './method-settings-cache.ts';
import { paymentPageRoutes } from './page/payment-page-routes.ts';
import { paymentRefundRoutes } from './payment-refund-routes.ts';
import { paymentRoutes } from './payment-routes.ts';
import { createReconciliationWorker } from './reconciliation-worker.ts';
import { createRefundWorker } from './refund-worker.ts';
import type { RefundOutcome } from './connectors/acquirer-connector.ts';
import { applyRefundOutcome } from './payment-refund-service.ts';
import { listSuspenseCaptures, refundSuspenseCapture, type CaptureView } from './suspense-service.ts';

/** What the runtime gives payments beyond the platform: the production acquirers, and a test's crash-point hook. */
export interface PaymentsOptions {
  /** The providers live shops connect to; ACQUIRER_PROVIDERS unless a test gives its own. */
  readonly acquirerProviders?: ConnectorDeps['acquirerProviders'];
  /** A test's hook at the charge path's crash points (crash-points.ts); absent in production. */
  readonly crashPoint?: CrashPointHook | undefined;
}

export type PaymentsModuleDeps = Pick<
  AppContext,
  'db' | 'clock' | 'config' | 'logger' | 'health' | 'metrics' | 'notifications' | 'keyring'
> &
  PaymentsOptions;

/** What the operator's tools ask of payments: captures held in suspense; and an acquirer's word on a refund. */
export interface PaymentsService {
  listSuspenseCaptures(limit: number): Promise<CaptureView[]>;
  refundSuspenseCapture(attemptId: string): Promise<CaptureView>;
  /**
   * Applies a refund's outcome the acquirer reported by a (checked and confirmed) notification;
   * `refundKey` is the merchant refund's id. Idempotent: only a pending refund moves.
   */
  applyRefundOutcome(refundKey: string, outcome: RefundOutcome): Promise<void>;
}

export function createPaymentsModule(deps: PaymentsModuleDeps): BuiltModule<PaymentsService> {
  // A shop's method settings, read on every creation: the module's own cache, dropped on close.
  const methodSettings = createMethodSettingsSource(deps.notifications, deps.clock);
  return {
    module: {
      name: 'payments',
      routes: async (app) => {
        await app.register(paymentRoutes({ ...deps, methodSettings }));
        await app.register(paymentRefundRoutes(deps));
      },
      publicRoutes: async (app) => {
        await app.register(paymentPageRoutes(deps));
        await app.register(acquirerNotificationRoutes(deps));
      },
      workers: () => [
        createExpiryWorker(deps),
        createReconciliationWorker(deps),
        createRefundWorker(deps),
        createAcquirerDailyReconciliation(deps),
      ],
      close: async () => methodSettings.close(),
    },
    service: {
      listSuspenseCaptures: (limit) => listSuspenseCaptures(deps, limit),
      refundSuspenseCapture: (attemptId) => refundSuspenseCapture(deps, attemptId),
      applyRefundOutcome: async (refundKey, outcome) => {
        await applyRefundOutcome(deps, refundKey, outcome);
      },
    },
  };
}

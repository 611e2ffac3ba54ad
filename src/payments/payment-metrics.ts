// Prometheus metrics of charge reconciliation, suspense and pending refunds, registered once per
// registry (the API and the workers of one process share the app's registry).
import { Counter, Gauge, type Registry } from 'prom-client';
import type { AppContext } from '../context.ts';
import { countUnrefundedSuspense } from './attempt-repository.ts';
import { countPendingRefunds } from './payment-refund-repository.ts';

const RECONCILED_METRIC = 'paygate_payment_attempts_reconciled_total';
const SUSPENSE_METRIC = 'paygate_payment_captures_in_suspense';
const PENDING_REFUNDS_METRIC = 'paygate_payment_refunds_pending';

/** applied: the outcome was applied; abandoned: the acquirer never had it; unknown: asked again later; failed: the look-up failed. */
export type ReconcileResult = 'applied' | 'abandoned' | 'unknown' | 'failed';

function reconciledCounter(registry: Registry): Counter<'result'> {
  const existing = registry.getSingleMetric(RECONCILED_METRIC);
  if (existing) return existing as Counter<'result'>;
  return new Counter({
    name: RECONCILED_METRIC,
    help: 'Payment attempts of unknown outcome looked up at the acquirer, by result (applied, abandoned, unknown, failed).',
    labelNames: ['result'],
    registers: [registry],
  });
}

function registerSuspenseGauge(context: Pick<AppContext, 'db' | 'metrics' | 'logger'>): void {
  if (context.metrics.getSingleMetric(SUSPENSE_METRIC)) return;
  new Gauge({
    name: SUSPENSE_METRIC,
    help: 'Captured charges held in suspense and not refunded yet (refund them: paygate payments suspense list).',
    registers: [context.metrics],
    async collect() {
      try {
        this.set(await countUnrefundedSuspense(context.db));
      } catch (error) {
        context.logger.warn({ err: error }, 'could not count captures in suspense');
      }
    },
  });
}

/** Merchants' refunds the acquirer has not confirmed or refused yet (the refund worker keeps asking). */
export function registerPendingRefundsGauge(context: Pick<AppContext, 'db' | 'metrics' | 'logger'>): void {
  if (context.metrics.getSingleMetric(PENDING_REFUNDS_METRIC)) return;
  new Gauge({
    name: PENDING_REFUNDS_METRIC,
    help: 'Refunds of RUB payments waiting for the acquirer’s outcome; their amounts stay reserved from the merchants’ balances.',
    registers: [context.metrics],
    async collect() {
      try {
        this.set(await countPendingRefunds(context.db));
      } catch (error) {
        context.logger.warn({ err: error }, 'could not count pending refunds');
      }
    },
  });
}

export function paymentMetrics(context: Pick<AppContext, 'db' | 'metrics' | 'logger'>): {
  countReconciled(result: ReconcileResult): void;
} {
  const counter = reconciledCounter(context.metrics);
  registerSuspenseGauge(context);
  return { countReconciled: (result) => counter.inc({ result }) };
}

// Prometheus metrics of webhook delivery, registered once per registry (the
// API and the workers of one process share the app's registry).
import { Counter, Gauge, type Registry } from 'prom-client';
import type { AppContext } from '../context.ts';
import { countDueDeliveries } from './webhook-repository.ts';
import type { AttemptOutcome } from './webhook-tables.ts';

const ATTEMPTS_METRIC = 'paygate_webhook_attempts_total';
const DUE_METRIC = 'paygate_webhook_deliveries_due';
const POSTPONED_METRIC = 'paygate_webhook_deliveries_postponed_total';
const CLAIMED_EARLY_METRIC = 'paygate_webhook_deliveries_claimed_early_total';

/** Why a worker put deliveries off without an attempt: their receiver stalled, or had more due than it can take now. */
type PostponeReason = 'impaired' | 'backlog';

export interface WebhookMetrics {
  countAttempt(outcome: AttemptOutcome): void;
  countPostponed(reason: PostponeReason, deliveries: number): void;
  /** Deliveries put off at a receiver's pace and claimed before their time, the receiver having room sooner. */
  countClaimedEarly(deliveries: number): void;
}

function attemptsCounter(registry: Registry): Counter<'outcome'> {
  const existing = registry.getSingleMetric(ATTEMPTS_METRIC);
  if (existing) return existing as Counter<'outcome'>;
  return new Counter({
    name: ATTEMPTS_METRIC,
    help: 'Webhook delivery attempts by outcome (succeeded, http_error, timeout, connection_error, refused).',
    labelNames: ['outcome'],
    registers: [registry],
  });
}

function postponedCounter(registry: Registry): Counter<'reason'> {
  const existing = registry.getSingleMetric(POSTPONED_METRIC);
  if (existing) return existing as Counter<'reason'>;
  return new Counter({
    name: POSTPONED_METRIC,
    help: 'Webhook deliveries put off without an attempt: reason="impaired" (the receiver stalled) or "backlog" (more due than its cap can take).',
    labelNames: ['reason'],
    registers: [registry],
  });
}

function claimedEarlyCounter(registry: Registry): Counter {
  const existing = registry.getSingleMetric(CLAIMED_EARLY_METRIC);
  if (existing) return existing as Counter;
  return new Counter({
    name: CLAIMED_EARLY_METRIC,
    help: 'Webhook deliveries put off at a receiver’s pace and claimed before their time because the receiver had room sooner.',
    registers: [registry],
  });
}

function registerDueGauge(context: Pick<AppContext, 'db' | 'clock' | 'metrics' | 'logger'>): void {
  if (context.metrics.getSingleMetric(DUE_METRIC)) return;
  new Gauge({
    name: DUE_METRIC,
    help: 'Webhook deliveries whose next attempt is due now (the backlog).',
    registers: [context.metrics],
    async collect() {
      try {
        this.set(await countDueDeliveries(context.db, context.clock.now()));
      } catch (error) {
        context.logger.warn({ err: error }, 'could not count due webhook deliveries');
      }
    },
  });
}

export function webhookMetrics(context: Pick<AppContext, 'db' | 'clock' | 'metrics' | 'logger'>): WebhookMetrics {
  const counter = attemptsCounter(context.metrics);
  const postponed = postponedCounter(context.metrics);
  const claimedEarly = claimedEarlyCounter(context.metrics);
  registerDueGauge(context);
  // One child per outcome, looked up once: `inc({ outcome })` hashes the labels on every call.
  const byOutcome = new Map<AttemptOutcome, ReturnType<typeof counter.labels>>();
  return {
    countAttempt(outcome) {
      let child = byOutcome.get(outcome);
      if (!child) byOutcome.set(outcome, (child = counter.labels({ outcome })));
      child.inc();
    },
    countPostponed(reason, deliveries) {
      postponed.inc({ reason }, deliveries);
    },
    countClaimedEarly(deliveries) {
      if (deliveries > 0) claimedEarly.inc(deliveries);
    },
  };
}

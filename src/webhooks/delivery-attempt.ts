// One delivery attempt: sign, send, work out the next state from the schedule,
// and record it (in the worker, batched with others into one statement).
import type { AppContext } from '../context.ts';
import { newId } from '../ids.ts';
import { retryAfterMs } from '../retry-after.ts';
import { nextRetryDelayMs } from './retry-schedule.ts';
import { signedHeaders } from './signing.ts';
import { openWebhookSecret, type WebhookSecretOpener } from './webhook-secrets.ts';
import { recordAttempt, recordAttempts, type AttemptRecord, type ClaimedDelivery } from './webhook-repository.ts';
import type { SendResult, WebhookSender } from './webhook-sender.ts';
import type { WebhookMetrics } from './webhook-metrics.ts';

export type AttemptDeps = Pick<AppContext, 'db' | 'clock' | 'logger' | 'keyring'> & {
  /** Opens the sealed secrets (a worker's keeps what it opened); without it each attempt opens them with `keyring`. */
  readonly openSecret?: WebhookSecretOpener | undefined;
  readonly sender: WebhookSender;
  readonly metrics: WebhookMetrics;
  readonly random?: (() => number) | undefined;
  /** How the attempt is written; one statement per attempt unless a worker batches them. Resolves false when the lease was lost. */
  readonly record?: ((record: AttemptRecord) => Promise<boolean>) | undefined;
};

export interface AttemptSummary {
  readonly eventId: string;
  readonly attemptNumber: number;
  readonly result: SendResult;
  readonly nextAttemptAt: Date | null;
  readonly startedAt: Date;
}

/** The shop's signing secrets (stored sealed) that apply at `at`. */
function secretsAt(openSecret: WebhookSecretOpener, delivery: ClaimedDelivery, at: Date) {
  const previousValid =
    delivery.previousSecret !== null &&
    delivery.previousSecretExpiresAt !== null &&
    delivery.previousSecretExpiresAt > at;
  return {
    current: openSecret(delivery.shopId, delivery.secret),
    previous: previousValid ? openSecret(delivery.shopId, delivery.previousSecret!) : null,
  };
}

/** Makes one attempt of a claimed delivery and records it. Never throws for a receiver's failure. */
export async function attemptDelivery(
  deps: AttemptDeps,
  delivery: ClaimedDelivery,
  onSent?: (result: SendResult) => void,
): Promise<AttemptSummary> {
  const startedAt = deps.clock.now();
  const headers = signedHeaders(
    secretsAt(
      deps.openSecret ?? ((shopId, sealed) => openWebhookSecret(deps.keyring, shopId, sealed)),
      delivery,
      startedAt,
    ),
    delivery.eventId,
    startedAt,
    delivery.payload,
  );
  const result = await deps.sender.send({ url: delivery.url, headers, body: delivery.payload });
  onSent?.(result);
  const finishedAt = deps.clock.now();
  const attemptNumber = delivery.attemptCount + 1;
  const delayMs =
    result.outcome === 'succeeded'
      ? null
      : nextRetryDelayMs({
          attemptsMade: attemptNumber,
          maxAttempts: delivery.maxAttempts,
          retryAfterMs: retryAfterMs(result.retryAfter, finishedAt),
          random: deps.random,
        });
  const nextAttemptAt = delayMs === null ? null : new Date(finishedAt.getTime() + delayMs);
  const status = result.outcome === 'succeeded' ? 'delivered' : nextAttemptAt === null ? 'failed' : 'pending';
  const record = deps.record ?? ((input: AttemptRecord) => recordAttempt(deps.db, input));
  const kept = await record({
    attemptId: newId('attempt'),
    attemptNumber,
    deliveryId: delivery.deliveryId,
    eventId: delivery.eventId,
    url: delivery.url,
    leaseToken: delivery.leaseToken,
    startedAt,
    durationMs: result.durationMs,
    outcome: result.outcome,
    statusCode: result.statusCode,
    error: result.error,
    responseBody: result.responseBody,
    status,
    nextAttemptAt,
    now: finishedAt,
  });
  deps.metrics.countAttempt(result.outcome);
  if (!kept)
    deps.logger.warn(
      { event_id: delivery.eventId },
      'webhook lease expired during the attempt; another worker owns the delivery now',
    );
  if (result.outcome !== 'succeeded') {
    deps.logger.info(
      {
        event_id: delivery.eventId,
        attempt: attemptNumber,
        outcome: result.outcome,
        status_code: result.statusCode,
        next_attempt_at: nextAttemptAt,
      },
      'webhook attempt failed',
    );
  }
  return { eventId: delivery.eventId, attemptNumber, result, nextAttemptAt, startedAt };
}

/**
 * Collects finished attempts and writes them in one statement per batch: one
 * commit for many attempts. A delivery keeps its lease until its attempt is
 * written, so a crash before the write only means the attempt is made again.
 */
export function createRecordBatcher(db: AppContext['db'], maxBatch: number, maxDelayMs: number) {
  let pending: { record: AttemptRecord; resolve: (kept: boolean) => void; reject: (error: unknown) => void }[] = [];
  let timer: NodeJS.Timeout | undefined;
  const flush = () => {
    if (timer) clearTimeout(timer);
    timer = undefined;
    const batch = pending;
    pending = [];
    if (batch.length === 0) return;
    recordAttempts(
      db,
      batch.map((item) => item.record),
    ).then(
      (kept) => batch.forEach((item) => item.resolve(kept.has(item.record.deliveryId))),
      (error: unknown) => batch.forEach((item) => item.reject(error)),
    );
  };
  return {
    add(record: AttemptRecord): Promise<boolean> {
      return new Promise<boolean>((resolve, reject) => {
        pending.push({ record, resolve, reject });
        if (pending.length >= maxBatch) flush();
        else timer ??= setTimeout(flush, maxDelayMs);
      });
    },
  };
}

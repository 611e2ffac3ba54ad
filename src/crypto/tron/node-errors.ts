// How a TRON node request fails, as the callers of the node client see it.
// A failure worth another try (a node down, slow, busy, rate-limited, or
// answering something we refuse to believe) moves on to the next node; when no
// node gave a usable answer within the bounded attempts, the caller gets
// TronNodeUnavailableError, which the HTTP layer answers with 503. A node that
// refuses our request as such (HTTP 4xx, an `Error` body) is not retried.
import { ServiceUnavailableError } from '../../errors.ts';

/** Why one attempt against one node URL did not give a usable answer. */
export type NodeFailureKind =
  'connection_error' | 'timeout' | 'http_status' | 'rate_limited' | 'busy' | 'not_served' | 'invalid_answer';

export interface NodeFailure {
  readonly url: string;
  readonly kind: NodeFailureKind;
  readonly detail: string;
}

/** Seconds a client of the API is told to wait when no TRON node answers. */
const NODE_UNAVAILABLE_RETRY_AFTER_SECONDS = 5;

/** No configured node gave a usable answer within the bounded attempts. */
export class TronNodeUnavailableError extends ServiceUnavailableError {
  readonly failures: readonly NodeFailure[];
  constructor(path: string, failures: readonly NodeFailure[]) {
    const last = failures.at(-1);
    const summary = last ? `; last: ${last.url} ${last.kind}: ${last.detail}` : '';
    super(
      `No TRON node answered ${path} usably after ${failures.length} attempt(s)${summary}`,
      NODE_UNAVAILABLE_RETRY_AFTER_SECONDS,
    );
    this.failures = failures;
  }
}

/** A node refused the request itself (HTTP 4xx or an `Error` answer): asking again, or elsewhere, would not help. */
export class TronNodeRequestError extends Error {
  readonly url: string;
  readonly status: number;
  constructor(url: string, path: string, status: number, detail: string) {
    super(`TRON node ${url} refused ${path} (HTTP ${status}): ${detail}`);
    this.name = 'TronNodeRequestError';
    this.url = url;
    this.status = status;
  }
}

/**
 * Answers that each look right but contradict one another or the chain's rules
 * (a block that does not link to the one before it). Usually a reorganisation
 * between two requests; the next pass asks again.
 */
export class TronNodeAnswerError extends ServiceUnavailableError {
  constructor(message: string) {
    super(message, 1);
  }
}

/** Thrown inside an attempt to make it count as a failure of that node (the transport moves on). */
export class NodeAttemptFailure extends Error {
  readonly kind: NodeFailureKind;
  /** A cool-down longer than the default, e.g. a 429's Retry-After. */
  readonly cooldownMs: number | undefined;
  constructor(kind: NodeFailureKind, detail: string, cooldownMs?: number) {
    super(detail);
    this.name = 'NodeAttemptFailure';
    this.kind = kind;
    this.cooldownMs = cooldownMs;
  }
}

/** The answer of one node failed validation: that node is not believed, the next one is asked. */
export function invalidAnswer(detail: string): NodeAttemptFailure {
  return new NodeAttemptFailure('invalid_answer', detail);
}

// The gateway's error catalog. A domain error carries a stable code (docs/api-decisions.md,
// Errors), a public message (what the client reads: no table, account, key,
// configuration or invariant of ours) and, optionally, an internal `cause` (the
// detail an operator needs: logged with the refusal, never sent). The HTTP
// status of each code is decided in one place: src/http/error-handler.ts.

export type ErrorCode =
  | 'invalid_request'
  | 'amount_not_supported'
  | 'method_unavailable'
  | 'insufficient_funds'
  | 'address_blacklisted'
  | 'unauthorized'
  | 'forbidden'
  | 'not_found'
  | 'duplicate_external_id'
  | 'idempotency_in_progress'
  | 'invalid_state'
  | 'already_refunded'
  | 'payload_too_large'
  | 'unsupported_media_type'
  | 'rate_limited'
  | 'service_unavailable'
  | 'internal_error';

/** `cause`: what went wrong inside (an error, or a sentence naming our internals), for the logs only. */
export interface ErrorDetail {
  readonly cause?: unknown;
}

export class AppError extends Error {
  readonly code: ErrorCode;
  /** Extra response headers, e.g. Retry-After. */
  readonly headers: Readonly<Record<string, string>>;
  /** `message` is public; `options.cause` is internal. */
  constructor(code: ErrorCode, message: string, options?: ErrorDetail & { headers?: Record<string, string> }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = code;
    this.headers = options?.headers ?? {};
  }
}

export class InvalidRequestError extends AppError {
  constructor(message: string, detail?: ErrorDetail) {
    super('invalid_request', message, detail);
  }
}
export class AmountNotSupportedError extends AppError {
  constructor(message: string, detail?: ErrorDetail) {
    super('amount_not_supported', message, detail);
  }
}
export class MethodUnavailableError extends AppError {
  constructor(message: string, detail?: ErrorDetail) {
    super('method_unavailable', message, detail);
  }
}
export class InsufficientFundsError extends AppError {
  constructor(message = 'Not enough available balance for this operation.', detail?: ErrorDetail) {
    super('insufficient_funds', message, detail);
  }
}
/** The USDT contract's issuer blacklisted the recipient: a transfer to it would revert on chain. */
export class AddressBlacklistedError extends AppError {
  constructor(message: string, detail?: ErrorDetail) {
    super('address_blacklisted', message, detail);
  }
}
export class UnauthorizedError extends AppError {
  constructor(message = 'A valid API key is required: send "Authorization: Bearer <key>".', detail?: ErrorDetail) {
    super('unauthorized', message, detail);
  }
}
export class ForbiddenError extends AppError {
  constructor(message: string, detail?: ErrorDetail) {
    super('forbidden', message, detail);
  }
}
export class NotFoundError extends AppError {
  constructor(message = 'No such resource.', detail?: ErrorDetail) {
    super('not_found', message, detail);
  }
}
export class DuplicateExternalIdError extends AppError {
  constructor(message: string, detail?: ErrorDetail) {
    super('duplicate_external_id', message, detail);
  }
}
/** A still-running idempotent request is 409 `invalid_request` (docs/api-decisions.md, Errors). */
export class IdempotencyInProgressError extends AppError {
  constructor(message = 'A request with this Idempotency-Key is still being processed; retry in a few seconds.') {
    super('idempotency_in_progress', message, { headers: { 'retry-after': '2' } });
  }
}
export class InvalidStateError extends AppError {
  constructor(message: string, detail?: ErrorDetail) {
    super('invalid_state', message, detail);
  }
}
export class AlreadyRefundedError extends AppError {
  constructor(message = 'This deposit has already been refunded.', detail?: ErrorDetail) {
    super('already_refunded', message, detail);
  }
}
export class RateLimitedError extends AppError {
  constructor(
    retryAfterSeconds: number,
    message = `Too many requests with this key; retry in ${retryAfterSeconds} s.`,
  ) {
    super('rate_limited', message, {
      headers: { 'retry-after': String(retryAfterSeconds) },
    });
  }
}
/** A dependency is out of reach for a moment; the client is told when to retry. */
export class ServiceUnavailableError extends AppError {
  constructor(message: string, retryAfterSeconds: number, detail?: ErrorDetail) {
    super('service_unavailable', message, { ...detail, headers: { 'retry-after': String(retryAfterSeconds) } });
  }
}

// The gateway's error catalog. A domain error carries a stable code (the table in
// docs/api-decisions.md, Errors) and a public message; internal detail goes to logs only. The HTTP status
// of each code is decided in one place: src/http/error-handler.ts.

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

export class AppError extends Error {
  readonly code: ErrorCode;
  /** Extra response headers, e.g. Retry-After. */
  readonly headers: Readonly<Record<string, string>>;
  constructor(code: ErrorCode, message: string, options?: { cause?: unknown; headers?: Record<string, string> }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = code;
    this.headers = options?.headers ?? {};
  }
}

export class InvalidRequestError extends AppError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('invalid_request', message, options);
  }
}
export class AmountNotSupportedError extends AppError {
  constructor(message: string) {
    super('amount_not_supported', message);
  }
}
export class MethodUnavailableError extends AppError {
  constructor(message: string) {
    super('method_unavailable', message);
  }
}
export class InsufficientFundsError extends AppError {
  constructor(message = 'Not enough available balance for this operation.') {
    super('insufficient_funds', message);
  }
}
/** The USDT contract's issuer blacklisted the recipient: a transfer to it would revert on chain. */
export class AddressBlacklistedError extends AppError {
  constructor(message: string) {
    super('address_blacklisted', message);
  }
}
export class UnauthorizedError extends AppError {
  constructor(message = 'A valid API key is required: send "Authorization: Bearer <key>".') {
    super('unauthorized', message);
  }
}
export class ForbiddenError extends AppError {
  constructor(message: string) {
    super('forbidden', message);
  }
}
export class NotFoundError extends AppError {
  constructor(message = 'No such resource.') {
    super('not_found', message);
  }
}
export class DuplicateExternalIdError extends AppError {
  constructor(message: string) {
    super('duplicate_external_id', message);
  }
}
/** A still-running idempotent request is 409 `invalid_request` (docs/api-decisions.md, Errors). */
export class IdempotencyInProgressError extends AppError {
  constructor(message = 'A request with this Idempotency-Key is still being processed; retry in a few seconds.') {
    super('idempotency_in_progress', message, { headers: { 'retry-after': '2' } });
  }
}
export class InvalidStateError extends AppError {
  constructor(message: string) {
    super('invalid_state', message);
  }
}
export class AlreadyRefundedError extends AppError {
  constructor(message = 'This deposit has already been refunded.') {
    super('already_refunded', message);
  }
}
export class PayloadTooLargeError extends AppError {
  constructor(message: string) {
    super('payload_too_large', message);
  }
}
export class UnsupportedMediaTypeError extends AppError {
  constructor(message: string) {
    super('unsupported_media_type', message);
  }
}
export class RateLimitedError extends AppError {
  constructor(retryAfterSeconds: number, message = `Too many requests with this key; retry in ${retryAfterSeconds} s.`) {
    super('rate_limited', message, {
      headers: { 'retry-after': String(retryAfterSeconds) },
    });
  }
}
/** A dependency is out of reach for a moment; the client is told when to retry. */
export class ServiceUnavailableError extends AppError {
  constructor(message: string, retryAfterSeconds: number) {
    super('service_unavailable', message, { headers: { 'retry-after': String(retryAfterSeconds) } });
  }
}

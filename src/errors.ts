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

/**
 * The base of a catalog class that differs from the others only by its code
 * (and, for some, the message said when none is given).
 */
function catalogError(code: ErrorCode): new (message: string, detail?: ErrorDetail) => AppError;
function catalogError(
  code: ErrorCode,
  defaultMessage: string,
): new (message?: string, detail?: ErrorDetail) => AppError;
function catalogError(code: ErrorCode, defaultMessage?: string) {
  return class extends AppError {
    constructor(message?: string, detail?: ErrorDetail) {
      super(code, message ?? defaultMessage ?? code, detail);
    }
  };
}

export class InvalidRequestError extends catalogError('invalid_request') {}
export class AmountNotSupportedError extends catalogError('amount_not_supported') {}
export class MethodUnavailableError extends catalogError('method_unavailable') {}
export class InsufficientFundsError extends catalogError(
  'insufficient_funds',
  'Not enough available balance for this operation.',
) {}
/** The USDT contract's issuer blacklisted the recipient: a transfer to it would revert on chain. */
export class AddressBlacklistedError extends catalogError('address_blacklisted') {}
export class UnauthorizedError extends catalogError(
  'unauthorized',
  'A valid API key is required: send "Authorization: Bearer <key>".',
) {}
export class ForbiddenError extends catalogError('forbidden') {}
export class NotFoundError extends catalogError('not_found', 'No such resource.') {}
export class DuplicateExternalIdError extends catalogError('duplicate_external_id') {}
/** A still-running idempotent request is 409 `invalid_request` (docs/api-decisions.md, Errors). */
export class IdempotencyInProgressError extends AppError {
  constructor(message = 'A request with this Idempotency-Key is still being processed; retry in a few seconds.') {
    super('idempotency_in_progress', message, { headers: { 'retry-after': '2' } });
  }
}
export class InvalidStateError extends catalogError('invalid_state') {}
export class AlreadyRefundedError extends catalogError('already_refunded', 'This deposit has already been refunded.') {}
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

// The error responses of the OpenAPI document. A route lists the error codes it
// can give; this file groups them by the HTTP status error-handler.ts maps them
// to and documents each status with the error body (and the request's id), the
// codes as an enum, what each code means, and the Retry-After header where a
// client must wait.
import { Type } from 'typebox';
import type { ErrorCode } from '../errors.ts';
import { HTTP_STATUS_BY_CODE, publicCode } from './error-handler.ts';

/**
 * What every authenticated /v1 route can answer, whatever it does. Any route
 * refuses a NUL or an unpaired surrogate in its path, query or headers with
 * 400 invalid_request (http/string-inputs.ts), and a malformed path likewise.
 */
export const AUTHENTICATED_ROUTE_ERRORS = [
  'invalid_request',
  'unauthorized',
  'rate_limited',
  'internal_error',
  'service_unavailable',
] as const satisfies readonly ErrorCode[];

/** What a POST or PUT can answer because of its body (no body to a JSON content type is invalid too). */
export const REQUEST_BODY_ERRORS = [
  'invalid_request',
  'payload_too_large',
  'unsupported_media_type',
] as const satisfies readonly ErrorCode[];

const MEANING: Readonly<Record<ErrorCode, string>> = {
  invalid_request:
    'a field, parameter or query value fails validation, or the body is not JSON; the message names the field',
  amount_not_supported: 'no payment method enabled for the shop covers the amount; the message says what to do',
  method_unavailable:
    'the method is unknown, switched off for the shop, or not available for the amount; nothing was created',
  insufficient_funds: 'the source account has not enough available balance',
  address_blacklisted:
    "the USDT contract's issuer has blacklisted the recipient address (isBlackListed): a transfer to it would revert; nothing was created",
  unauthorized: 'the Authorization header is missing or not "Bearer <key>", or the key is unknown or revoked',
  forbidden: 'the API key lacks every scope this operation accepts',
  not_found: "no such resource for the shop of this key (another shop's resource is not found too)",
  duplicate_external_id: 'the same idempotency key was used before with a different request',
  idempotency_in_progress:
    'the first request with this Idempotency-Key is still running; retry after Retry-After seconds',
  invalid_state: 'the resource is in a state that does not allow this operation; the message says which',
  already_refunded: 'the deposit, or the whole amount of the payment, has already been refunded',
  payload_too_large: 'the body is larger than 64 KiB',
  unsupported_media_type: 'a body was sent with a content type other than application/json',
  rate_limited:
    'more requests with this key than the limit per minute, or too many failed authentications from this address; retry after Retry-After seconds',
  internal_error: "an unexpected failure on the gateway's side; nothing was changed, repeat the request",
  service_unavailable:
    'a dependency the operation needs (such as the database) is unreachable; retry after Retry-After seconds',
};

const EXAMPLE_MESSAGE: Readonly<Partial<Record<ErrorCode, string>>> = {
  invalid_request: 'body field "amount" must be number',
  unauthorized: 'The API key is not valid.',
  forbidden: 'This API key lacks the scope this operation needs: payments.',
  not_found: 'No such payment.',
  rate_limited: 'Too many requests with this key; retry in 42 s.',
  internal_error: 'Something went wrong on our side; nothing was changed. Repeat the request.',
};

const EXAMPLE_REQUEST_ID = '5f0c6a8e-3b1d-4c2a-9e7f-1a2b3c4d5e6f';

/** Codes after which the response carries Retry-After. */
const WAIT_CODES: ReadonlySet<ErrorCode> = new Set(['rate_limited', 'idempotency_in_progress', 'service_unavailable']);

function errorResponse(codes: readonly ErrorCode[]) {
  const publicCodes = [...new Set(codes.map(publicCode))];
  const description = codes.map((code) => `\`${publicCode(code)}\`: ${MEANING[code]}.`).join(' ');
  const first = codes[0]!;
  const retryAfter = codes.some((code) => WAIT_CODES.has(code))
    ? {
        headers: {
          'retry-after': Type.Integer({ minimum: 1, description: 'Seconds to wait before repeating the request.' }),
        },
      }
    : {};
  return Type.Object(
    {
      error: Type.Enum(publicCodes, { description: 'Stable error code; branch on it.' }),
      message: Type.String({ description: 'For humans; the wording may change.' }),
      request_id: Type.String({
        description: "This request's id, as in the X-Request-Id header: quote it when asking about the request.",
      }),
    },
    {
      additionalProperties: false,
      description,
      examples: [
        {
          error: publicCode(first),
          message: EXAMPLE_MESSAGE[first] ?? `${MEANING[first][0]!.toUpperCase()}${MEANING[first].slice(1)}.`,
          request_id: EXAMPLE_REQUEST_ID,
        },
      ],
      ...retryAfter,
    },
  );
}

/** The response schemas of the given error codes, keyed by HTTP status. */
export function errorResponses(...codes: readonly ErrorCode[]): Record<number, ReturnType<typeof errorResponse>> {
  const codesByStatus = new Map<number, ErrorCode[]>();
  for (const code of new Set(codes)) {
    const status = HTTP_STATUS_BY_CODE[code];
    codesByStatus.set(status, [...(codesByStatus.get(status) ?? []), code]);
  }
  return Object.fromEntries([...codesByStatus].map(([status, grouped]) => [status, errorResponse(grouped)]));
}

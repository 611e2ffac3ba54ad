// One place maps every failure to the error body {"error": code, "message": text},
// plus the request's id as `request_id` (the X-Request-Id header's value, also on
// every log line of the request), and to its HTTP status. Only a public message
// is sent: an error's internal cause is logged with the refusal, and unexpected
// exceptions become 500 internal_error with nothing internal in the response.
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { randomUUID } from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import { DATABASE_RETRY_AFTER_SECONDS, isDatabaseUnavailable, isDatabaseUnwritable } from '../db/database-errors.ts';
import { AppError, type ErrorCode } from '../errors.ts';
import { unreachableDependency, type DependencyHealth } from '../health/dependency-health.ts';

export const HTTP_STATUS_BY_CODE: Readonly<Record<ErrorCode, number>> = {
  invalid_request: 400,
  amount_not_supported: 400,
  method_unavailable: 400,
  insufficient_funds: 400,
  address_blacklisted: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  duplicate_external_id: 409,
  idempotency_in_progress: 409,
  invalid_state: 409,
  already_refunded: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  rate_limited: 429,
  internal_error: 500,
  service_unavailable: 503,
};

/** The code a client sees. "Still running" is 409 invalid_request (docs/api-decisions.md, Errors). */
export function publicCode(code: ErrorCode): string {
  return code === 'idempotency_in_progress' ? 'invalid_request' : code;
}

/** What a failure tells the client, before the request's id is added. */
interface PublicError {
  error: string;
  message: string;
}

interface ErrorBody extends PublicError {
  /** The request's id, as in the X-Request-Id header and the request's log lines. */
  request_id: string;
}

/** Fastify's request id (its `genReqId`, or the caller's X-Request-Id) under the key logs and bodies share. */
export const REQUEST_ID_LOG_KEY = 'request_id';

interface ValidationIssue {
  instancePath?: string;
  keyword?: string;
  message?: string;
  params?: Record<string, unknown>;
}

/** Turns schema-validation issues into one sentence that names the offending field. */
function describeValidationIssues(part: string, issues: readonly ValidationIssue[]): string {
  const sentences = issues.slice(0, 5).map((issue) => {
    const path = (issue.instancePath ?? '').replace(/^\//, '').replaceAll('/', '.');
    const params = issue.params ?? {};
    if (issue.keyword === 'additionalProperties') {
      const field = String(params.additionalProperty ?? params.additionalProperties ?? '');
      const where = path ? `${path}.${field}` : field;
      return `${part} field "${where}" is not allowed`;
    }
    if (issue.keyword === 'required') {
      const field = String(params.missingProperty ?? (params.requiredProperties as string[] | undefined)?.[0] ?? '');
      return `${part} field "${path ? `${path}.${field}` : field}" is required`;
    }
    return `${part} field "${path || '(root)'}" ${issue.message ?? 'is invalid'}`;
  });
  return [...new Set(sentences)].join('; ');
}

interface Classified {
  status: number;
  body: PublicError;
  headers: Record<string, string>;
  unexpected: boolean;
}

/** A request the database could not serve: 503 with Retry-After, nothing changed. */
function databaseRefusal(message: string): Classified {
  return {
    status: 503,
    body: { error: 'service_unavailable', message },
    headers: { 'retry-after': String(DATABASE_RETRY_AFTER_SECONDS) },
    unexpected: false,
  };
}

export function classify(
  error: FastifyError & { validation?: ValidationIssue[]; validationContext?: string },
): Classified {
  if (error instanceof AppError) {
    return {
      status: HTTP_STATUS_BY_CODE[error.code],
      body: { error: publicCode(error.code), message: error.message },
      headers: { ...error.headers },
      unexpected: false,
    };
  }
  if (error.validation) {
    const message = describeValidationIssues(error.validationContext ?? 'request', error.validation);
    return { status: 400, body: { error: 'invalid_request', message }, headers: {}, unexpected: false };
  }
  switch (error.code) {
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return {
        status: 400,
        body: { error: 'invalid_request', message: 'The body is not valid JSON.' },
        headers: {},
        unexpected: false,
      };
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return {
        status: 413,
        body: { error: 'payload_too_large', message: 'The body is larger than 64 KiB.' },
        headers: {},
        unexpected: false,
      };
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return {
        status: 415,
        body: {
          error: 'unsupported_media_type',
          message: 'Send the body as JSON with "Content-Type: application/json".',
        },
        headers: {},
        unexpected: false,
      };
  }
  // Other client errors raised by Fastify itself (4xx) keep their status with a generic code.
  if (typeof error.statusCode === 'number' && error.statusCode >= 400 && error.statusCode < 500) {
    return {
      status: error.statusCode,
      body: { error: 'invalid_request', message: error.message },
      headers: {},
      unexpected: false,
    };
  }
  if (isDatabaseUnwritable(error))
    return databaseRefusal(
      'The database cannot store anything right now; nothing was changed. Repeat the request later.',
    );
  if (isDatabaseUnavailable(error))
    return databaseRefusal('The database is not reachable right now; repeat the request in a few seconds.');
  return {
    status: 500,
    body: {
      error: 'internal_error',
      message: 'Something went wrong on our side; nothing was changed. Repeat the request.',
    },
    headers: {},
    unexpected: true,
  };
}

/** An error's internal cause as one log field: never sent, so it may name anything of ours. */
function causeForLog(error: unknown): { cause?: string } {
  if (!(error instanceof AppError) || error.cause === undefined) return {};
  return { cause: error.cause instanceof Error ? `${error.cause.name}: ${error.cause.message}` : String(error.cause) };
}

/** Fastify's router refuses path parameters longer than this (its `maxParamLength`). */
export const MAX_PATH_PARAMETER_LENGTH = 100;

/**
 * Fastify's `frameworkErrors`: failures of the router before any route runs (a
 * path that is not valid percent-encoded UTF-8, a path parameter over the
 * router's limit) go through the same error handler as everything else.
 */
export function handleFrameworkError(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  const message =
    error.code === 'FST_ERR_MAX_PARAM_LENGTH'
      ? `A path parameter is longer than ${MAX_PATH_PARAMETER_LENGTH} characters.`
      : 'The path is not valid percent-encoded UTF-8 (RFC 3986); encode every special character.';
  request.log.info({ code: 'invalid_request', status: 400, reason: error.code }, 'request refused');
  // No route matched, so no error handler or onSend hook runs: the reply is complete here.
  void reply
    .code(400)
    .header('x-request-id', request.id)
    .send({ error: 'invalid_request', message, request_id: request.id } satisfies ErrorBody);
}

/**
 * Node's HTTP parser refused the request itself (malformed request line or
 * headers, headers over 16 KiB, too slow): there is no request to route, so the
 * answer is written to the socket, in the error body with an id of its own (also
 * in X-Request-Id), and the connection closed.
 */
export function handleClientError(error: Error & { code?: string }, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const [status, message] =
    error.code === 'HPE_HEADER_OVERFLOW'
      ? [431, 'The request headers are larger than 16 KiB.']
      : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? [408, 'The request was not received in time.']
        : [400, 'The request is not valid HTTP/1.1.'];
  const requestId = randomUUID();
  const body = JSON.stringify({ error: 'invalid_request', message, request_id: requestId } satisfies ErrorBody);
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\nX-Request-Id: ${requestId}\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy(error);
}

export function installErrorHandling(app: FastifyInstance, health: DependencyHealth): void {
  app.setErrorHandler((error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    const { status, body, headers, unexpected } = classify(error);
    const dependency = status === 503 ? unreachableDependency(error) : undefined;
    if (unexpected) request.log.error({ err: error }, 'unexpected error');
    else if (dependency) {
      // The outage itself is logged once by the tracker, not with a stack per request.
      health.down(dependency, error);
      request.log.info({ code: body.error, status, dependency }, 'request refused: a dependency is unreachable');
    } else if (status === 503)
      request.log.warn({ err: error, code: body.error, status }, 'request refused: a dependency is unreachable');
    else request.log.info({ code: body.error, status, ...causeForLog(error) }, 'request refused');
    return reply
      .code(status)
      .headers(headers)
      .send({ ...body, request_id: request.id } satisfies ErrorBody);
  });
  app.setNotFoundHandler((request: FastifyRequest, reply: FastifyReply) => {
    const message = `No route ${request.method} ${request.url.split('?')[0]}.`;
    return reply.code(404).send({ error: 'not_found', message, request_id: request.id } satisfies ErrorBody);
  });
}

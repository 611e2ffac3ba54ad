// /v1/webhooks/*: the event log with its attempts, resend, secret rotation, the
// shop's endpoint and a test send. Any key of the shop may read them; changing
// where webhooks go or what signs them needs the `webhooks` scope, because the
// signing secret lets its holder forge every webhook the merchant trusts.
import type { FastifyRequest } from 'fastify';
import type { Readable } from 'node:stream';
import { Type } from 'typebox';
import type { AppContext } from '../context.ts';
import type { ModuleRoutes } from '../gateway-module.ts';
import { principalOf } from '../http/authentication.ts';
import { AUTHENTICATED_ROUTE_ERRORS, REQUEST_BODY_ERRORS, errorResponses } from '../http/error-responses.ts';
import type { ApiKeyScope } from '../http/api-scopes.ts';
import { webhookMetrics } from './webhook-metrics.ts';
import { createWebhookSender } from './webhook-sender.ts';
import * as service from './webhook-service.ts';
import type { WebhookChanger } from './webhook-service.ts';
import { MAX_WEBHOOK_URL_LENGTH } from './url-guard.ts';
import { DEFAULT_PAGE_LIMIT } from '../http/page-request.ts';
import { InvalidRequestError } from '../errors.ts';
import { MAX_TYPE_PATTERNS, type EventStreamHub } from './event-stream.ts';
import { sseBody } from './event-stream-sse.ts';

const READ_SCOPES: readonly ApiKeyScope[] = ['read', 'payments', 'crypto', 'payouts', 'webhooks'];
const WRITE_SCOPES: readonly ApiKeyScope[] = ['webhooks'];

const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(schema: T) => Type.Union([schema, Type.Null()]);

const EventStatus = Type.Union([
  Type.Literal('pending'),
  Type.Literal('delivered'),
  Type.Literal('failed'),
  Type.Literal('no_destination'),
]);

const EVENT_EXAMPLE = {
  id: 'evt_01jcx1a2b3c4d5e6f7g8h9j0k3',
  type: 'payment.paid',
  created_at: '2026-11-01T10:05:00.000Z',
  data: { payment_id: '0195f3b2-8c1e-7d4a-9b61-2f0c7e5a1d34', status: 'paid' },
  destination_url: 'https://shop.example.com/paygate/webhooks',
  status: 'delivered',
  attempt_count: 1,
  last_attempt_at: '2026-11-01T10:05:00.120Z',
  next_attempt_at: null,
};

const ATTEMPT_EXAMPLE = {
  id: 'att_01jcx1a2b3c4d5e6f7g8h9j0k4',
  event_id: EVENT_EXAMPLE.id,
  attempt_number: 1,
  url: 'https://shop.example.com/paygate/webhooks',
  attempted_at: '2026-11-01T10:05:00.120Z',
  duration_ms: 84,
  outcome: 'succeeded',
  status_code: 200,
  error: null,
  response_body: 'ok',
  next_retry_at: null,
};

const WebhookEvent = Type.Object(
  {
    id: Type.String(),
    type: Type.String(),
    created_at: Type.String({ format: 'date-time' }),
    data: Type.Unknown({
      description: 'The resource as it was when the event happened (for payment events, the full Payment)',
    }),
    destination_url: Nullable(Type.String()),
    status: EventStatus,
    attempt_count: Type.Integer(),
    last_attempt_at: Nullable(Type.String({ format: 'date-time' })),
    next_attempt_at: Nullable(Type.String({ format: 'date-time' })),
  },
  { description: 'The event and its delivery state', examples: [EVENT_EXAMPLE] },
);

const WebhookAttempt = Type.Object({
  id: Type.String(),
  event_id: Type.String(),
  attempt_number: Type.Integer(),
  url: Type.String(),
  attempted_at: Type.String({ format: 'date-time' }),
  duration_ms: Type.Integer(),
  outcome: Type.Union([
    Type.Literal('succeeded'),
    Type.Literal('http_error'),
    Type.Literal('timeout'),
    Type.Literal('connection_error'),
    Type.Literal('refused'),
  ]),
  status_code: Nullable(Type.Integer()),
  error: Nullable(Type.String()),
  response_body: Nullable(Type.String()),
  next_retry_at: Nullable(Type.String({ format: 'date-time' })),
});

const Pagination = {
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20 })),
  cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
};

const EventList = Type.Object(
  { data: Type.Array(WebhookEvent), next_cursor: Nullable(Type.String()) },
  {
    description: 'A page of events, newest first; pass next_cursor as cursor for the next page',
    examples: [{ data: [EVENT_EXAMPLE], next_cursor: null }],
  },
);

const AttemptList = Type.Object(
  { data: Type.Array(WebhookAttempt), next_cursor: Nullable(Type.String()) },
  { description: 'A page of attempts, newest first', examples: [{ data: [ATTEMPT_EXAMPLE], next_cursor: null }] },
);

const Endpoint = Type.Object(
  { url: Nullable(Type.String()) },
  {
    description: "The shop's webhook URL; null when none is set",
    examples: [{ url: 'https://shop.example.com/paygate/webhooks' }],
  },
);

const EventParams = Type.Object({
  event_id: Type.String({ minLength: 1, maxLength: 100, description: 'The id of an event of this shop (evt_…)' }),
});
const Url = Type.String({
  minLength: 1,
  maxLength: MAX_WEBHOOK_URL_LENGTH,
  description:
    'An absolute https URL (http where the gateway allows it) without credentials; a loopback, private, link-local or reserved host is refused',
});

/** Errors of the routes that read: any key of the shop may call them, so none is 403. */
const READ_ERRORS = [...AUTHENTICATED_ROUTE_ERRORS, 'invalid_request'] as const;
/** Errors of the routes that change settings: they need the webhooks scope and may carry a body. */
const WRITE_ERRORS = [...AUTHENTICATED_ROUTE_ERRORS, 'forbidden', ...REQUEST_BODY_ERRORS] as const;

/** The key a request acts with, as the audit log records it. */
function keyChanger(request: FastifyRequest): WebhookChanger {
  const principal = principalOf(request);
  return { actor: { kind: 'api_key', id: principal.keyId, ip: request.ip }, merchantId: principal.merchantId };
}

const StreamQuery = Type.Object(
  {
    types: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 2_000,
        description: `Comma-separated event types to send, * standing for any run of characters (payment.*,crypto.*); at most ${MAX_TYPE_PATTERNS}. Every type when absent.`,
      }),
    ),
    after: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 100,
        description: 'Resume after this event id, as the Last-Event-ID header does (the header wins)',
      }),
    ),
  },
  { additionalProperties: false },
);

const SSE_EXAMPLE = `id: evt_01jcx1a2b3c4d5e6f7g8h9j0k3
event: payment.paid
data: {"id":"evt_01jcx1a2b3c4d5e6f7g8h9j0k3","type":"payment.paid","created_at":"2026-11-01T10:05:00.000Z","data":{…}}

: heartbeat

`;

/** The resume point of a stream request: the Last-Event-ID header, else `?after=`. */
function resumeAfter(request: FastifyRequest, after: string | undefined): string | undefined {
  const header = request.headers['last-event-id'];
  const value = typeof header === 'string' && header.trim() !== '' ? header.trim() : after;
  if (value !== undefined && value.length > 100)
    throw new InvalidRequestError('Last-Event-ID is longer than 100 characters');
  return value;
}

function typePatterns(types: string | undefined): string[] | undefined {
  if (types === undefined) return undefined;
  const patterns = types.split(',').map((pattern) => pattern.trim());
  if (patterns.length > MAX_TYPE_PATTERNS)
    throw new InvalidRequestError(`types: at most ${MAX_TYPE_PATTERNS} patterns`);
  return patterns;
}

export const webhookRoutes =
  (
    context: Pick<AppContext, 'db' | 'clock' | 'config' | 'logger' | 'metrics' | 'keyring'>,
    streams: EventStreamHub,
  ): ModuleRoutes =>
  async (app) => {
    const sender = createWebhookSender({ config: context.config });
    const metrics = webhookMetrics(context);
    app.addHook('onClose', () => sender.close());
    const tags = ['webhooks'];
    const config = { scopes: READ_SCOPES };
    const writeConfig = { scopes: WRITE_SCOPES };

    app.get(
      '/webhooks/events',
      {
        config,
        schema: {
          operationId: 'listWebhookEvents',
          tags,
          summary: 'List webhook events, newest first',
          querystring: Type.Object(
            {
              type: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
              status: Type.Optional(EventStatus),
              ...Pagination,
            },
            { additionalProperties: false },
          ),
          response: { 200: EventList, ...errorResponses(...READ_ERRORS) },
        },
      },
      async (request) =>
        service.listEvents(context, principalOf(request).shopId, {
          ...request.query,
          limit: request.query.limit ?? DEFAULT_PAGE_LIMIT,
        }),
    );

    app.get(
      '/webhooks/events/:event_id',
      {
        config,
        schema: {
          operationId: 'getWebhookEvent',
          tags,
          summary: 'One webhook event and its delivery state',
          params: EventParams,
          response: { 200: WebhookEvent, ...errorResponses(...READ_ERRORS, 'not_found') },
        },
      },
      async (request) => service.getEvent(context, principalOf(request).shopId, request.params.event_id),
    );

    app.get(
      '/webhooks/events/:event_id/attempts',
      {
        config,
        schema: {
          operationId: 'listWebhookAttempts',
          tags,
          summary:
            "Delivery attempts of an event, newest first: status code, duration, error, the receiver's answer (first 4 KiB), next retry",
          params: EventParams,
          querystring: Type.Object(Pagination, { additionalProperties: false }),
          response: { 200: AttemptList, ...errorResponses(...READ_ERRORS, 'not_found') },
        },
      },
      async (request) =>
        service.listAttempts(context, principalOf(request).shopId, request.params.event_id, {
          cursor: request.query.cursor,
          limit: request.query.limit ?? DEFAULT_PAGE_LIMIT,
        }),
    );

    app.post(
      '/webhooks/events/:event_id/resend',
      {
        config: writeConfig,
        schema: {
          operationId: 'resendWebhookEvent',
          tags,
          summary: 'Queue a new attempt now, with the same event id',
          params: EventParams,
          response: {
            202: { ...WebhookEvent, description: 'The event, with its next attempt due now' },
            ...errorResponses(...WRITE_ERRORS, 'not_found', 'invalid_state'),
          },
        },
      },
      async (request, reply) =>
        reply
          .code(202)
          .send(
            await service.resendEvent(
              context,
              principalOf(request).shopId,
              request.params.event_id,
              keyChanger(request),
            ),
          ),
    );

    app.post(
      '/webhooks/secret/rotate',
      {
        config: writeConfig,
        schema: {
          operationId: 'rotateWebhookSecret',
          tags,
          summary:
            'Replace the signing secret; for 24 h webhooks carry signatures with both the old and the new secret',
          response: {
            200: Type.Object(
              { webhook_secret: Type.String(), previous_secret_expires_at: Type.String({ format: 'date-time' }) },
              {
                description: 'The new secret, shown once',
                examples: [
                  {
                    webhook_secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
                    previous_secret_expires_at: '2026-11-02T10:00:00.000Z',
                  },
                ],
              },
            ),
            ...errorResponses(...WRITE_ERRORS),
          },
        },
      },
      async (request) => service.rotateSecret(context, principalOf(request).shopId, keyChanger(request)),
    );

    app.get(
      '/webhooks/endpoint',
      {
        config,
        schema: {
          operationId: 'getWebhookEndpoint',
          tags,
          summary: "The shop's webhook URL (crypto events)",
          response: { 200: Endpoint, ...errorResponses(...AUTHENTICATED_ROUTE_ERRORS) },
        },
      },
      async (request) => service.getEndpoint(context, principalOf(request).shopId),
    );

    app.put(
      '/webhooks/endpoint',
      {
        config: writeConfig,
        schema: {
          operationId: 'setWebhookEndpoint',
          tags,
          summary: "Set (or clear with null) the shop's webhook URL, where crypto events go",
          body: Type.Object(
            { url: Nullable(Url) },
            { additionalProperties: false, examples: [{ url: 'https://shop.example.com/paygate/webhooks' }] },
          ),
          response: { 200: Endpoint, ...errorResponses(...WRITE_ERRORS) },
        },
      },
      async (request) =>
        service.setEndpoint(context, principalOf(request).shopId, request.body.url, keyChanger(request)),
    );

    // Open streams would hold a stopping server's close forever: end them first (clients resume).
    app.addHook('preClose', async () => streams.closeAll());
    app.get(
      '/webhooks/stream',
      {
        config: writeConfig,
        schema: {
          operationId: 'streamWebhookEvents',
          tags,
          summary:
            "The shop's webhook events as Server-Sent Events, as they commit; resumable with Last-Event-ID (docs/webhooks.md, Event stream)",
          description:
            'Each event is one SSE frame: `id:` the event id (also its webhook-id), `event:` its type, `data:` the exact body a webhook delivery of it carries. A comment line comes as heartbeat. With a Last-Event-ID header (or `after`), events of the last 24 h after that event are sent first. Needs the webhooks scope; a shop may hold a few streams at once (429 rate_limited beyond).',
          querystring: StreamQuery,
          response: {
            200: {
              description: 'An endless text/event-stream of the events',
              content: {
                'text/event-stream': {
                  // Sent as a stream of frames; the document shows it as text.
                  schema: Type.Unsafe<Readable>({ type: 'string' }),
                  example: SSE_EXAMPLE,
                },
              },
            },
            ...errorResponses(...AUTHENTICATED_ROUTE_ERRORS, 'forbidden', 'invalid_request'),
          },
        },
      },
      async (request, reply) => {
        const stream = await streams.open({
          shopId: principalOf(request).shopId,
          afterEventId: resumeAfter(request, request.query.after),
          typePatterns: typePatterns(request.query.types),
        });
        return reply
          .type('text/event-stream; charset=utf-8')
          .header('cache-control', 'no-store')
          .header('x-accel-buffering', 'no')
          .send(sseBody(stream, { heartbeatMs: context.config.eventStreamHeartbeatMs }));
      },
    );

    app.post(
      '/webhooks/test',
      {
        config: writeConfig,
        // The body is optional: no body means "send to the shop's endpoint".
        preValidation: async (request) => {
          request.body ??= {};
        },
        schema: {
          operationId: 'sendTestWebhook',
          tags,
          summary: 'Send a signed webhook.test event now to url (or the shop endpoint) and return the attempt',
          body: Type.Object(
            { url: Type.Optional(Url) },
            { additionalProperties: false, examples: [{ url: 'https://shop.example.com/paygate/webhooks' }] },
          ),
          response: {
            200: Type.Object(
              { event: WebhookEvent, attempt: WebhookAttempt },
              {
                description:
                  "The test event and its one attempt; a failed attempt carries no receiver's body and a generic error (no resolved address)",
                examples: [{ event: { ...EVENT_EXAMPLE, type: 'webhook.test', data: {} }, attempt: ATTEMPT_EXAMPLE }],
              },
            ),
            ...errorResponses(...WRITE_ERRORS),
          },
        },
      },
      async (request) => {
        return service.sendTestEvent(
          { ...context, sender, metrics },
          principalOf(request).shopId,
          request.body.url,
          keyChanger(request),
        );
      },
    );
  };

// /v1/webhooks/*: the event log with its attempts, resend, secret rotation, the
// shop's endpoint and a test send. Any key of the shop may read them; changing
// where webhooks go or what signs them needs the `webhooks` scope, because the
// signing secret lets its holder forge every webhook the merchant trusts.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { AppContext } from '../context.ts';
import { principalOf } from '../http/authentication.ts';
import type { ApiKeyScope } from '../merchants/merchant-tables.ts';
import { webhookMetrics } from './webhook-metrics.ts';
import { createWebhookSender } from './webhook-sender.ts';
import * as service from './webhook-service.ts';
import { MAX_WEBHOOK_URL_LENGTH } from './url-guard.ts';

const READ_SCOPES: readonly ApiKeyScope[] = ['read', 'payments', 'crypto', 'payouts', 'webhooks'];
const WRITE_SCOPES: readonly ApiKeyScope[] = ['webhooks'];

const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(schema: T) => Type.Union([schema, Type.Null()]);

const EventStatus = Type.Union([
  Type.Literal('pending'),
  Type.Literal('delivered'),
  Type.Literal('failed'),
  Type.Literal('no_destination'),
]);

const WebhookEvent = Type.Object({
  id: Type.String(),
  type: Type.String(),
  created_at: Type.String({ format: 'date-time' }),
  data: Type.Unknown(),
  destination_url: Nullable(Type.String()),
  status: EventStatus,
  attempt_count: Type.Integer(),
  last_attempt_at: Nullable(Type.String({ format: 'date-time' })),
  next_attempt_at: Nullable(Type.String({ format: 'date-time' })),
});

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

const DEFAULT_PAGE_SIZE = 20;

const ErrorBody = Type.Object({ error: Type.String(), message: Type.String() });

const EventParams = Type.Object({ event_id: Type.String({ minLength: 1, maxLength: 100 }) });
const Url = Type.String({ minLength: 1, maxLength: MAX_WEBHOOK_URL_LENGTH });

export const webhookRoutes: FastifyPluginAsyncTypebox<{ context: AppContext }> = async (app, { context }) => {
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
        tags,
        summary: 'List webhook events, newest first',
        querystring: Type.Object(
          { type: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })), status: Type.Optional(EventStatus), ...Pagination },
          { additionalProperties: false },
        ),
        response: { 200: Type.Object({ data: Type.Array(WebhookEvent), next_cursor: Nullable(Type.String()) }) },
      },
    },
    async (request) =>
      service.listEvents(context, principalOf(request).shopId, { ...request.query, limit: request.query.limit ?? DEFAULT_PAGE_SIZE }),
  );

  app.get(
    '/webhooks/events/:event_id',
    { config, schema: { tags, summary: 'One webhook event and its delivery state', params: EventParams, response: { 200: WebhookEvent } } },
    async (request) => service.getEvent(context, principalOf(request).shopId, request.params.event_id),
  );

  app.get(
    '/webhooks/events/:event_id/attempts',
    {
      config,
      schema: {
        tags,
        summary: "Delivery attempts of an event, newest first: status code, duration, error, the receiver's answer (first 4 KiB), next retry",
        params: EventParams,
        querystring: Type.Object(Pagination, { additionalProperties: false }),
        response: { 200: Type.Object({ data: Type.Array(WebhookAttempt), next_cursor: Nullable(Type.String()) }) },
      },
    },
    async (request) =>
      service.listAttempts(context, principalOf(request).shopId, request.params.event_id, {
        cursor: request.query.cursor,
        limit: request.query.limit ?? DEFAULT_PAGE_SIZE,
      }),
  );

  app.post(
    '/webhooks/events/:event_id/resend',
    {
      config: writeConfig,
      schema: { tags, summary: 'Queue a new attempt now, with the same event id', params: EventParams, response: { 202: WebhookEvent, 403: ErrorBody } },
    },
    async (request, reply) => reply.code(202).send(await service.resendEvent(context, principalOf(request).shopId, request.params.event_id)),
  );

  app.post(
    '/webhooks/secret/rotate',
    {
      config: writeConfig,
      schema: {
        tags,
        summary: 'Replace the signing secret; for 24 h webhooks carry signatures with both the old and the new secret',
        response: {
          200: Type.Object({ webhook_secret: Type.String(), previous_secret_expires_at: Type.String({ format: 'date-time' }) }),
          403: ErrorBody,
        },
      },
    },
    async (request) => service.rotateSecret(context, principalOf(request).shopId),
  );

  app.get(
    '/webhooks/endpoint',
    { config, schema: { tags, summary: "The shop's webhook URL (crypto events)", response: { 200: Type.Object({ url: Nullable(Type.String()) }) } } },
    async (request) => service.getEndpoint(context, principalOf(request).shopId),
  );

  app.put(
    '/webhooks/endpoint',
    {
      config: writeConfig,
      schema: {
        tags,
        summary: "Set (or clear with null) the shop's webhook URL, where crypto events go",
        body: Type.Object({ url: Nullable(Url) }, { additionalProperties: false }),
        response: { 200: Type.Object({ url: Nullable(Type.String()) }), 403: ErrorBody },
      },
    },
    async (request) => service.setEndpoint(context, principalOf(request).shopId, request.body.url),
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
        tags,
        summary: 'Send a signed webhook.test event now to url (or the shop endpoint) and return the attempt',
        body: Type.Object({ url: Type.Optional(Url) }, { additionalProperties: false }),
        response: { 200: Type.Object({ event: WebhookEvent, attempt: WebhookAttempt }), 403: ErrorBody },
      },
    },
    async (request) => {
      return service.sendTestEvent({ ...context, sender, metrics }, principalOf(request).shopId, request.body.url);
    },
  );
};

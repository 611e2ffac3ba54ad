// `POST /acquirers/{provider}/notifications/{connection_id}`: where production
// acquirers notify us (public: no API key; the connector checks the sender). The
// body is kept as the exact bytes received, for the connector's signature check.
import rateLimit from '@fastify/rate-limit';
import { Type } from 'typebox';
import type { ModuleRoutes } from '../gateway-module.ts';
import { RateLimitedError } from '../errors.ts';
import { errorResponses } from '../http/error-responses.ts';
import { receiveNotification, type NotificationDeps } from './acquirer-notifications.ts';

const NOTIFICATION_BODY_LIMIT_BYTES = 64 * 1024;
/** Per sender address: an acquirer sends a few per payment; a flood from one address is cut off. */
const NOTIFICATIONS_PER_MINUTE_PER_IP = 600;
const NotificationParams = Type.Object({
  provider: Type.String({ pattern: '^[a-z0-9_]{1,40}$', description: 'the provider, e.g. `yookassa`' }),
  connection_id: Type.String({ pattern: '^[a-z0-9_]{1,64}$', description: "the shop's connection (`acq_…`)" }),
});
/** The acquirer's own reply (T-Bank requires the body `OK`); a refused notification is a 4XX. */
const AcquirerReply = (description: string) => ({
  description,
  content: { 'text/plain': { schema: Type.String() } },
});

export const acquirerNotificationRoutes =
  (deps: NotificationDeps): ModuleRoutes =>
  async (app) => {
    app.removeAllContentTypeParsers();
    app.addContentTypeParser(
      '*',
      { parseAs: 'string', bodyLimit: NOTIFICATION_BODY_LIMIT_BYTES },
      (_request, body, done) => done(null, body),
    );
    await app.register(rateLimit, {
      global: true,
      max: NOTIFICATIONS_PER_MINUTE_PER_IP,
      timeWindow: 60_000,
      keyGenerator: (request) => `acquirer-notifications:${request.ip}`,
      nameSpace: 'paygate-acquirer-notifications-limit:',
      errorResponseBuilder: (_request, context) => new RateLimitedError(Math.max(1, Math.ceil(context.ttl / 1000))),
    });
    app.post<{ Params: { provider: string; connection_id: string } }>(
      '/acquirers/:provider/notifications/:connection_id',
      {
        schema: {
          // Acquirers call it, not merchants: the merchant API's document leaves it out (docs/connectors.md).
          hide: true,
          operationId: 'receiveAcquirerNotification',
          tags: ['acquirers'],
          summary: "An acquirer's notification about a charge or refund of a shop's connection",
          description:
            "Public (no API key): the connection's connector checks the sender and the signature, then confirms the " +
            "notification by asking the acquirer's API; nothing in the body is trusted. The reply is what the acquirer expects.",
          params: NotificationParams,
          response: {
            200: AcquirerReply('accepted (or ignored: nothing changes)'),
            '4XX': AcquirerReply('the connector refused the notification (not from the acquirer, or not signed)'),
            ...errorResponses('invalid_request', 'not_found', 'payload_too_large', 'rate_limited', 'internal_error'),
          },
        },
      },
      async (request, reply) => {
        const { provider, connection_id: connectionId } = request.params;
        const answer = await receiveNotification(
          deps,
          { provider, connectionId },
          {
            headers: request.headers,
            rawBody: typeof request.body === 'string' ? request.body : '',
            // request.ip follows PAYGATE_TRUST_PROXY (Fastify's trustProxy).
            remoteAddress: request.ip,
          },
        );
        return reply.code(answer.statusCode).header('content-type', answer.contentType).send(answer.body);
      },
    );
  };

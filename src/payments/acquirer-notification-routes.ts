// `POST /v1/acquirers/{provider}/notifications/{connection_id}`: where production
// acquirers notify us (public: no API key; the connector checks the sender). The
// body is kept as the exact bytes received, for the connector's signature check.
import rateLimit from '@fastify/rate-limit';
import type { ModuleRoutes } from '../gateway-module.ts';
import { RateLimitedError } from '../errors.ts';
import { receiveNotification, type NotificationDeps } from './acquirer-notifications.ts';

const NOTIFICATION_BODY_LIMIT_BYTES = 64 * 1024;
/** Per sender address: an acquirer sends a few per payment; a flood from one address is cut off. */
const NOTIFICATIONS_PER_MINUTE_PER_IP = 600;
const ID_PATTERN = /^[a-z0-9_]{1,64}$/;

export const acquirerNotificationRoutes =
  (deps: NotificationDeps): ModuleRoutes =>
  async (app) => {
    app.removeAllContentTypeParsers();
    app.addContentTypeParser('*', { parseAs: 'string', bodyLimit: NOTIFICATION_BODY_LIMIT_BYTES }, (_request, body, done) =>
      done(null, body),
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
      '/v1/acquirers/:provider/notifications/:connection_id',
      { schema: { hide: true } },
      async (request, reply) => {
        const { provider, connection_id: connectionId } = request.params;
        if (!ID_PATTERN.test(provider) || !ID_PATTERN.test(connectionId))
          return reply.code(404).send({ error: 'not_found', message: 'No such acquirer connection.' });
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

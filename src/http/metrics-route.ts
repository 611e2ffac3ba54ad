// GET /metrics for Prometheus. Collecting runs a database query, so with
// PAYGATE_METRICS_TOKEN set it needs "Authorization: Bearer <token>", and wrong
// tokens count toward the same per-address limit as bad API keys.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../context.ts';
import { UnauthorizedError } from '../errors.ts';
import type { AuthFailureLimiter } from './auth-failure-limit.ts';
import { bearerCredential } from './authentication.ts';

const digest = (text: string): Buffer => createHash('sha256').update(text).digest();

export function installMetricsRoute(
  app: FastifyInstance,
  context: Pick<AppContext, 'config' | 'metrics'>,
  failures: AuthFailureLimiter,
): void {
  const token = context.config.metricsToken;
  const expected = token === undefined ? undefined : digest(token);
  app.get(
    '/metrics',
    {
      schema: { hide: true },
      onRequest: async (request) => {
        if (!expected) return;
        failures.assertNotBlocked(request.ip);
        try {
          // Equal-length digests, so the comparison time says nothing about the token.
          if (!timingSafeEqual(digest(bearerCredential(request.headers.authorization)), expected)) {
            throw new UnauthorizedError('The metrics token is not valid.');
          }
        } catch (error) {
          if (error instanceof UnauthorizedError) failures.recordFailure(request.ip);
          throw error;
        }
      },
    },
    async (_request, reply) => {
      reply.header('content-type', context.metrics.contentType);
      return context.metrics.metrics();
    },
  );
}

// Bearer-key authentication for every /v1 route and the scope check a route
// declares in its config (`config: { scopes: ['payments'] }`, any one suffices).
// Failed authentications are limited per client address before the key lookup.
// Keys that authenticated are cached when the database notifies of key changes
// (merchants/api-key-cache.ts).
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { AuthFailureLimiter } from './auth-failure-limit.ts';
import { ForbiddenError, UnauthorizedError } from '../errors.ts';
import type { AppContext } from '../context.ts';
import { createApiKeyCache } from '../merchants/api-key-cache.ts';
import type { ApiKeyScope } from '../merchants/merchant-service.ts';
import { authenticateApiKey, type ApiPrincipal } from '../merchants/merchant-service.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The key must carry at least one of these scopes. */
    scopes?: readonly ApiKeyScope[];
  }
  interface FastifyRequest {
    principal: ApiPrincipal | null;
  }
}

const BEARER_PATTERN = /^Bearer ([^\s]+)$/;

/** The credential of an Authorization header, or 401 naming what is wrong with the header. */
export function bearerCredential(header: string | undefined): string {
  if (header === undefined || header === '') {
    throw new UnauthorizedError('The Authorization header is missing; send "Authorization: Bearer <key>".');
  }
  const match = BEARER_PATTERN.exec(header);
  if (!match?.[1]) throw new UnauthorizedError('The Authorization header must be "Bearer <key>".');
  return match[1];
}

export function installAuthentication(
  scope: FastifyInstance,
  context: Pick<AppContext, 'db' | 'clock' | 'notifications'>,
  failures: AuthFailureLimiter,
): void {
  scope.decorateRequest('principal', null);
  // Only with notifications: without them nothing would tell the cache of a revocation.
  const cache = context.notifications && createApiKeyCache<ApiPrincipal>(context.notifications, context.clock);
  if (cache) scope.addHook('onClose', async () => cache.close());
  // A route that names no scopes would be open to every key, read-only ones included.
  scope.addHook('onRoute', (route) => {
    if (!route.config?.scopes?.length)
      throw new Error(`${String(route.method)} ${route.url} must declare config.scopes`);
  });
  scope.addHook('onRequest', async (request) => {
    failures.assertNotBlocked(request.ip);
    let principal: ApiPrincipal;
    try {
      principal = await authenticateApiKey(context.db, bearerCredential(request.headers.authorization), cache);
    } catch (error) {
      if (error instanceof UnauthorizedError) failures.recordFailure(request.ip);
      throw error;
    }
    request.principal = principal;
    const required = request.routeOptions.config.scopes ?? [];
    if (!required.some((needed) => principal.scopes.includes(needed))) {
      throw new ForbiddenError(`This API key lacks the scope this operation needs: ${required.join(' or ')}.`);
    }
  });
}

/** The principal of an authenticated /v1 request. */
export function principalOf(request: FastifyRequest): ApiPrincipal {
  if (!request.principal) throw new UnauthorizedError();
  return request.principal;
}

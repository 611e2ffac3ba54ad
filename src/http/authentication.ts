// Bearer-key authentication for every /v1 route and the scope check a route
// declares in its config (`config: { scopes: ['payments'] }`, any one suffices).
// Failed authentications are limited per client address before the key lookup.
// The key itself is looked up by the authenticator the wiring gives (the merchants
// module's, which caches keys that authenticated).
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ApiKeyScope } from './api-scopes.ts';
import type { AuthFailureLimiter } from './auth-failure-limit.ts';
import { ForbiddenError, UnauthorizedError } from '../errors.ts';

/** Who a request acts for, resolved from its API key. */
export interface ApiPrincipal {
  readonly keyId: string;
  readonly shopId: string;
  readonly merchantId: string;
  readonly shopMode: 'sandbox' | 'live';
  readonly scopes: readonly ApiKeyScope[];
}

/** Resolves a bearer key to its principal, or throws 401 for a malformed, unknown or revoked key. */
export type ApiKeyAuthenticator = (apiKey: string) => Promise<ApiPrincipal>;

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
  authenticate: ApiKeyAuthenticator,
  failures: AuthFailureLimiter,
): void {
  scope.decorateRequest('principal', null);
  // A route that names no scopes would be open to every key, read-only ones included.
  scope.addHook('onRoute', (route) => {
    if (!route.config?.scopes?.length)
      throw new Error(`${String(route.method)} ${route.url} must declare config.scopes`);
  });
  scope.addHook('onRequest', async (request) => {
    failures.assertNotBlocked(request.ip);
    let principal: ApiPrincipal;
    try {
      principal = await authenticate(bearerCredential(request.headers.authorization));
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

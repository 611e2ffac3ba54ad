// Bearer-key authentication for every /v1 route and the scope check a route
// declares in its config (`config: { scopes: ['payments'] }`, any one suffices).
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ForbiddenError, UnauthorizedError } from '../errors.ts';
import type { Executor } from '../db/transaction.ts';
import type { ApiKeyScope } from '../merchants/merchant-tables.ts';
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

export function installAuthentication(scope: FastifyInstance, db: Executor): void {
  scope.decorateRequest('principal', null);
  scope.addHook('onRequest', async (request) => {
    const header = request.headers.authorization;
    if (header === undefined || header === '') {
      throw new UnauthorizedError('The Authorization header is missing; send "Authorization: Bearer <key>".');
    }
    const match = BEARER_PATTERN.exec(header);
    if (!match?.[1]) throw new UnauthorizedError('The Authorization header must be "Bearer <key>".');
    const principal = await authenticateApiKey(db, match[1]);
    request.principal = principal;
    const required = request.routeOptions.config.scopes;
    if (required && !required.some((needed) => principal.scopes.includes(needed))) {
      throw new ForbiddenError(`This API key lacks the scope this operation needs: ${required.join(' or ')}.`);
    }
  });
}

/** The principal of an authenticated /v1 request. */
export function principalOf(request: FastifyRequest): ApiPrincipal {
  if (!request.principal) throw new UnauthorizedError();
  return request.principal;
}

// 120 requests per minute per API key (spec section 8), counted in-process or,
// with REDIS_URL, in Redis so that every instance shares one count per key.
import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance } from 'fastify';
import type { Redis } from 'ioredis';
import { RateLimitedError } from '../errors.ts';

export interface RateLimitOptions {
  readonly perMinute: number;
  readonly redis?: Redis | undefined;
}

export async function installRateLimit(scope: FastifyInstance, options: RateLimitOptions): Promise<void> {
  await scope.register(rateLimit, {
    global: true,
    max: options.perMinute,
    timeWindow: 60_000,
    // Runs after authentication (registered later on the same hook), so the key is known.
    hook: 'onRequest',
    keyGenerator: (request) => (request.principal ? `key:${request.principal.keyId}` : `ip:${request.ip}`),
    nameSpace: 'paygate-rate-limit:',
    ...(options.redis ? { redis: options.redis } : {}),
    // Fail open: an unreachable Redis must not take the API down with it.
    skipOnError: true,
    addHeadersOnExceeding: { 'x-ratelimit-limit': true, 'x-ratelimit-remaining': true, 'x-ratelimit-reset': true },
    addHeaders: { 'x-ratelimit-limit': true, 'x-ratelimit-remaining': true, 'x-ratelimit-reset': true, 'retry-after': true },
    errorResponseBuilder: (_request, context) => new RateLimitedError(Math.max(1, Math.ceil(context.ttl / 1000))),
  });
}

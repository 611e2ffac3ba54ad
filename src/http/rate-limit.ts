// 120 requests per minute per API key (spec section 8), counted in-process or,
// with REDIS_URL, in Redis so that every instance shares one count per key.
import rateLimit, { type FastifyRateLimitStore, type FastifyRateLimitStoreCtor } from '@fastify/rate-limit';
import type { FastifyInstance } from 'fastify';
import type { Redis } from 'ioredis';
import { createRequire } from 'node:module';
import { RateLimitedError } from '../errors.ts';
import type { DependencyHealth } from '../health/dependency-health.ts';

const NAMESPACE = 'paygate-rate-limit:';

type RedisStoreCtor = new (
  continueExceeding: boolean,
  exponentialBackoff: boolean,
  redis: Redis,
  key: string,
) => FastifyRateLimitStore;
// The plugin's own Redis store (its Lua scripts), which it does not export by name.
const RedisStore = createRequire(import.meta.url)('@fastify/rate-limit/store/RedisStore.js') as RedisStoreCtor;

/** The plugin's Redis store, telling the tracker whether Redis answered (the plugin swallows its errors). */
function reportingStore(inner: FastifyRateLimitStore, health: DependencyHealth): FastifyRateLimitStore {
  return {
    incr(key, callback, timeWindow, max) {
      const askedAt = Date.now();
      inner.incr(
        key,
        (error, result) => {
          if (error) health.down('redis', error);
          else health.up('redis', askedAt);
          callback(error, result);
        },
        timeWindow,
        max,
      );
    },
    child: (routeOptions) => reportingStore(inner.child(routeOptions), health),
  };
}

function redisStore(redis: Redis, health: DependencyHealth): FastifyRateLimitStoreCtor {
  return class {
    constructor(options: { continueExceeding?: boolean; exponentialBackoff?: boolean }) {
      return reportingStore(
        new RedisStore(options.continueExceeding ?? false, options.exponentialBackoff ?? false, redis, NAMESPACE),
        health,
      );
    }
  } as unknown as FastifyRateLimitStoreCtor;
}

export interface RateLimitOptions {
  readonly perMinute: number;
  readonly redis?: Redis | undefined;
  readonly health: DependencyHealth;
}

export async function installRateLimit(scope: FastifyInstance, options: RateLimitOptions): Promise<void> {
  await scope.register(rateLimit, {
    global: true,
    max: options.perMinute,
    timeWindow: 60_000,
    // Runs after authentication (registered later on the same hook), so the key is known.
    hook: 'onRequest',
    keyGenerator: (request) => (request.principal ? `key:${request.principal.keyId}` : `ip:${request.ip}`),
    nameSpace: NAMESPACE,
    ...(options.redis ? { store: redisStore(options.redis, options.health) } : {}),
    // Fail open: an unreachable Redis must not take the API down with it. Its commands are
    // bounded (REDIS_COMMAND_TIMEOUT_MS), so a Redis that stops answering delays a request that long at most.
    skipOnError: true,
    addHeadersOnExceeding: { 'x-ratelimit-limit': true, 'x-ratelimit-remaining': true, 'x-ratelimit-reset': true },
    addHeaders: {
      'x-ratelimit-limit': true,
      'x-ratelimit-remaining': true,
      'x-ratelimit-reset': true,
      'retry-after': true,
    },
    errorResponseBuilder: (_request, context) => new RateLimitedError(Math.max(1, Math.ceil(context.ttl / 1000))),
  });
}

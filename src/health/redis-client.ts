// The Redis client of a gateway (shared rate-limit counters). Every command has
// a bound (REDIS_COMMAND_TIMEOUT_MS): a Redis that stops answering but keeps its
// connection open must not hold requests; past the bound a command fails, and the
// rate limiter fails open (docs/security.md). Its outages go to the tracker.
import type { Redis } from 'ioredis';
import type { Config } from '../config.ts';
import type { DependencyHealth } from './dependency-health.ts';

export async function openRedis(
  config: Pick<Config, 'redisUrl' | 'redisCommandTimeoutMs'>,
  health: DependencyHealth,
): Promise<Redis | undefined> {
  if (!config.redisUrl) return undefined;
  // Loaded only when configured, like PGlite (db/database.ts): an idle gateway's memory is its code.
  const { Redis } = await import('ioredis');
  const redis = new Redis(config.redisUrl, {
    maxRetriesPerRequest: 1,
    enableOfflineQueue: false,
    commandTimeout: config.redisCommandTimeoutMs,
    connectTimeout: Math.max(1_000, config.redisCommandTimeoutMs),
  });
  redis.on('error', (error: unknown) => health.down('redis', error));
  redis.on('ready', () => health.up('redis'));
  return redis;
}

/** Asks Redis for PING within its command bound; the answer updates the tracker. */
export async function checkRedis(redis: Redis, health: DependencyHealth): Promise<boolean> {
  const askedAt = Date.now();
  try {
    await redis.ping();
    health.up('redis', askedAt);
    return true;
  } catch (error) {
    health.down('redis', error);
    return false;
  }
}

// GET /readyz: each dependency this process needs, checked now (the database,
// Redis) or as its workers last saw it (the TRON nodes), and 503 when one is down.
// Acquirer connectors join the list when one ships (none is live yet, docs/connectors.md).
// A database that answers reads but refuses writes (a full disk, read-only) is
// down too: every payment writes.
import { sql } from 'kysely';
import type { Redis } from 'ioredis';
import type { Config } from '../config.ts';
import type { Db } from '../db/transaction.ts';
import type { DependencyHealth } from './dependency-health.ts';
import { checkRedis } from './redis-client.ts';

type CheckResult = 'ok' | 'down';

export interface Readiness {
  readonly ready: boolean;
  readonly checks: Readonly<Record<string, CheckResult>>;
}

interface ReadinessDeps {
  readonly db: Db;
  readonly config: Config;
  readonly health: DependencyHealth;
}

async function checkDatabase(context: ReadinessDeps): Promise<CheckResult> {
  const health = context.health;
  const askedAt = Date.now();
  try {
    const { rows } = await sql<{
      read_only: string;
    }>`select current_setting('transaction_read_only') as read_only`.execute(context.db);
    // A standby, or default_transaction_read_only: every write would be refused with 25006.
    if (rows[0]?.read_only === 'on')
      throw Object.assign(new Error('the database is read-only (transaction_read_only is on)'), { code: '25006' });
  } catch (error) {
    health.down('database', error);
    return 'down';
  }
  // A read ends an outage of connection, not one of storage (see DependencyHealth.up).
  health.up('database', askedAt);
  return health.isDown('database') ? 'down' : 'ok';
}

export async function readiness(context: ReadinessDeps, redis: Redis | undefined): Promise<Readiness> {
  const checks: Record<string, CheckResult> = { database: await checkDatabase(context) };
  if (redis) checks.redis = (await checkRedis(redis, context.health)) ? 'ok' : 'down';
  const config = context.config;
  if (config.tronXpubFile !== undefined && config.tronNodeUrls.length > 0) {
    checks.chain_nodes = context.health.isDown('chain_nodes') ? 'down' : 'ok';
  }
  return { ready: Object.values(checks).every((result) => result === 'ok'), checks };
}

// A Redis that stops answering but keeps its connection open (SIGSTOP) must not
// hold requests: every command is bounded (PAYGATE_REDIS_TIMEOUT_MS), the rate
// limiter fails open (docs/security.md), /readyz says Redis is down, and the
// outage is logged once. The Redis here is a private redis-server on a free port,
// never the shared one.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.ts';
import { DependencyHealth } from '../../src/health/dependency-health.ts';
import { openRedis } from '../../src/health/redis-client.ts';
import { createMerchant } from '../../src/merchants/merchant-service.ts';
import { buildTestApp, createTestContext } from '../support/app.ts';
import type { TestDatabase } from '../support/databases.ts';
import { capturingLogger, LEVEL, type LogLine } from '../support/log-capture.ts';
import { eventually } from '../support/eventually.ts';
import { freePort } from '../support/free-port.ts';

// Above the 200 ms default: a loaded test machine can starve the private redis-server
// for longer, which would count as an outage before the test stops it.
const TIMEOUT_MS = 2_000;

async function startRedisServer(dir: string, port: number): Promise<ChildProcess> {
  const child = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--appendonly', 'no'],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  await new Promise<void>((resolve, reject) => {
    let output = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('Ready to accept connections')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`redis-server exited ${code}: ${output}`)));
  });
  return child;
}

describe('Redis stops answering (SIGSTOP) under a running gateway', () => {
  let dir: string;
  let server: ChildProcess;
  let redis: Redis;
  let app: App;
  let database: TestDatabase;
  let lines: LogLine[];
  let key: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'paygate-redis-'));
    const port = await freePort();
    server = await startRedisServer(dir, port);
    const captured = capturingLogger();
    lines = captured.lines;
    const config = { redisUrl: `redis://127.0.0.1:${port}`, redisCommandTimeoutMs: TIMEOUT_MS };
    const made = await createTestContext('pglite', { config });
    database = made.database;
    const context = { ...made.context, logger: captured.logger, health: new DependencyHealth(captured.logger) };
    redis = (await openRedis(config, context.health))!;
    if (redis.status !== 'ready') await new Promise((resolve) => redis.once('ready', resolve));
    app = await buildTestApp(context, { redis });
    await app.ready();
    key = (await createMerchant(context, { name: 'Redis shop', email: 'redis@example.test' })).api_key;
  });
  afterAll(async () => {
    server.kill('SIGCONT');
    await app?.close();
    redis?.disconnect();
    await database?.close();
    server.kill('SIGKILL');
    await rm(dir, { recursive: true, force: true });
  });

  const account = () => app.inject({ method: 'GET', url: '/v1/account', headers: { authorization: `Bearer ${key}` } });
  const redisLines = () => lines.filter((line) => line.dependency === 'redis');

  it('answers requests (rate limit fails open) and /readyz 503 redis down while stopped; all normal after SIGCONT', async () => {
    const before = await account();
    expect(before.statusCode).toBe(200);
    expect(before.headers['x-ratelimit-remaining']).toBe('119');

    server.kill('SIGSTOP');
    // Answered while Redis is still stopped: the command timed out and the limit failed open (logged once, below).
    const during = await account();
    expect(during.statusCode).toBe(200);
    expect(redisLines().filter((line) => line.level === LEVEL.warn)).toHaveLength(1);
    const notReady = await app.inject({ method: 'GET', url: '/readyz' });
    expect(notReady.statusCode).toBe(503);
    expect(notReady.headers['retry-after']).toBeDefined();
    expect(notReady.json()).toMatchObject({
      status: 'unavailable',
      error: 'service_unavailable',
      checks: { database: 'ok', redis: 'down' },
    });
    expect((await account()).statusCode).toBe(200);

    server.kill('SIGCONT');
    await eventually(
      async () => (await app.inject({ method: 'GET', url: '/readyz' })).statusCode,
      (status) => status === 200,
    );
    const after = await account();
    expect(after.statusCode).toBe(200);
    // Counted in Redis again: below what the first request left.
    expect(Number(after.headers['x-ratelimit-remaining'])).toBeLessThan(119);

    const logged = redisLines();
    expect(logged.filter((line) => line.level === LEVEL.warn)).toHaveLength(1);
    expect(logged.filter((line) => line.level === LEVEL.info)).toHaveLength(1);
    expect(logged.findIndex((line) => line.level === LEVEL.warn)).toBeLessThan(
      logged.findIndex((line) => line.level === LEVEL.info),
    );
    expect(lines.filter((line) => line.level >= LEVEL.error)).toEqual([]);
  });
});

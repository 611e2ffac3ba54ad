// The gateway for a benchmark, run exactly as an operator runs it: `paygate
// merchant create` for the shop and key, then `paygate serve` as its own process.
import { randomBytes } from 'node:crypto';
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { startServerProcess, type ServerProcess } from './server-process.ts';

const PAYGATE = fileURLToPath(new URL('../bin/paygate.js', import.meta.url));

export type Backend = 'postgres' | 'pglite';

export interface BenchMerchant {
  readonly merchant_id: string;
  readonly shop_id: string;
  readonly api_key: string;
}

/** Where the gateway keeps its data for one benchmark run, and the environment that points `paygate` at it. */
export interface GatewaySetup {
  readonly backend: Backend;
  readonly env: NodeJS.ProcessEnv;
  /** Removes the temporary data folder (the PostgreSQL database is the caller's to drop). */
  cleanUp(): Promise<void>;
}

/**
 * The environment for `paygate` on a fresh database: `databaseUrl` for PostgreSQL, a new
 * temporary data folder for PGlite. The rate limit is raised so that it never refuses
 * a benchmark request, but it stays on and counts every request.
 */
export async function gatewaySetup(
  backend: Backend,
  databaseUrl: string | undefined,
  overrides: NodeJS.ProcessEnv = {},
): Promise<GatewaySetup> {
  const dataDir = await mkdtemp(join(tmpdir(), `paygate-bench-${backend}-`));
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PAYGATE_DATA_DIR: dataDir,
    PAYGATE_ROOT_KEY: randomBytes(32).toString('base64'),
    PAYGATE_RATE_LIMIT_PER_MINUTE: '10000000',
    PAYGATE_DB_POOL_SIZE: '20',
    LOG_LEVEL: process.env.BENCH_GATEWAY_LOG_LEVEL ?? 'warn',
    HOST: '127.0.0.1',
    ...overrides,
  };
  delete env.DATABASE_URL;
  if (backend === 'postgres') {
    if (!databaseUrl) throw new Error('a PostgreSQL gateway needs a database URL');
    env.DATABASE_URL = databaseUrl;
  }
  return { backend, env, cleanUp: () => rm(dataDir, { recursive: true, force: true }) };
}

/** `paygate merchant create --json`: a sandbox merchant with one shop and a key with every scope. */
export async function createBenchMerchant(setup: GatewaySetup): Promise<BenchMerchant> {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [
      PAYGATE,
      'merchant',
      'create',
      '--name',
      'Bench shop',
      '--email',
      `bench-${randomBytes(4).toString('hex')}@example.test`,
      '--json',
    ],
    { env: setup.env },
  );
  const line = stdout.trim().split('\n').at(-1)!;
  return JSON.parse(line) as BenchMerchant;
}

/** `paygate serve --role all` on a free port. */
export function startGateway(setup: GatewaySetup, role: 'all' | 'api' | 'worker' = 'all'): Promise<ServerProcess> {
  return startServerProcess({
    label: `gateway (${setup.backend})`,
    script: PAYGATE,
    args: ['serve', '--role', role, '--port', '0'],
    env: setup.env,
    ready: /paygate listening on (\S+)/,
  });
}

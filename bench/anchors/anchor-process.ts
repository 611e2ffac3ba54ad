// Starts the anchor routes (anchor-server.ts) as their own process.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startServerProcess, type ServerProcess } from '../server-process.ts';

const SERVER = fileURLToPath(new URL('./anchor-server.ts', import.meta.url));

/** On PostgreSQL: a Pool of `poolSize` to `databaseUrl`. On PGlite (no URL): a bare PGlite in a new temporary folder, removed at stop. */
export async function startAnchor(databaseUrl: string | undefined, poolSize = 20): Promise<ServerProcess> {
  const dataDir = databaseUrl ? undefined : await mkdtemp(join(tmpdir(), 'paygate-bench-anchor-'));
  const env: NodeJS.ProcessEnv = { ...process.env, ANCHOR_POOL_SIZE: String(poolSize) };
  delete env.ANCHOR_DATABASE_URL;
  delete env.ANCHOR_PGLITE_DIR;
  if (databaseUrl) env.ANCHOR_DATABASE_URL = databaseUrl;
  else env.ANCHOR_PGLITE_DIR = dataDir;
  const server = await startServerProcess({
    label: `anchor (${databaseUrl ? 'postgres' : 'pglite'})`,
    script: SERVER,
    env,
    ready: /anchor listening on (\S+)/,
  });
  return {
    ...server,
    async stop(graceMs) {
      await server.stop(graceMs);
      if (dataDir) await rm(dataDir, { recursive: true, force: true });
    },
  };
}

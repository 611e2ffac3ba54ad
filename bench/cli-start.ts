// `npm run bench:cli` (and `npm run bench`, BENCH_ONLY=cli-start): how long a `paygate` command takes from spawn to exit, run as
// an operator runs it (`node bin/paygate.js …` on the pinned runtime), against the
// anchor `node -e 0` (the runtime's own start) measured in the same run, alternating.
//  - `paygate key create --help`: help only (no configuration, no database).
//  - `paygate key revoke KEY_ID`: real work on a prepared embedded data folder (no
//    gateway running); each run revokes a key of its own, created beforehand. Its
//    floor is a second anchor: the embedded PostgreSQL engine alone (PGlite.create on
//    the same folder with the CLI's start parameters, one `select 1`, close) in a bare
//    node process, measured alternately in the same run.
//  - the same with a gateway running on the folder: the command runs inside it over
//    its admin socket (the usual case on a production machine).
// BENCH_CLI_RUNS (default 15) runs of each. Target: median under 1 s (PASS/MISS).
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { envNumber, verdict } from './verdict.ts';

const RUNS = envNumber('BENCH_CLI_RUNS', 15);
const TARGET_MS = 1_000;
const PAYGATE_BIN = fileURLToPath(new URL('../bin/paygate.js', import.meta.url));
const out = (text: string) => process.stdout.write(text);

interface Run {
  readonly ms: number;
  readonly stdout: string;
}

/** Rejects when the command fails, unless `anyExit` (the measure of a start, whatever it says). */
function timed(args: readonly string[], env: NodeJS.ProcessEnv, anyExit = false): Promise<Run> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(process.execPath, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      const ms = performance.now() - started;
      if (code === 0 || anyExit) resolve({ ms, stdout });
      else reject(new Error(`${args.join(' ')} exited with ${code}:\n${stdout}${stderr}`));
    });
  });
}

function percentile(samples: readonly number[], fraction: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(fraction * sorted.length) - 1)]!;
}

const describe = (samples: readonly number[]) =>
  `median ${percentile(samples, 0.5).toFixed(0)} ms  p90 ${percentile(samples, 0.9).toFixed(0)} ms`;

const dataDir = await mkdtemp(join(tmpdir(), 'paygate-bench-cli-'));
try {
  const env = { ...process.env, PAYGATE_DATA_DIR: dataDir, DATABASE_URL: '', LOG_LEVEL: 'warn' };
  const merchant = JSON.parse(
    (
      await timed(
        [PAYGATE_BIN, 'merchant', 'create', '--name', 'Bench', '--email', 'bench@example.test', '--json'],
        env,
      )
    ).stdout
      .trim()
      .split('\n')
      .pop()!,
  ) as { shop_id: string };
  const keyIds: string[] = [];
  for (let index = 0; index < RUNS; index += 1) {
    const created = await timed(
      [PAYGATE_BIN, 'key', 'create', '--shop', merchant.shop_id, '--scopes', 'read', '--json'],
      env,
    );
    keyIds.push((JSON.parse(created.stdout.trim().split('\n').pop()!) as { key_id: string }).key_id);
  }
  // Help needs no configuration: run it with none of the gateway's settings.
  const bareEnv = { PATH: process.env.PATH };
  const anchor: number[] = [];
  const help: number[] = [];
  const revoke: number[] = [];
  const engine: number[] = [];
  for (let index = 0; index < RUNS; index += 1) {
    anchor.push((await timed(['-e', '0'], bareEnv)).ms);
    engine.push((await timed(['--input-type=module', '-e', engineStartScript(join(dataDir, 'pglite'))], bareEnv)).ms);
    help.push((await timed([PAYGATE_BIN, 'key', 'create', '--help'], bareEnv)).ms);
    revoke.push((await timed([PAYGATE_BIN, 'key', 'revoke', keyIds[index]!], env)).ms);
  }
  const throughGateway = await revokesThroughGateway(env, merchant.shop_id, anchor);
  out(`runs: ${RUNS} of each, alternating (pinned runtime ${process.version})\n`);
  out(`anchor node -e 0:                ${describe(anchor)}\n`);
  out(`paygate key create --help:       ${describe(help)}\n`);
  out(`anchor PGlite engine start:      ${describe(engine)}\n`);
  out(`paygate key revoke (embedded):   ${describe(revoke)}\n`);
  out(`paygate key revoke (gateway):    ${describe(throughGateway)}\n`);
  out('summary\n');
  out(
    `cli-start help median ${percentile(help, 0.5).toFixed(0)} ms (anchor ${percentile(anchor, 0.5).toFixed(0)} ms), target < ${TARGET_MS} ms: ${verdict(percentile(help, 0.5) < TARGET_MS)}\n`,
  );
  out(
    `cli-start key revoke median ${percentile(revoke, 0.5).toFixed(0)} ms (anchor ${percentile(anchor, 0.5).toFixed(0)} ms), target < ${TARGET_MS} ms: ${verdict(percentile(revoke, 0.5) < TARGET_MS)}\n`,
  );
  out(
    `cli-start PGlite engine start alone median ${percentile(engine, 0.5).toFixed(0)} ms, target < ${TARGET_MS} ms: ${verdict(percentile(engine, 0.5) < TARGET_MS)} (the floor of any command that opens the embedded database itself)\n`,
  );
  out(
    `cli-start key revoke through a running gateway median ${percentile(throughGateway, 0.5).toFixed(0)} ms (anchor ${percentile(anchor, 0.5).toFixed(0)} ms), target < ${TARGET_MS} ms: ${verdict(percentile(throughGateway, 0.5) < TARGET_MS)}\n`,
  );
} finally {
  await rm(dataDir, { recursive: true, force: true });
}

/** The embedded engine's start alone, as a CLI command starts it (db/database.ts, shortLived). */
function engineStartScript(folder: string): string {
  const pglite = new URL('../node_modules/@electric-sql/pglite/dist/index.js', import.meta.url).href;
  return [
    `const { PGlite } = await import(${JSON.stringify(pglite)});`,
    `const db = await PGlite.create({ dataDir: ${JSON.stringify(folder)}, startParams: [...PGlite.defaultStartParams, '-c', 'shared_buffers=16MB'] });`,
    `await db.query('select 1');`,
    `await db.close();`,
  ].join('\n');
}

/** Starts `paygate serve` on the folder, then times RUNS revocations run inside it (the anchor gains RUNS more samples). */
async function revokesThroughGateway(env: NodeJS.ProcessEnv, shopId: string, anchor: number[]): Promise<number[]> {
  const gateway = spawn(process.execPath, [PAYGATE_BIN, 'serve', '--port', '0'], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  try {
    await listening(gateway);
    const keyIds: string[] = [];
    for (let index = 0; index < RUNS; index += 1) {
      const created = await timed([PAYGATE_BIN, 'key', 'create', '--shop', shopId, '--scopes', 'read', '--json'], env);
      keyIds.push((JSON.parse(created.stdout.trim().split('\n').pop()!) as { key_id: string }).key_id);
    }
    const samples: number[] = [];
    for (const keyId of keyIds) {
      anchor.push((await timed(['-e', '0'], { PATH: process.env.PATH })).ms);
      samples.push((await timed([PAYGATE_BIN, 'key', 'revoke', keyId], env)).ms);
    }
    return samples;
  } finally {
    gateway.kill('SIGTERM');
    await new Promise((resolve) => gateway.once('close', resolve));
  }
}

function listening(child: ChildProcess): Promise<void> {
  return new Promise((resolve, reject) => {
    let output = '';
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('listening on')) resolve();
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('close', (code) => reject(new Error(`paygate serve exited with ${code}:\n${output}`)));
  });
}

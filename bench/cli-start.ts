// `npm run bench:cli` (and `npm run bench`, BENCH_ONLY=cli-start): how long a `paygate` command takes from spawn to exit, run as
// an operator runs it (`node bin/paygate.js …` on the pinned runtime), against the
// anchor `node -e 0` (the runtime's own start) measured in the same run, alternating.
//  - `paygate key create --help`: help only (no configuration, no database).
//  - `paygate key revoke KEY_ID`: real work on a prepared embedded data folder (no
//    gateway running); each run revokes a key of its own, created beforehand.
// BENCH_CLI_RUNS (default 15) runs of each. Target: median under 1 s (PASS/MISS).
import { spawn } from 'node:child_process';
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

const describe = (samples: readonly number[]) => `median ${percentile(samples, 0.5).toFixed(0)} ms  p90 ${percentile(samples, 0.9).toFixed(0)} ms`;

const dataDir = await mkdtemp(join(tmpdir(), 'paygate-bench-cli-'));
try {
  const env = { ...process.env, PAYGATE_DATA_DIR: dataDir, DATABASE_URL: '', LOG_LEVEL: 'warn' };
  const merchant = JSON.parse((await timed([PAYGATE_BIN, 'merchant', 'create', '--name', 'Bench', '--email', 'bench@example.test', '--json'], env)).stdout.trim().split('\n').pop()!) as { shop_id: string };
  const keyIds: string[] = [];
  for (let index = 0; index < RUNS; index += 1) {
    const created = await timed([PAYGATE_BIN, 'key', 'create', '--shop', merchant.shop_id, '--scopes', 'read', '--json'], env);
    keyIds.push((JSON.parse(created.stdout.trim().split('\n').pop()!) as { key_id: string }).key_id);
  }
  // Help needs no configuration: run it with none of the gateway's settings.
  const bareEnv = { PATH: process.env.PATH };
  const anchor: number[] = [];
  const help: number[] = [];
  const revoke: number[] = [];
  for (let index = 0; index < RUNS; index += 1) {
    anchor.push((await timed(['-e', '0'], bareEnv)).ms);
    help.push((await timed([PAYGATE_BIN, 'key', 'create', '--help'], bareEnv)).ms);
    revoke.push((await timed([PAYGATE_BIN, 'key', 'revoke', keyIds[index]!], env)).ms);
  }
  out(`runs: ${RUNS} of each, alternating (pinned runtime ${process.version})\n`);
  out(`anchor node -e 0:                ${describe(anchor)}\n`);
  out(`paygate key create --help:       ${describe(help)}\n`);
  out(`paygate key revoke (embedded):   ${describe(revoke)}\n`);
  out('summary\n');
  out(`cli-start help median ${percentile(help, 0.5).toFixed(0)} ms (anchor ${percentile(anchor, 0.5).toFixed(0)} ms), target < ${TARGET_MS} ms: ${verdict(percentile(help, 0.5) < TARGET_MS)}\n`);
  out(`cli-start key revoke median ${percentile(revoke, 0.5).toFixed(0)} ms (anchor ${percentile(anchor, 0.5).toFixed(0)} ms), target < ${TARGET_MS} ms: ${verdict(percentile(revoke, 0.5) < TARGET_MS)}\n`);
} finally {
  await rm(dataDir, { recursive: true, force: true });
}

// `npm run bench`: every benchmark in turn, each in its own process and each
// measuring its anchor in the same run; their output is shown as it comes, and
// every line that judges a target (PASS/MISS) is repeated in a summary at the end.
// Exits non-zero only when a benchmark failed (an error), never for a missed target.
// Durations: BENCH_DURATION_S (phase seconds, default 10), BENCH_WARMUP_S (3),
// BENCH_PAIRS (2), BENCH_IDLE_S (60), BENCH_CLI_RUNS (15); BENCH_ONLY=payments,ledger,… runs a subset.
import { spawn } from 'node:child_process';
import { availableParallelism, loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';

const BENCHMARKS = ['payments', 'ledger', 'webhooks', 'idle', 'cli-start'] as const;

/** The lines that judge a target: those after the script's own "summary" line when it prints one (they name their subject), else every PASS/MISS line. */
function judgedLines(lines: readonly string[]): string[] {
  const summaryAt = lines.findLastIndex((line) => line.startsWith('summary'));
  return lines.slice(summaryAt + 1).filter((line) => /\b(PASS|MISS)\b/.test(line));
}

function run(name: string): Promise<{ code: number | null; judged: string[] }> {
  const script = fileURLToPath(new URL(`./${name}.ts`, import.meta.url));
  const child = spawn(process.execPath, [script], { stdio: ['ignore', 'pipe', 'inherit'] });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => {
    process.stdout.write(chunk);
    output += chunk.toString();
  });
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, judged: judgedLines(output.split('\n')) }));
  });
}

const only = process.env.BENCH_ONLY?.split(',').map((name) => name.trim());
const started = Date.now();
const failures: string[] = [];
const summary: string[] = [];
process.stdout.write(
  `machine: ${availableParallelism()} cores, load ${loadavg()
    .map((value) => value.toFixed(2))
    .join(' ')} (1, 5, 15 min)\n`,
);
for (const name of BENCHMARKS) {
  if (only && !only.includes(name)) continue;
  process.stdout.write(`\n=== bench:${name} ===\n`);
  const { code, judged } = await run(name);
  if (code !== 0) failures.push(`${name} (exit ${code})`);
  summary.push(`${name}:`, ...judged.map((line) => `  ${line.trim()}`));
}
process.stdout.write(
  `\n=== summary (${((Date.now() - started) / 60_000).toFixed(1)} min) ===\n${summary.join('\n')}\n`,
);
process.stdout.write(
  failures.length
    ? `\nfailed with an error: ${failures.join(', ')}\n`
    : '\nall benchmarks ran (targets as marked above)\n',
);
process.exitCode = failures.length ? 1 : 0;

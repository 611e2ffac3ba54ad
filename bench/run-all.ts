// `npm run bench`: runs every module benchmark in turn (each prints its own
// figures and the baseline measured in the same run), then a summary of exits.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const BENCHMARKS = ['webhooks', 'payments', 'ledger'] as const;

const failures: string[] = [];
for (const name of BENCHMARKS) {
  process.stdout.write(`\n=== bench:${name} ===\n`);
  const script = fileURLToPath(new URL(`./${name}.ts`, import.meta.url));
  const result = spawnSync(process.execPath, [script], { stdio: 'inherit' });
  if (result.status !== 0) failures.push(`${name} (exit ${result.status})`);
}
process.stdout.write(failures.length ? `\nfailed: ${failures.join(', ')}\n` : '\nall benchmarks finished\n');
process.exitCode = failures.length ? 1 : 0;

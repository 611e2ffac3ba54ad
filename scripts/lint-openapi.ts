// `npm run lint:openapi` (part of `npm run lint`): builds the OpenAPI document
// as `paygate openapi` does and lints it with Redocly's recommended rules
// (redocly.yaml). Redocly fails only on errors; here a warning fails too.
import { spawnSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildOpenApiDocument } from '../src/cli/openapi-command.ts';
import { loadConfig } from '../src/config.ts';

interface RedoclyProblem {
  ruleId: string;
  severity: string;
  message: string;
  location?: { pointer?: string }[];
}

// A deployed gateway serves its own public URL; Redocly rightly warns about localhost.
const config = loadConfig({ ...process.env, PAYGATE_PUBLIC_URL: 'https://paygate.test', LOG_LEVEL: 'silent' });
const folder = await mkdtemp(join(tmpdir(), 'paygate-openapi-'));
try {
  const file = join(folder, 'openapi.json');
  await writeFile(file, JSON.stringify(await buildOpenApiDocument(config), null, 2));
  const redocly = spawnSync(
    'redocly',
    ['lint', file, '--config', 'redocly.yaml', '--format', 'json', '--max-problems', '1000'],
    {
      encoding: 'utf8',
      maxBuffer: 64 * 1024 * 1024,
    },
  );
  if (redocly.error || redocly.stdout.trim() === '') {
    process.stderr.write(`redocly did not run: ${redocly.error?.message ?? redocly.stderr}\n`);
    process.exit(1);
  }
  const report = JSON.parse(redocly.stdout) as {
    totals: { errors: number; warnings: number };
    problems: RedoclyProblem[];
  };
  for (const problem of report.problems) {
    process.stderr.write(
      `${problem.severity} ${problem.ruleId} at ${problem.location?.[0]?.pointer ?? '?'}: ${problem.message}\n`,
    );
  }
  const { errors, warnings } = report.totals;
  process.stdout.write(`OpenAPI document (redocly recommended): ${errors} errors, ${warnings} warnings\n`);
  process.exitCode = errors + warnings === 0 ? 0 : 1;
} finally {
  await rm(folder, { recursive: true, force: true });
}

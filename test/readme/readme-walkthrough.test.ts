// README.md's walkthroughs, run as written: every block marked
// `<!-- runnable: … -->` runs in bash, in order, against a real `paygate serve`
// on a fresh data folder (the reader's `npm start`), with `http://localhost:8080`
// pointed at it. Every printed answer must have the shape of the real one.
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CreatedMerchant } from '../../src/merchants/merchant-service.ts';
import { lastJsonLine, runPaygateInProcess, startPaygate } from '../support/cli.ts';
import { backends, createServerDatabase, dropServerDatabase } from '../support/databases.ts';
import { parseWalkthroughs, readReadme, shapeDifferences, WalkthroughShell, type Walkthrough } from './walkthrough.ts';

const README_URL = 'http://localhost:8080';
/** The walkthroughs the README must keep: removing one (or its marker) fails here. */
const WALKTHROUGHS = ['rub-payment', 'crypto'];
/** A safety net only: a step that waits for an event (a credit, a final payout) waits for it, not for a time. */
const STEP_BOUND_MS = 180_000;

interface RecordedStep {
  readonly line: number;
  readonly status: number | undefined;
  readonly body: unknown;
}

/** Runs a walkthrough's steps; fails at the first step whose exit code, status or answer shape is wrong. */
async function runWalkthrough(walkthrough: Walkthrough, cwd: string, baseUrl: string): Promise<RecordedStep[]> {
  const shell = new WalkthroughShell(cwd);
  const recorded: RecordedStep[] = [];
  try {
    for (const step of walkthrough.steps) {
      const where = `README.md:${step.line} (${walkthrough.name})`;
      let timer: NodeJS.Timeout | undefined;
      const bound = new Promise<never>((_, reject) => {
        timer = setTimeout(
          () =>
            reject(new Error(`${where}: no end within ${STEP_BOUND_MS} ms:\n${step.script}\nstderr: ${shell.stderr}`)),
          STEP_BOUND_MS,
        );
      });
      const outcome = await Promise.race([shell.run(step.script.replaceAll(README_URL, baseUrl)), bound]).finally(() =>
        clearTimeout(timer),
      );
      const context = `${where}:\n${step.script}\n--- output:\n${outcome.stdout}\n--- stderr:\n${shell.stderr}`;
      expect(outcome.exitCode, context).toBe(0);
      if (!step.answer) continue;
      let body: unknown;
      try {
        body = JSON.parse(outcome.stdout);
      } catch {
        throw new Error(`${context}\nprinted an answer, but the output is not one JSON document`);
      }
      if (step.answer.status !== undefined) expect(outcome.status, context).toBe(step.answer.status);
      expect(shapeDifferences(step.answer.body, body), `${context}\nprinted: ${step.answer.text}`).toEqual([]);
      recorded.push({ line: step.line, status: outcome.status, body });
    }
  } finally {
    shell.close();
  }
  return recorded;
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  await exited;
}

describe('README walkthroughs are runnable as written', () => {
  it('marks the walkthroughs, each with printed answers to check', async () => {
    const walkthroughs = parseWalkthroughs(await readReadme());
    expect([...walkthroughs.keys()].sort()).toEqual([...WALKTHROUGHS].sort());
    for (const name of WALKTHROUGHS)
      expect(walkthroughs.get(name)!.steps.filter((step) => step.answer).length, name).toBeGreaterThanOrEqual(3);
  });

  it('fails on a printed answer that drifted from the real one (a renamed, a missing or an extra field)', () => {
    const real = {
      invoice_id: 'inv_1',
      status: 'paid',
      paid_at: '2026-01-01T00:00:00.000Z',
      accounts: [{ currency: 'USDT' }],
    };
    expect(
      shapeDifferences({ invoice_id: 'inv_…', status: 'pending', paid_at: '…', accounts: [{ currency: 'RUB' }] }, real),
    ).toEqual([]);
    expect(
      shapeDifferences({ invoiceId: '…', status: '…', paid_at: '…', accounts: [{ currency: '…' }] }, real),
    ).toEqual(['$.invoiceId: printed, but not in the answer', '$.invoice_id: in the answer, but not printed']);
    expect(shapeDifferences({ invoice_id: '…', status: '…', paid_at: null, accounts: [] }, real)).toEqual([
      '$.paid_at: printed null, got string ("2026-01-01T00:00:00.000Z")',
      '$.accounts: printed 0 items, got 1',
    ]);
    // `…` stands for fields not shown; the shown ones are still checked.
    const elided = parseWalkthroughs('<!-- runnable: x -->\n```sh\necho\n# → 200 {…,"status":"paid",…}\n```\n').get(
      'x',
    )!.steps[0]!.answer!;
    expect(shapeDifferences(elided.body, real)).toEqual([]);
    expect(shapeDifferences(elided.body, { state: 'paid' })).toEqual(['$.status: printed, but not in the answer']);
  });

  describe.each(backends)('on %s', (backend) => {
    let folder: string;
    let databaseUrl: string | undefined;
    let gateway: Awaited<ReturnType<typeof startPaygate>>;

    beforeAll(async () => {
      folder = await mkdtemp(join(tmpdir(), 'paygate-readme-'));
      databaseUrl = backend === 'postgres' ? await createServerDatabase() : undefined;
      const env = {
        PAYGATE_DATA_DIR: join(folder, 'data'),
        DATABASE_URL: databaseUrl,
        // The demo merchant of `npm start`, on `paygate serve` and on PostgreSQL too.
        PAYGATE_DEMO: '1',
      };
      if (databaseUrl) {
        // A PostgreSQL database gets no demo merchant of its own: make the reader's credentials file as `npm start` would.
        const created = await runPaygateInProcess(
          ['merchant', 'create', '--name', 'Demo shop', '--email', 'demo@paygate.local', '--json'],
          env,
        );
        expect(created.code, created.stderr).toBe(0);
        await mkdir(join(folder, 'data'), { recursive: true });
        await writeFile(
          join(folder, 'data', 'demo-credentials.json'),
          JSON.stringify(lastJsonLine<CreatedMerchant>(created.stdout)),
        );
      }
      gateway = await startPaygate(['--port', '0'], env);
    });

    afterAll(async () => {
      if (gateway) await stop(gateway.child);
      if (databaseUrl) await dropServerDatabase(databaseUrl);
      await rm(folder, { recursive: true, force: true });
    });

    it.each(WALKTHROUGHS)('the %s walkthrough', { timeout: 600_000 }, async (name) => {
      const walkthrough = parseWalkthroughs(await readReadme()).get(name)!;
      const recorded = await runWalkthrough(walkthrough, folder, gateway.url);
      expect(recorded.length).toBe(walkthrough.steps.filter((step) => step.answer).length);
    });

    it('fails loudly when a command that sets a variable is gone', async () => {
      const readme = (await readReadme()).replace(/^PAY=\$\(.*\)$/m, '');
      const walkthrough = parseWalkthroughs(readme).get('rub-payment')!;
      await expect(runWalkthrough(walkthrough, folder, gateway.url)).rejects.toThrow(/PAY: unbound variable/);
    });
  });
});

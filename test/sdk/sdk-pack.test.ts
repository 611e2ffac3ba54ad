// @paygate/node as a merchant installs it: `npm pack` builds it (prepack → tsc)
// into a tarball of dist/ only; installed from that tarball into an empty
// project, it imports as ESM, verifies a webhook, and its .d.ts files type-check
// a strict consumer (no skipLibCheck). No runtime dependency comes with it.
import { execFile } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const PACKAGE_DIR = new URL('../../packages/paygate-node/', import.meta.url).pathname;
const TSC = new URL('../../node_modules/typescript/bin/tsc', import.meta.url).pathname;

const CONSUMER = `
import { Paygate, PaygateError, type Payment } from '@paygate/node';
const paygate = new Paygate({ baseUrl: 'http://127.0.0.1:1', apiKey: 'pg_test' });
export async function total(): Promise<number> {
  let sum = 0;
  for await (const payment of paygate.crypto.payouts.list({ limit: 10 })) sum += payment.recipient_amount.length;
  const created: Payment = await paygate.payments.create({ amount: 10, currency: 'RUB' });
  return sum + created.amount;
}
export const isRefusal = (error: unknown) => error instanceof PaygateError && error.request_id !== undefined;
`;

describe('the packed @paygate/node', () => {
  let work: string;
  let tarball: string;
  beforeAll(async () => {
    work = await mkdtemp(join(tmpdir(), 'paygate-sdk-pack-'));
    const { stdout } = await run('npm', ['pack', '--json', '--pack-destination', work], { cwd: PACKAGE_DIR });
    const [packed] = JSON.parse(stdout) as { filename: string; files: { path: string }[] }[];
    tarball = join(work, packed!.filename);
    // npm always packs the README beside what `files` names.
    expect(
      packed!.files
        .map((file) => file.path)
        .filter((path) => !path.startsWith('dist/'))
        .toSorted(),
    ).toEqual(['README.md', 'package.json']);
    await writeFile(join(work, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
    await run('npm', ['install', tarball, '--offline', '--no-audit', '--no-fund', '--ignore-scripts'], { cwd: work });
  });
  afterAll(() => (work === undefined ? undefined : rm(work, { recursive: true, force: true })));

  it('installs from the tarball with nothing else in node_modules', async () => {
    expect((await readdir(join(work, 'node_modules'))).filter((name) => !name.startsWith('.'))).toEqual(['@paygate']);
    const manifest = JSON.parse(await readFile(join(work, 'node_modules/@paygate/node/package.json'), 'utf8'));
    expect(manifest.dependencies).toBeUndefined();
  });

  it('imports as ESM and verifies a Standard Webhooks signature', async () => {
    const key = Buffer.from('packed-test-secret');
    const body = '{"id":"evt_1","type":"payment.paid","created_at":"2026-11-01T10:00:00.000Z","data":{}}';
    const timestamp = Math.floor(Date.now() / 1000);
    const signature = createHmac('sha256', key).update(`evt_1.${timestamp}.${body}`).digest('base64');
    const script = `
      import { Paygate, PaygateError, PageList } from '@paygate/node';
      const paygate = new Paygate({ baseUrl: 'http://127.0.0.1:1', apiKey: 'pg_test' });
      const event = paygate.webhooks.verify(process.env.BODY, {
        'webhook-id': 'evt_1', 'webhook-timestamp': process.env.TS, 'webhook-signature': 'v1,' + process.env.SIG,
      }, 'whsec_' + process.env.KEY);
      console.log(JSON.stringify({
        type: event.type,
        list: paygate.crypto.payouts.list() instanceof PageList,
        error: typeof PaygateError,
      }));`;
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], {
      cwd: work,
      env: { ...process.env, BODY: body, TS: String(timestamp), SIG: signature, KEY: key.toString('base64') },
    });
    expect(JSON.parse(stdout)).toEqual({ type: 'payment.paid', list: true, error: 'function' });
  });

  it('types a strict TypeScript consumer through its .d.ts files', async () => {
    await writeFile(join(work, 'consumer.ts'), CONSUMER);
    const options = ['--noEmit', '--strict', '--module', 'nodenext', '--target', 'es2022', '--types', 'node'];
    // @types/node comes from the repository: the consumer's own project would have it.
    const typeRoots = ['--typeRoots', new URL('../../node_modules/@types', import.meta.url).pathname];
    const checked = await run(process.execPath, [TSC, ...options, ...typeRoots, 'consumer.ts'], { cwd: work }).then(
      () => 'ok',
      (error: { stdout: string }) => error.stdout,
    );
    expect(checked).toBe('ok');
    await writeFile(
      join(work, 'wrong.ts'),
      `${CONSUMER}\nawait new Paygate({ baseUrl: '', apiKey: '' }).payments.create({ amount: '10' });\n`,
    );
    const wrong = await run(process.execPath, [TSC, ...options, ...typeRoots, 'wrong.ts'], { cwd: work }).then(
      () => 'ok',
      (error: { stdout: string }) => error.stdout,
    );
    expect(wrong).toMatch(/wrong\.ts.*error TS/);
  });
});

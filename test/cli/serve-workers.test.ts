// PAYGATE_WORKERS: a process runs only the workers it names, so webhook delivery
// (or any other worker) can have a process of its own (docs/scaling.md). A name no
// worker has, a malformed list, or a list given to an API-only process is refused
// at start with exit 2, naming the setting.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  lastJsonLine,
  PAYGATE_BIN,
  runPaygate,
  runPaygateInProcess,
  startPaygate,
  type CliResult,
} from '../support/cli.ts';
import { createServerDatabase, dropServerDatabase, TEST_DATABASE_URL } from '../support/databases.ts';
import { TEST_ROOT_KEY } from '../support/keyring.ts';
import { startReceiver, type Receiver } from '../webhooks/receiver.ts';

function stopped(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return Promise.resolve();
  const closed = new Promise<void>((resolve) => child.once('close', () => resolve()));
  child.kill('SIGTERM');
  return closed;
}

function expectRefused(result: CliResult, ...mentions: string[]): void {
  expect(result.code, result.stderr).toBe(2);
  expect(result.stderr.trim().split('\n'), result.stderr).toHaveLength(1);
  for (const mention of mentions) expect(result.stderr).toContain(mention);
}

/** A payment of `apiKey`'s shop, paid through the test helper; its payment.paid goes to `callbackUrl`. */
async function payOnePayment(url: string, apiKey: string, callbackUrl: string): Promise<string> {
  const headers = { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' };
  const created = await request(`${url}/v1/payments`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ amount: 100, currency: 'RUB', callback_url: callbackUrl }),
  });
  const text = await created.body.text();
  expect(created.statusCode, text).toBe(201);
  const { payment_id: paymentId } = JSON.parse(text) as { payment_id: string };
  const paid = await request(`${url}/v1/test_helpers/payments/${paymentId}/pay`, {
    method: 'POST',
    headers: { authorization: headers.authorization },
  });
  expect(paid.statusCode).toBe(200);
  await paid.body.dump();
  return paymentId;
}

/** Asks until `probe` holds; the test's timeout is the only bound. */
async function until(probe: () => boolean): Promise<void> {
  while (!probe()) await new Promise((resolve) => setTimeout(resolve, 20));
}

describe('PAYGATE_WORKERS chooses the workers a process runs', () => {
  let dataDir: string;
  let receiver: Receiver | undefined;
  const children: ChildProcess[] = [];
  beforeEach(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'paygate-workers-'));
  });
  afterEach(async () => {
    await Promise.all(children.splice(0).map(stopped));
    await receiver?.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('a gateway that runs only webhook-delivery says so and delivers (embedded database)', async () => {
    receiver = await startReceiver();
    const server = await startPaygate([], {
      PAYGATE_DATA_DIR: dataDir,
      PORT: '0',
      PAYGATE_DEMO: '1',
      PAYGATE_WEBHOOK_ALLOW_PRIVATE: '1',
      PAYGATE_WORKERS: 'webhook-delivery',
    });
    children.push(server.child);
    expect(server.output()).toMatch(
      /listening on http:\/\/\S+ \(role all, database pglite, workers webhook-delivery\)/,
    );
    const { api_key: apiKey } = JSON.parse(await readFile(join(dataDir, 'demo-credentials.json'), 'utf8')) as {
      api_key: string;
    };
    const paymentId = await payOnePayment(server.url, apiKey, receiver.url);
    await until(() => receiver!.requests.length === 1);
    expect(JSON.parse(receiver.requests[0]!.body)).toMatchObject({ type: 'payment.paid' });
    expect(receiver.requests[0]!.body).toContain(paymentId);
  });

  it('a name no worker has is refused with exit 2, listing the workers there are', async () => {
    expectRefused(
      await runPaygate(['serve'], {
        PAYGATE_DATA_DIR: dataDir,
        PORT: '0',
        PAYGATE_WORKERS: 'webhook-delivery, no-such-worker',
      }),
      'PAYGATE_WORKERS',
      'no-such-worker',
      'the workers are',
      'webhook-delivery',
      'crypto-outgoing-executor',
      'payment-expiry',
    );
    // The refused start released the data folder: a command after it opens the database.
    const migrated = await runPaygateInProcess(['migrate'], { PAYGATE_DATA_DIR: dataDir });
    expect(migrated.code, migrated.stderr).toBe(0);
  });

  it('a list that is not worker names, or that mixes names to run with names not to, is refused with exit 2', async () => {
    expectRefused(
      await runPaygate(['serve'], { PAYGATE_DATA_DIR: dataDir, PORT: '0', PAYGATE_WORKERS: 'Webhook Delivery' }),
      'PAYGATE_WORKERS',
      'Webhook Delivery',
    );
    expectRefused(
      await runPaygate(['serve'], {
        PAYGATE_DATA_DIR: dataDir,
        PORT: '0',
        PAYGATE_WORKERS: 'webhook-delivery,-payment-expiry',
      }),
      'PAYGATE_WORKERS',
      'mixes names',
    );
  });

  describe.runIf(TEST_DATABASE_URL)('split processes on postgres', () => {
    let databaseUrl: string | undefined;
    afterEach(async () => {
      if (databaseUrl) await dropServerDatabase(databaseUrl);
      databaseUrl = undefined;
    });

    it('an API-only process given PAYGATE_WORKERS is refused with exit 2', async () => {
      databaseUrl = await createServerDatabase();
      expectRefused(
        await runPaygate(['serve', '--role', 'api'], {
          DATABASE_URL: databaseUrl,
          PAYGATE_DATA_DIR: dataDir,
          PAYGATE_ROOT_KEY: TEST_ROOT_KEY,
          PORT: '0',
          PAYGATE_WORKERS: 'webhook-delivery',
        }),
        'PAYGATE_WORKERS',
        '--role api',
      );
    });

    it('a worker process of webhook-delivery alone delivers what an API process wrote; one of every other worker runs beside it', async () => {
      databaseUrl = await createServerDatabase();
      const env = {
        DATABASE_URL: databaseUrl,
        PAYGATE_DATA_DIR: dataDir,
        PAYGATE_ROOT_KEY: TEST_ROOT_KEY,
        PORT: '0',
        PAYGATE_WEBHOOK_ALLOW_PRIVATE: '1',
        PAYGATE_ALLOW_HTTP_WEBHOOKS: '1',
      };
      const created = await runPaygateInProcess(
        ['merchant', 'create', '--name', 'Split workers', '--email', 'split-workers@example.com', '--json'],
        env,
      );
      expect(created.code, created.stderr).toBe(0);
      const { api_key: apiKey } = lastJsonLine<{ api_key: string }>(created.stdout);
      receiver = await startReceiver();
      const api = await startPaygate(['--role', 'api'], env);
      children.push(api.child);
      const paymentId = await payOnePayment(api.url, apiKey, receiver.url);
      const others = await startWorkerProcess({ ...env, PAYGATE_WORKERS: '-webhook-delivery' });
      children.push(others.child);
      const running = /paygate workers running \(database postgres, workers ([^)]*)\)/.exec(others.output())?.[1];
      expect(running?.split(', ')).toEqual(expect.arrayContaining(['payment-expiry', 'crypto-outgoing-executor']));
      expect(running?.split(', ')).not.toContain('webhook-delivery');
      // No process delivers yet: the other workers' process has no delivery worker.
      expect(receiver.requests).toHaveLength(0);
      const delivering = await startWorkerProcess({ ...env, PAYGATE_WORKERS: 'webhook-delivery' });
      children.push(delivering.child);
      expect(delivering.output()).toContain('paygate workers running (database postgres, workers webhook-delivery)');
      await until(() => receiver!.requests.length === 1);
      expect(receiver.requests[0]!.body).toContain(paymentId);
    });
  });
});

/** `paygate serve --role worker` prints no address: it is up once it says its workers run. */
function startWorkerProcess(env: Record<string, string>): Promise<{ child: ChildProcess; output: () => string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [PAYGATE_BIN, 'serve', '--role', 'worker'], {
      env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'warn', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('paygate workers running')) resolve({ child, output: () => output });
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.on('error', reject);
    child.on('close', (code) => reject(new Error(`paygate serve --role worker exited with ${code}:\n${output}`)));
  });
}

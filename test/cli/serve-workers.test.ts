// PAYGATE_WORKERS: a process runs only the workers it names (or every one but those
// after a minus), so webhook delivery can have a process of its own (docs/scaling.md).
// A name no worker has, a malformed list, a list given to an API-only process or to
// the embedded database (one process only: the workers left out would run nowhere) is
// refused at start with exit 2, naming the setting. A worker process given --port
// serves /healthz, /readyz and /metrics there, and nothing else.
import type { ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  lastJsonLine,
  runPaygate,
  runPaygateInProcess,
  startPaygate,
  startPaygateWorker,
  type CliResult,
} from '../support/cli.ts';
import { createServerDatabase, dropServerDatabase, TEST_DATABASE_URL } from '../support/databases.ts';
import { TEST_ROOT_KEY } from '../support/keyring.ts';
import { startReceiver, type Receiver } from '../webhooks/receiver.ts';

function stopped(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
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

/** Asks until `probe` holds, running `refresh` before each look; the test's timeout is the only bound. */
async function until(probe: () => boolean, refresh?: () => Promise<void>): Promise<void> {
  for (;;) {
    await refresh?.();
    if (probe()) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('PAYGATE_WORKERS chooses the workers a process runs', () => {
  let dataDir: string;
  let databaseUrl: string | undefined;
  let receiver: Receiver | undefined;
  const children: ChildProcess[] = [];
  beforeEach(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'paygate-workers-'));
  });
  // The processes stop before their database is dropped.
  afterEach(async () => {
    await Promise.all(children.splice(0).map(stopped));
    await receiver?.close();
    receiver = undefined;
    if (databaseUrl) await dropServerDatabase(databaseUrl);
    databaseUrl = undefined;
    await rm(dataDir, { recursive: true, force: true });
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

  it('the embedded database refuses it, and --role api or worker, with exit 2: its one process would leave the other parts unrun', async () => {
    expectRefused(
      await runPaygate(['serve'], { PAYGATE_DATA_DIR: dataDir, PORT: '0', PAYGATE_WORKERS: 'webhook-delivery' }),
      'PAYGATE_WORKERS',
      'needs DATABASE_URL',
    );
    // So do the split roles themselves, refused by the same start-up check.
    for (const role of ['api', 'worker'])
      expectRefused(
        await runPaygate(['serve', '--role', role], { PAYGATE_DATA_DIR: dataDir, PORT: '0' }),
        'DATABASE_URL',
        `is required for --role ${role}`,
      );
  });

  describe.runIf(TEST_DATABASE_URL)('split processes on postgres', () => {
    const serverEnv = async () => {
      databaseUrl = await createServerDatabase();
      return {
        DATABASE_URL: databaseUrl,
        PAYGATE_DATA_DIR: dataDir,
        PAYGATE_ROOT_KEY: TEST_ROOT_KEY,
        PORT: '0',
        PAYGATE_WEBHOOK_ALLOW_PRIVATE: '1',
        PAYGATE_ALLOW_HTTP_WEBHOOKS: '1',
      };
    };

    it('a name no worker has is refused with exit 2, listing the workers there are', async () => {
      expectRefused(
        await runPaygate(['serve', '--role', 'worker'], {
          ...(await serverEnv()),
          PAYGATE_WORKERS: 'webhook-delivery, no-such-worker',
        }),
        'PAYGATE_WORKERS',
        'no-such-worker',
        'the workers are',
        'webhook-delivery',
        'crypto-outgoing-executor',
        'payment-expiry',
      );
    });

    it('an API-only process given PAYGATE_WORKERS is refused with exit 2', async () => {
      expectRefused(
        await runPaygate(['serve', '--role', 'api'], { ...(await serverEnv()), PAYGATE_WORKERS: 'webhook-delivery' }),
        'PAYGATE_WORKERS',
        '--role api',
      );
    });

    it('the API with every worker but delivery in one process, delivery alone in another: the webhook arrives once, and the delivery process serves its metrics', async () => {
      const env = await serverEnv();
      const created = await runPaygateInProcess(
        ['merchant', 'create', '--name', 'Split workers', '--email', 'split-workers@example.com', '--json'],
        env,
      );
      expect(created.code, created.stderr).toBe(0);
      const { api_key: apiKey } = lastJsonLine<{ api_key: string }>(created.stdout);
      receiver = await startReceiver();
      const gateway = await startPaygate([], { ...env, PAYGATE_WORKERS: '-webhook-delivery' });
      children.push(gateway.child);
      const running = /listening on http:\/\/\S+ \(role all, database postgres, workers ([^)]*)\)/.exec(
        gateway.output(),
      )?.[1];
      expect(running?.split(', '), gateway.output()).toEqual(
        expect.arrayContaining(['payment-expiry', 'crypto-chain-watcher', 'crypto-outgoing-executor']),
      );
      expect(running?.split(', ')).not.toContain('webhook-delivery');
      const paymentId = await payOnePayment(gateway.url, apiKey, receiver.url);

      // Given a port, the worker serves its operations endpoints there: its own metrics can be scraped.
      const delivering = await startPaygateWorker(
        ['--port', '0'],
        { ...env, PAYGATE_WORKERS: 'webhook-delivery' },
        (child) => children.push(child),
      );
      const served =
        /paygate workers running \(database postgres, workers webhook-delivery\); \/healthz, \/readyz and \/metrics on (http:\/\/\S+)/.exec(
          delivering.output(),
        );
      expect(served, delivering.output()).not.toBeNull();
      await until(() => receiver!.requests.length >= 1);
      expect(receiver.requests).toHaveLength(1);
      expect(JSON.parse(receiver.requests[0]!.body)).toMatchObject({ type: 'payment.paid' });
      expect(receiver.requests[0]!.body).toContain(paymentId);

      const operations = served![1]!;
      const ready = await request(`${operations}/readyz`);
      expect(ready.statusCode).toBe(200);
      expect(await ready.body.json()).toMatchObject({ status: 'ok', database: 'postgres' });
      // The attempt is counted once its outcome is recorded, just after the receiver answered.
      let metrics = '';
      await until(
        () => /paygate_webhook_attempts_total\{outcome="succeeded"\} 1\b/.test(metrics),
        async () => {
          const scraped = await request(`${operations}/metrics`);
          expect(scraped.statusCode).toBe(200);
          metrics = await scraped.body.text();
        },
      );
      // Only the operations endpoints: a worker serves no API.
      const notServed = await request(`${operations}/v1/payments`, { headers: { authorization: `Bearer ${apiKey}` } });
      expect(notServed.statusCode).toBe(404);
      await notServed.body.dump();
    });
  });
});

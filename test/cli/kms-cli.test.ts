// `paygate kms …` in real processes: a new key, the key a server database
// requires, and a root key rotation after which only the new key is needed.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CreatedMerchant } from '../../src/merchants/merchant-service.ts';
import { lastJsonLine, runPaygate, runPaygateInProcess, startPaygate } from '../support/cli.ts';
import { startReceiver, type Receiver } from '../webhooks/receiver.ts';

describe('paygate kms', () => {
  let dataDir: string;
  let receiver: Receiver;
  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'paygate-kms-cli-'));
    receiver = await startReceiver();
  });
  afterAll(async () => {
    await receiver?.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('generate-key prints a new 32-byte base64 key each time', async () => {
    const [first, second] = await Promise.all([
      runPaygateInProcess(['kms', 'generate-key'], {}),
      runPaygateInProcess(['kms', 'generate-key'], {}),
    ]);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout.trim()).toMatch(/^[A-Za-z0-9+/]{43}=$/);
    expect(second.stdout.trim()).not.toBe(first.stdout.trim());
  });

  it('with DATABASE_URL and no root key, the gateway refuses to start and says which variable to set', async () => {
    const result = await runPaygate(['serve'], {
      DATABASE_URL: 'postgres://postgres@127.0.0.1:1/none',
      PAYGATE_ROOT_KEY: undefined,
    });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('PAYGATE_ROOT_KEY or PAYGATE_ROOT_KEY_FILE is required with DATABASE_URL');
  });

  it('rotate re-wraps the secrets under the new key; afterwards the old key is not needed and webhooks still verify', async () => {
    const keyA = (await runPaygateInProcess(['kms', 'generate-key'], {})).stdout.trim();
    const keyB = (await runPaygateInProcess(['kms', 'generate-key'], {})).stdout.trim();
    const created = await runPaygateInProcess(
      ['merchant', 'create', '--name', 'Rotation', '--email', 'rotation@example.test', '--json'],
      { PAYGATE_DATA_DIR: dataDir, PAYGATE_ROOT_KEY: keyA },
    );
    expect(created.code, created.stderr).toBe(0);
    const merchant = lastJsonLine<CreatedMerchant>(created.stdout);

    // The new key alone cannot open what the old one wrapped.
    const tooEarly = await runPaygateInProcess(['kms', 'rotate'], {
      PAYGATE_DATA_DIR: dataDir,
      PAYGATE_ROOT_KEY: keyB,
    });
    expect(tooEarly.code).not.toBe(0);
    expect(tooEarly.stderr).toContain('which is not configured');

    const rotated = await runPaygateInProcess(['kms', 'rotate'], {
      PAYGATE_DATA_DIR: dataDir,
      PAYGATE_ROOT_KEY: keyB,
      PAYGATE_ROOT_KEYS_PREVIOUS: keyA,
    });
    expect(rotated.code, rotated.stderr).toBe(0);
    expect(rotated.stdout).toContain('re-wrapped the secrets of 1 shop(s)');

    const server = await startPaygate([], {
      PAYGATE_DATA_DIR: dataDir,
      PAYGATE_ROOT_KEY: keyB,
      PORT: '0',
      PAYGATE_WEBHOOK_ALLOW_PRIVATE: '1',
    });
    try {
      const sent = await request(`${server.url}/v1/webhooks/test`, {
        method: 'POST',
        headers: { authorization: `Bearer ${merchant.api_key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ url: receiver.url }),
      });
      expect(sent.statusCode).toBe(200);
      await sent.body.dump();
      const delivered = receiver.requests.at(-1)!;
      expect(() =>
        new Webhook(merchant.webhook_secret).verify(delivered.body, delivered.headers as Record<string, string>),
      ).not.toThrow();
    } finally {
      server.child.kill('SIGTERM');
      await new Promise((resolve) => server.child.once('close', resolve));
    }
  });
});

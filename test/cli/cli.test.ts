import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request } from 'undici';
import { backends, createServerDatabase, dropServerDatabase } from '../support/databases.ts';
import { lastJsonLine, runPaygateInProcess, startPaygate } from '../support/cli.ts';

interface CreatedMerchant {
  merchant_id: string;
  shop_id: string;
  api_key: string;
  webhook_secret: string;
}

describe.each(backends)('paygate CLI on %s', (backend) => {
  let env: Record<string, string | undefined>;
  let dataDir: string;
  let databaseUrl: string | undefined;
  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'paygate-cli-'));
    databaseUrl = backend === 'postgres' ? await createServerDatabase() : undefined;
    env = { PAYGATE_DATA_DIR: dataDir, DATABASE_URL: databaseUrl, PORT: '0' };
  });
  afterAll(async () => {
    await rm(dataDir, { recursive: true, force: true });
    if (databaseUrl) await dropServerDatabase(databaseUrl);
  });

  it('migrate applies the migrations, and again reports them up to date', async () => {
    const first = await runPaygateInProcess(['migrate'], env);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toContain('applied 0001_foundation');
    const second = await runPaygateInProcess(['migrate'], env);
    expect(second.code, second.stderr).toBe(0);
    expect(second.stdout).not.toContain('applied');
    expect(second.stdout).toContain('migrations up to date');
  });

  it('merchant create --json prints the credentials, and key create/revoke manage keys that work against the API', async () => {
    const created = await runPaygateInProcess(
      ['merchant', 'create', '--name', 'CLI shop', '--email', 'cli@example.test', '--json'],
      env,
    );
    expect(created.code, created.stderr).toBe(0);
    const merchant = lastJsonLine<CreatedMerchant>(created.stdout);
    expect(merchant).toEqual({
      merchant_id: expect.stringMatching(/^mer_/),
      shop_id: expect.stringMatching(/^shop_/),
      api_key: expect.stringMatching(/^sk_test_/),
      webhook_secret: expect.stringMatching(/^whsec_/),
    });

    const keyResult = await runPaygateInProcess(
      ['key', 'create', '--shop', merchant.shop_id, '--scopes', 'payments,read', '--json'],
      env,
    );
    expect(keyResult.code, keyResult.stderr).toBe(0);
    const key = lastJsonLine<{ key_id: string; api_key: string }>(keyResult.stdout);
    expect(key.key_id).toMatch(/^key_/);

    const server = await startPaygate([], env);
    try {
      const account = async (apiKey: string) => {
        const response = await request(`${server.url}/v1/account`, { headers: { authorization: `Bearer ${apiKey}` } });
        return { status: response.statusCode, body: (await response.body.json()) as Record<string, unknown> };
      };
      expect(await account(merchant.api_key)).toMatchObject({
        status: 200,
        body: {
          shop_id: merchant.shop_id,
          mode: 'sandbox',
          scopes: ['payments', 'crypto', 'payouts', 'webhooks', 'read'],
        },
      });
      expect(await account(key.api_key)).toMatchObject({ status: 200, body: { scopes: ['payments', 'read'] } });
    } finally {
      server.child.kill('SIGTERM');
      await new Promise((resolve) => server.child.once('close', resolve));
    }

    const revoked = await runPaygateInProcess(['key', 'revoke', key.key_id], env);
    expect(revoked.code, revoked.stderr).toBe(0);
    const again = await startPaygate([], env);
    try {
      const response = await request(`${again.url}/v1/account`, {
        headers: { authorization: `Bearer ${key.api_key}` },
      });
      expect(response.statusCode).toBe(401);
      expect(await response.body.json()).toMatchObject({ error: 'unauthorized' });
    } finally {
      again.child.kill('SIGTERM');
      await new Promise((resolve) => again.child.once('close', resolve));
    }
  });

  it('merchant create --live makes a live shop with a live key', async () => {
    const created = await runPaygateInProcess(
      [
        'merchant',
        'create',
        '--name',
        'Live shop',
        '--email',
        'live@example.test',
        '--password',
        'correct horse',
        '--live',
        '--json',
      ],
      env,
    );
    expect(created.code, created.stderr).toBe(0);
    expect(lastJsonLine<CreatedMerchant>(created.stdout).api_key).toMatch(/^sk_live_/);
  });

  it.each([
    [['merchant', 'create', '--email', 'x@example.test'], '--name is required'],
    [['merchant', 'create', '--name', 'X', '--email', 'not-an-email'], 'is not an email address'],
    [
      ['merchant', 'create', '--name', 'X', '--email', 'x@example.test', '--colour', 'red'],
      "Unknown option '--colour'",
    ],
    [['key', 'create', '--shop', 'shop_x', '--scopes', 'payments,admin'], 'unknown scope "admin"'],
    [['key', 'create', '--scopes', 'read'], '--shop is required'],
    [['key', 'create', '--shop', 'shop_x'], 'paygate: --scopes is required\n'],
    [['key', 'revoke'], 'give exactly one KEY_ID'],
    [['key', 'revoke', 'key_does_not_exist'], 'no API key key_does_not_exist'],
    [['serve', '--role', 'everything'], '--role must be one of all, api, worker'],
    [['frobnicate'], 'unknown command "frobnicate"'],
  ])('%j fails with a clear message and a non-zero exit', async (args, message) => {
    const result = await runPaygateInProcess(args, env);
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain(message);
  });

  it('a bad environment variable stops the process with a message naming it', async () => {
    const result = await runPaygateInProcess(['migrate'], { ...env, PAYGATE_RATE_LIMIT_PER_MINUTE: 'lots' });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('PAYGATE_RATE_LIMIT_PER_MINUTE must be a whole number');
  });
});

describe('paygate serve on a fresh embedded database', () => {
  it('a development start (--demo) creates a demo merchant, prints and saves its key, and answers /healthz and /readyz', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'paygate-demo-'));
    try {
      const server = await startPaygate(['--demo'], { PAYGATE_DATA_DIR: dataDir, PORT: '0' });
      try {
        const credentials = JSON.parse(
          await readFile(join(dataDir, 'demo-credentials.json'), 'utf8'),
        ) as CreatedMerchant;
        expect(credentials.api_key).toMatch(/^sk_test_/);
        expect(server.output()).toContain(credentials.api_key);
        expect((await request(`${server.url}/healthz`)).statusCode).toBe(200);
        const ready = await request(`${server.url}/readyz`);
        expect(await ready.body.json()).toEqual({ status: 'ok', database: 'pglite', checks: { database: 'ok' } });
        const account = await request(`${server.url}/v1/account`, {
          headers: { authorization: `Bearer ${credentials.api_key}` },
        });
        expect(account.statusCode).toBe(200);
      } finally {
        server.child.kill('SIGTERM');
        await new Promise((resolve) => server.child.once('close', resolve));
      }
      // A second start keeps the same demo merchant and creates no other.
      const restarted = await startPaygate([], { PAYGATE_DATA_DIR: dataDir, PORT: '0', PAYGATE_DEMO: '1' });
      try {
        expect(restarted.output()).not.toContain('Demo sandbox shop created');
      } finally {
        restarted.child.kill('SIGTERM');
        await new Promise((resolve) => restarted.child.once('close', resolve));
      }
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });

  it('a production start creates no merchant and says how to create the first one', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'paygate-production-'));
    try {
      const server = await startPaygate([], { PAYGATE_DATA_DIR: dataDir, PORT: '0' });
      try {
        expect(server.output()).toContain('paygate merchant create');
        expect(server.output()).not.toContain('Demo sandbox shop created');
        expect(existsSync(join(dataDir, 'demo-credentials.json'))).toBe(false);
        expect((await request(`${server.url}/readyz`)).statusCode).toBe(200);
      } finally {
        server.child.kill('SIGTERM');
        await new Promise((resolve) => server.child.once('close', resolve));
      }
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});

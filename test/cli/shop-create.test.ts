// `paygate shop create`: a live shop beside a merchant's sandbox shop, through the real command.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CreatedMerchant } from '../../src/merchants/merchant-service.ts';
import { lastJsonLine, runPaygateInProcess, startPaygate } from '../support/cli.ts';

describe('paygate shop create (embedded database)', () => {
  let dataDir: string;
  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'paygate-shop-cli-'));
  });
  afterAll(async () => {
    await rm(dataDir, { recursive: true, force: true });
  });

  it('adds a live shop to a merchant; its key is a live key of the same merchant', async () => {
    const env = { PAYGATE_DATA_DIR: dataDir };
    const merchant = lastJsonLine<CreatedMerchant>(
      (
        await runPaygateInProcess(
          ['merchant', 'create', '--name', 'Two modes', '--email', 'two@example.test', '--json'],
          env,
        )
      ).stdout,
    );
    const created = await runPaygateInProcess(
      ['shop', 'create', '--merchant', merchant.merchant_id, '--live', '--json'],
      env,
    );
    expect(created.code, created.stderr).toBe(0);
    const shop = lastJsonLine<CreatedMerchant>(created.stdout);
    expect(shop.merchant_id).toBe(merchant.merchant_id);
    expect(shop.api_key).toMatch(/^sk_live_/);

    const missing = await runPaygateInProcess(['shop', 'create', '--live'], env);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('--merchant is required');
    const unknown = await runPaygateInProcess(['shop', 'create', '--merchant', 'merchant_nope'], env);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('No merchant merchant_nope');

    const server = await startPaygate([], { ...env, PORT: '0' });
    try {
      const account = await request(`${server.url}/v1/account`, {
        headers: { authorization: `Bearer ${shop.api_key}` },
      });
      expect(await account.body.json()).toMatchObject({ shop_id: shop.shop_id, mode: 'live' });
    } finally {
      server.child.kill('SIGTERM');
      await new Promise((resolve) => server.child.once('close', resolve));
    }
  });
});

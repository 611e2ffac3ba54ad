// `paygate shop methods list|set` changes the settings that POST /v1/payments applies.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lastJsonLine, runPaygateInProcess } from '../support/cli.ts';

describe('paygate shop methods (embedded database)', () => {
  let env: Record<string, string | undefined>;
  let dataDir: string;
  let shopId: string;

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'paygate-methods-cli-'));
    env = { PAYGATE_DATA_DIR: dataDir };
    const created = await runPaygateInProcess(
      ['merchant', 'create', '--name', 'Methods shop', '--email', 'methods@example.test', '--json'],
      env,
    );
    shopId = lastJsonLine<{ shop_id: string }>(created.stdout).shop_id;
  });
  afterAll(async () => rm(dataDir, { recursive: true, force: true }));

  it('lists the documented defaults for a shop without settings', async () => {
    const result = await runPaygateInProcess(['shop', 'methods', 'list', '--shop', shopId, '--json'], env);
    expect(result.code).toBe(0);
    expect(lastJsonLine(result.stdout)).toEqual(
      ['card', 'sbp', 'sberpay'].map((method) => ({
        method,
        enabled: true,
        min_amount: '1.00',
        max_amount: '1000000.00',
        fee_percent: '0.00',
      })),
    );
  });

  it('set switches a method off and sets its range and payer fee, and list shows it', async () => {
    const set = await runPaygateInProcess(
      [
        'shop',
        'methods',
        'set',
        '--shop',
        shopId,
        '--method',
        'sbp',
        '--disable',
        '--min',
        '10',
        '--max',
        '5000.50',
        '--fee-percent',
        '1.25',
        '--json',
      ],
      env,
    );
    expect(set.code).toBe(0);
    expect(lastJsonLine(set.stdout)).toEqual({
      method: 'sbp',
      enabled: false,
      min_amount: '10.00',
      max_amount: '5000.50',
      fee_percent: '1.25',
    });
    const list = await runPaygateInProcess(['shop', 'methods', 'list', '--shop', shopId], env);
    expect(list.stdout).toMatch(/^METHOD +ENABLED +MIN RUB +MAX RUB +PAYER FEE %$/m);
    expect(list.stdout).toMatch(/^sbp +off +10\.00 +5000\.50 +1\.25$/m);
  });

  it('refuses a bad amount or fee with usage exit code 2, and an unknown method with 1', async () => {
    expect(
      (
        await runPaygateInProcess(
          ['shop', 'methods', 'set', '--shop', shopId, '--method', 'card', '--min', '1.001'],
          env,
        )
      ).code,
    ).toBe(2);
    expect(
      (
        await runPaygateInProcess(
          ['shop', 'methods', 'set', '--shop', shopId, '--method', 'card', '--fee-percent', 'x'],
          env,
        )
      ).code,
    ).toBe(2);
    const unknown = await runPaygateInProcess(
      ['shop', 'methods', 'set', '--shop', shopId, '--method', 'cash', '--enable'],
      env,
    );
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('unknown method');
  });
});

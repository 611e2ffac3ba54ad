// `paygate shop connector set|list|remove`: refusals name what is wrong, and a
// shop without connections lists none. (The providers of this build are tested
// with their own simulators; saving through a provider is in live-acquiring.test.ts.)
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lastJsonLine, runPaygateInProcess } from '../support/cli.ts';

describe('paygate shop connector (embedded database)', () => {
  let env: Record<string, string | undefined>;
  let dataDir: string;
  let shopId: string;

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'paygate-connector-cli-'));
    env = { PAYGATE_DATA_DIR: dataDir };
    const created = await runPaygateInProcess(
      ['merchant', 'create', '--name', 'Connector shop', '--email', 'connector@example.test', '--live', '--json'],
      env,
    );
    shopId = lastJsonLine<{ shop_id: string }>(created.stdout).shop_id;
  });
  afterAll(async () => rm(dataDir, { recursive: true, force: true }));

  it('list shows no connections for a new shop', async () => {
    const result = await runPaygateInProcess(['shop', 'connector', 'list', '--shop', shopId, '--json'], env);
    expect(result.code).toBe(0);
    expect(lastJsonLine(result.stdout)).toEqual([]);
  });

  it('set with an unknown provider is a usage error naming it', async () => {
    const result = await runPaygateInProcess(
      ['shop', 'connector', 'set', '--shop', shopId, '--provider', 'nobank', '--credential', 'key=x'],
      env,
    );
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('Unknown acquirer provider "nobank"');
  });

  it('a credential not in NAME=VALUE form is a usage error', async () => {
    const result = await runPaygateInProcess(
      ['shop', 'connector', 'set', '--shop', shopId, '--provider', 'nobank', '--credential', 'novalue'],
      env,
    );
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--credential takes NAME=VALUE');
  });

  it('remove of a connection the shop does not have is a usage error', async () => {
    const result = await runPaygateInProcess(
      ['shop', 'connector', 'remove', '--shop', shopId, '--connection', 'acq_nope'],
      env,
    );
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('has no acquirer connection acq_nope');
  });
});

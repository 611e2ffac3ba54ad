// One sandbox chain for split roles: `paygate serve --role api` and `--role
// worker` as two real processes on one PostgreSQL database and one data
// folder. The worker serves the simulated chain and records its URL; the API
// process starts none and drives the worker's through the control surface, so a
// test-helper deposit made through the API is seen and credited by the worker,
// and a payout made through the API is signed and sent by the worker's executor.
import type { ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { createCryptoChain } from '../../../src/crypto/chain/crypto-chain.ts';
import { SANDBOX_CHAIN_URL_FILE } from '../../../src/crypto/chain/sandbox-chain.ts';
import { startSimulatedChainServer } from '../../../src/crypto/simchain/chain-server.ts';
import { createSimulatorControl } from '../../../src/crypto/simchain/control-client.ts';
import { loadConfig } from '../../../src/config.ts';
import { createLogger } from '../../../src/logger.ts';
import { lastJsonLine, runPaygateInProcess, startPaygate, startPaygateWorker } from '../../support/cli.ts';
import { createServerDatabase, dropServerDatabase, TEST_DATABASE_URL } from '../../support/databases.ts';

async function stop(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null) return;
  const closed = new Promise((resolve) => child.once('close', resolve));
  child.kill('SIGTERM');
  await closed;
}

describe.runIf(TEST_DATABASE_URL)('split roles on postgres share one sandbox chain', () => {
  it(
    'a test-helper deposit through the API process is credited by the worker process, a payout through it is sent by the worker; a restarted worker keeps the URL',
    { timeout: 180_000 },
    async () => {
      const databaseUrl = await createServerDatabase();
      const dataDir = await mkdtemp(join(tmpdir(), 'paygate-split-'));
      const env = {
        DATABASE_URL: databaseUrl,
        PAYGATE_DATA_DIR: dataDir,
        PORT: '0',
        PAYGATE_RATE_LIMIT_PER_MINUTE: '100000',
      };
      let api: ChildProcess | undefined;
      let worker: ChildProcess | undefined;
      try {
        const migrated = await runPaygateInProcess(['migrate'], env);
        expect(migrated.code, migrated.stderr).toBe(0);
        const created = await runPaygateInProcess(
          ['merchant', 'create', '--name', 'Split roles', '--email', 'split@example.com', '--json'],
          env,
        );
        expect(created.code, created.stderr).toBe(0);
        const { api_key: key } = lastJsonLine<{ api_key: string }>(created.stdout);
        const started = await startPaygate(['--role', 'api'], env);
        api = started.child;
        const call = async (method: 'GET' | 'POST', path: string, body?: unknown) => {
          const response = await request(`${started.url}${path}`, {
            method,
            headers: {
              authorization: `Bearer ${key}`,
              ...(body === undefined ? {} : { 'content-type': 'application/json' }),
            },
            ...(body === undefined ? {} : { body: JSON.stringify(body) }),
          });
          return { status: response.statusCode, json: (await response.body.json()) as Record<string, unknown> };
        };

        // The API process derives addresses without any chain; it starts none of its own.
        const invoice = await call('POST', '/v1/crypto/invoices', {
          external_id: 'split-1',
          amount: '25.5',
          network: 'TRC20',
        });
        expect(invoice.status, JSON.stringify(invoice.json)).toBe(201);
        const address = invoice.json['address'] as string;
        const early = await call('POST', '/v1/test_helpers/crypto/deposits', { address, amount: '25.5' });
        expect(early.status).toBe(503);
        expect(early.json['error']).toBe('service_unavailable');
        expect(early.json['message']).toContain('--role worker');

        // The worker serves the chain once there is an address to watch (its watcher's first pass), and
        // records where; a helper call right after the worker starts waits for it instead of failing.
        const workerStarted = await startPaygateWorker([], env);
        worker = workerStarted.child;
        const deposit = await call('POST', '/v1/test_helpers/crypto/deposits', { address, amount: '25.5' });
        expect(deposit.status, JSON.stringify(deposit.json)).toBe(200);
        const urlFile = join(dataDir, SANDBOX_CHAIN_URL_FILE);
        expect(await readFile(urlFile, 'utf8')).toMatch(/^http:\/\/127\.0\.0\.1:\d+\n$/);
        const chainUrl = (await readFile(urlFile, 'utf8')).trim();
        const mined = await call('POST', '/v1/test_helpers/crypto/blocks', { count: 19 });
        expect(mined.status).toBe(200);
        // The API's helpers moved the chain the worker serves (read here straight from it).
        const info = await createSimulatorControl(chainUrl).info();
        expect(info.headBlock).toBeGreaterThanOrEqual(mined.json['head_block'] as number);
        expect(await createSimulatorControl(chainUrl).balances(address as never)).toMatchObject({ usdt: 25_500_000n });

        // The worker's watcher (every 3 s) sees the transfer and credits it once final.
        const invoiceId = invoice.json['invoice_id'] as string;
        await expect
          .poll(async () => (await call('GET', `/v1/crypto/invoices/${invoiceId}`)).json['status'], {
            timeout: 30_000,
            interval: 500,
          })
          .toBe('paid');
        const balance = await call('GET', '/v1/crypto/balance');
        expect(JSON.stringify(balance.json)).toContain('25.5');

        // A payout made through the API process is signed and sent by the worker's executor, once.
        const recipient = 'TGkWdpawVNfeset3P6uTBbLaPY7nZVZvXY';
        const before = (await createSimulatorControl(chainUrl).balances(recipient as never)).usdt;
        const payout = await call('POST', '/v1/crypto/payouts', {
          external_id: 'split-payout-1',
          network: 'TRC20',
          amount: '10',
          address: recipient,
        });
        expect(payout.status, JSON.stringify(payout.json)).toBe(201);
        const payoutPath = `/v1/crypto/payouts/${payout.json['payout_id'] as string}`;
        await expect
          .poll(async () => (await call('GET', payoutPath)).json['status'], { timeout: 30_000, interval: 500 })
          .toBe('processing');
        await call('POST', '/v1/test_helpers/crypto/blocks', { count: 20 });
        await expect
          .poll(async () => (await call('GET', payoutPath)).json['status'], { timeout: 30_000, interval: 500 })
          .toBe('completed');
        expect((await createSimulatorControl(chainUrl).balances(recipient as never)).usdt - before).toBe(10_000_000n);

        // A restarted worker serves the saved chain on the same port: the API process keeps driving it.
        await stop(worker);
        worker = (await startPaygateWorker([], env)).child;
        await expect
          .poll(async () => (await call('POST', '/v1/test_helpers/crypto/blocks', { count: 1 })).status, {
            timeout: 20_000,
            interval: 300,
          })
          .toBe(200);
        expect((await readFile(urlFile, 'utf8')).trim()).toBe(chainUrl);
      } finally {
        await stop(api);
        await stop(worker);
        await dropServerDatabase(databaseUrl);
        await rm(dataDir, { recursive: true, force: true });
      }
    },
  );
});

describe('finding the sandbox chain', () => {
  const config = loadConfig({ LOG_LEVEL: 'silent' });
  const logger = createLogger(config);
  const cleanups: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });
  const folder = async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'paygate-sandbox-chain-'));
    cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
    return dataDir;
  };

  it('an API-role chain handle waits (503) for a serving one, then drives the chain it recorded; a second server reuses it', async () => {
    const dataDir = await folder();
    const api = createCryptoChain({ config, dataDir, logger, sandboxServes: false, sandboxDiscoveryWaitMs: 0 });
    cleanups.push(() => api.close());
    // Addresses need no chain.
    const access = await api.forMode('sandbox');
    expect(access.addressKey.address(0)).toMatch(/^T/);
    await expect(api.sandboxControl()).rejects.toMatchObject({ code: 'service_unavailable' });
    await expect(access.node.getHeadBlock()).rejects.toMatchObject({ code: 'service_unavailable' });

    const worker = createCryptoChain({ config, dataDir, logger, sandboxClock: 'manual' });
    cleanups.push(() => worker.close());
    const served = await worker.sandboxChain();
    expect((await readFile(join(dataDir, SANDBOX_CHAIN_URL_FILE), 'utf8')).trim()).toBe(served.url);

    const control = await api.sandboxControl();
    expect(control.url).toBe(served.url);
    await control.mine(5);
    expect(served.chain.head.number).toBe(5);
    expect((await access.node.getHeadBlock()).number).toBe(5);
    await expect(api.sandboxChain()).rejects.toThrow(/another process/);

    // Another serving process sharing the data folder finds the live chain instead of starting a second one.
    const secondWorker = createCryptoChain({ config, dataDir, logger, sandboxClock: 'manual' });
    cleanups.push(() => secondWorker.close());
    expect((await secondWorker.sandboxControl()).url).toBe(served.url);
    expect((await (await secondWorker.forMode('sandbox')).node.getHeadBlock()).number).toBe(5);
  });

  it('PAYGATE_SANDBOX_CHAIN_URL: every role drives that chain and none starts its own', async () => {
    const external = await startSimulatedChainServer({ seed: 'external sandbox chain' });
    cleanups.push(() => external.close());
    const dataDir = await folder();
    for (const sandboxServes of [true, false]) {
      const chain = createCryptoChain({
        config: { ...config, sandboxChainUrl: external.url },
        dataDir,
        logger,
        sandboxServes,
        sandboxClock: 'manual',
        sandboxDiscoveryWaitMs: 0,
      });
      cleanups.push(() => chain.close());
      await (await chain.sandboxControl()).mine(2);
      expect((await (await chain.forMode('sandbox')).node.getHeadBlock()).number).toBe(external.chain.head.number);
      await expect(chain.sandboxChain()).rejects.toThrow(/another process/);
    }
    expect(external.chain.head.number).toBe(4);
    await expect(readFile(join(dataDir, SANDBOX_CHAIN_URL_FILE), 'utf8')).rejects.toThrow(/ENOENT/);
  });
});

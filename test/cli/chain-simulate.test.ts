// `paygate chain simulate`: the simulated TRON chain as a process of its own,
// following the wall clock; the production node client reads it unchanged,
// and SIGTERM stops it with exit code 0.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { afterEach, describe, expect, it } from 'vitest';
import { createTronNodeClient } from '../../src/crypto/tron/node-client.ts';
import { tronAddress } from '../../src/crypto/tron/address.ts';
import { USDT_CONTRACT_MAINNET } from '../../src/crypto/tron/trc20-usdt.ts';
import { listeningUrl, PAYGATE_BIN, spawnUntilReady } from '../support/cli.ts';

describe('paygate chain simulate', () => {
  let stop: (() => void) | undefined;
  afterEach(() => stop?.());

  it('serves a node that produces a block every 3 s and stops cleanly on SIGTERM', async () => {
    const {
      child,
      ready: url,
      output,
    } = await spawnUntilReady([PAYGATE_BIN, 'chain', 'simulate', '--port', '0', '--seed', 'cli-test'], listeningUrl, {
      onSpawn: (spawned) => (stop = () => spawned.kill('SIGKILL')),
    });
    const client = createTronNodeClient({ urls: [url], usdtContract: USDT_CONTRACT_MAINNET, timeoutMs: 30_000 });
    const first = await client.getHeadBlock();
    await expect
      .poll(async () => (await client.getHeadBlock()).number, { timeout: 60_000, interval: 250 })
      .toBeGreaterThan(first.number);
    const solid = await client.getSolidifiedBlock();
    expect(solid.number).toBeLessThanOrEqual(Math.max(0, (await client.getHeadBlock()).number - 18));
    await client.close();
    child.kill('SIGTERM');
    const [code] = await once(child, 'close');
    stop = undefined;
    expect(code).toBe(0);
    expect(output()).toContain('simulated TRON chain stopped');
  });

  it("--network nile runs Nile's TetherToken: decimals() answers on Nile's contract address, not on mainnet's", async () => {
    const {
      child,
      ready: url,
      output,
    } = await spawnUntilReady(
      [PAYGATE_BIN, 'chain', 'simulate', '--port', '0', '--seed', 'cli-nile', '--network', 'nile'],
      listeningUrl,
      { onSpawn: (spawned) => (stop = () => spawned.kill('SIGKILL')) },
    );
    expect(output()).toContain('(nile, USDT TXYZopYRdj2D9XRtbG411XZZ3kM5VkAeBf)');
    const nile = createTronNodeClient({
      urls: [url],
      usdtContract: tronAddress('TXYZopYRdj2D9XRtbG411XZZ3kM5VkAeBf'),
      timeoutMs: 30_000,
    });
    expect(await nile.getUsdtDecimals()).toBe(6);
    await nile.close();
    // Mainnet's contract does not exist on it.
    const mainnet = createTronNodeClient({ urls: [url], usdtContract: USDT_CONTRACT_MAINNET, timeoutMs: 30_000 });
    await expect(mainnet.getUsdtDecimals()).rejects.toThrow();
    await mainnet.close();
    child.kill('SIGTERM');
    const [code] = await once(child, 'close');
    stop = undefined;
    expect(code).toBe(0);
  });

  it('--network refuses anything but mainnet or nile', async () => {
    const child = spawn(process.execPath, [PAYGATE_BIN, 'chain', 'simulate', '--network', 'shasta'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    stop = () => child.kill('SIGKILL');
    let errors = '';
    child.stderr.on('data', (chunk: Buffer) => (errors += chunk.toString()));
    const [code] = await once(child, 'close');
    stop = undefined;
    expect(code).toBe(2);
    expect(errors).toContain('--network must be mainnet or nile');
  });
});

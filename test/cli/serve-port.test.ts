// `paygate serve --port N` without PORT: the payment_url of a new payment points
// at port N (the default public URL follows the chosen port), and an explicit
// PAYGATE_PUBLIC_URL is kept as it is. A port in use ends the process (exit 1)
// after it has released what it opened.
import { spawn } from 'node:child_process';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backends, createServerDatabase, dropServerDatabase } from '../support/databases.ts';
import { lastJsonLine, PAYGATE_BIN, runPaygate, startPaygate } from '../support/cli.ts';
import { TEST_ROOT_KEY } from '../support/keyring.ts';
import { freePort } from '../support/free-port.ts';

describe.each(backends)('paygate serve --port on %s', (backend) => {
  let env: Record<string, string | undefined>;
  let dataDir: string;
  let databaseUrl: string | undefined;
  let apiKey: string;
  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'paygate-port-'));
    databaseUrl = backend === 'postgres' ? await createServerDatabase() : undefined;
    // No PORT: only --port names the port.
    env = { PAYGATE_DATA_DIR: dataDir, DATABASE_URL: databaseUrl };
    const created = await runPaygate(
      ['merchant', 'create', '--name', 'Port shop', '--email', 'port@example.test', '--json'],
      env,
    );
    expect(created.code).toBe(0);
    apiKey = lastJsonLine<{ api_key: string }>(created.stdout).api_key;
  });
  afterAll(async () => {
    await rm(dataDir, { recursive: true, force: true });
    if (databaseUrl) await dropServerDatabase(databaseUrl);
  });

  async function paymentUrlServedOn(port: number, extraEnv: Record<string, string> = {}): Promise<string> {
    const server = await startPaygate(['--port', String(port)], { ...env, ...extraEnv });
    try {
      expect(server.url).toBe(`http://127.0.0.1:${port}`);
      const response = await request(`${server.url}/v1/payments`, {
        method: 'POST',
        headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ amount: 100, currency: 'RUB' }),
      });
      expect(response.statusCode).toBe(201);
      return ((await response.body.json()) as { payment_url: string }).payment_url;
    } finally {
      server.child.kill('SIGTERM');
      await new Promise((resolve) => server.child.once('close', resolve));
    }
  }

  it('without PAYGATE_PUBLIC_URL, payment_url points at the --port the gateway listens on', async () => {
    const port = await freePort();
    expect(await paymentUrlServedOn(port)).toMatch(new RegExp(`^http://localhost:${port}/pay/[A-Za-z0-9]+$`));
  });

  it('with PAYGATE_PUBLIC_URL, payment_url keeps it whatever the port', async () => {
    const port = await freePort();
    expect(await paymentUrlServedOn(port, { PAYGATE_PUBLIC_URL: 'https://pay.example.com' })).toMatch(
      /^https:\/\/pay\.example\.com\/pay\/[A-Za-z0-9]+$/,
    );
  });

  it('on a port already in use, exits 1 by itself after closing what it opened, naming the address, and leaves the data folder unlocked', async () => {
    const occupied = createServer();
    await new Promise<void>((resolve) => occupied.listen(0, '127.0.0.1', resolve));
    const { port } = occupied.address() as AddressInfo;
    try {
      const child = spawn(process.execPath, [PAYGATE_BIN, 'serve', '--port', String(port)], {
        env: { PATH: process.env.PATH, LOG_LEVEL: 'warn', PAYGATE_ROOT_KEY: TEST_ROOT_KEY, ...env } as Record<
          string,
          string
        >,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stderr = '';
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      child.stdout.resume();
      // It exits by itself: a process that stayed alive would hold the test to its timeout.
      const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
      expect(code).toBe(1);
      expect(stderr).toContain(`PORT ${port} on 127.0.0.1 is in use by another process`);
      expect(stderr).not.toContain('    at ');
      if (backend === 'pglite')
        await expect(stat(join(dataDir, 'paygate.lock'))).rejects.toMatchObject({ code: 'ENOENT' });
    } finally {
      await new Promise((resolve) => occupied.close(resolve));
    }
  });
});

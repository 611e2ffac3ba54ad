// `paygate listen` as a child process against a real gateway on a port: each
// event made by an API action reaches a real local receiver that verifies it
// with the standardwebhooks package and the secret the command printed, one
// line per event is printed, and after the connection is cut it resumes with
// exactly the events it missed; a listen started again resumes where the last
// one stopped (its state file), or from now with --from-now or a stale point.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listenSecretFor } from '../../src/cli/listen-commands.ts';
import { createTestApp, type TestApp } from '../support/app.ts';
import { PAYGATE_BIN } from '../support/cli.ts';
import { backends } from '../support/databases.ts';
import { eventually } from '../support/eventually.ts';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.ts';

interface Verified {
  readonly id: string;
  readonly type: string;
}

/** A developer's receiver: verifies every request with the given secret, answers 204 (or 400 when it fails). */
async function startVerifyingReceiver(secret: () => string) {
  const verified: Verified[] = [];
  const rejected: string[] = [];
  const server: Server = createServer((request, response) => {
    let body = '';
    request.setEncoding('utf8');
    request.on('data', (chunk: string) => (body += chunk));
    request.on('end', () => {
      try {
        const event = new Webhook(secret()).verify(body, {
          'webhook-id': String(request.headers['webhook-id']),
          'webhook-timestamp': String(request.headers['webhook-timestamp']),
          'webhook-signature': String(request.headers['webhook-signature']),
        }) as Verified;
        verified.push({ id: event.id, type: event.type });
        response.writeHead(204).end();
      } catch (error) {
        rejected.push(String(error));
        response.writeHead(400).end();
      }
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    verified,
    rejected,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe.each(backends)('paygate listen on %s', (backend) => {
  let testApp: TestApp;
  let baseUrl: string;
  let proxy: TcpProxy;
  let child: ChildProcess | undefined;
  let receiver: Awaited<ReturnType<typeof startVerifyingReceiver>>;
  let printedSecret = '';
  let stdout = '';
  let stderr = '';

  let stateHome: string;

  beforeAll(async () => {
    stateHome = await mkdtemp(join(tmpdir(), 'paygate-listen-state-'));
    testApp = await createTestApp(backend);
    testApp.clock.set(new Date());
    baseUrl = await testApp.app.listen({ port: 0, host: '127.0.0.1' });
    proxy = await startTcpProxy(baseUrl);
    receiver = await startVerifyingReceiver(() => printedSecret);
  });
  afterAll(async () => {
    if (child && child.exitCode === null) {
      child.kill('SIGTERM');
      await once(child, 'close');
    }
    await receiver.close();
    await proxy.close();
    await testApp.close();
    await rm(stateHome, { recursive: true, force: true });
  });

  async function api(apiKey: string, method: 'GET' | 'POST', url: string, payload?: object) {
    const response = await fetch(`${baseUrl}${url}`, {
      method,
      headers: { authorization: `Bearer ${apiKey}`, ...(payload ? { 'content-type': 'application/json' } : {}) },
      body: payload ? JSON.stringify(payload) : undefined,
    });
    expect(response.status, url).toBeLessThan(300);
    return response.json();
  }

  /** A paid payment with a callback_url (a payment without one has no events); no worker delivers here. */
  async function paidPayment(apiKey: string): Promise<void> {
    const payment = await api(apiKey, 'POST', '/v1/payments', {
      amount: 100,
      currency: 'RUB',
      callback_url: 'http://127.0.0.1:9/shop-endpoint',
    });
    await api(apiKey, 'POST', `/v1/test_helpers/payments/${payment.payment_id}/pay`);
  }

  async function storedIds(apiKey: string): Promise<string[]> {
    const page = await api(apiKey, 'GET', '/v1/webhooks/events?limit=100');
    return page.data.map((event: { id: string }) => event.id).reverse();
  }

  it('forwards each event signed with the printed listen secret, prints a line per event, and resumes after a cut', async () => {
    const merchant = await testApp.createMerchant();
    const key = await testApp.createKey(merchant.shop_id, ['webhooks']);
    child = spawn(
      process.execPath,
      [PAYGATE_BIN, 'listen', '--url', proxy.url, '--forward-to', receiver.url, '--events', 'payment.*'],
      {
        env: { PATH: process.env.PATH, LOG_LEVEL: 'warn', PAYGATE_API_KEY: key, XDG_STATE_HOME: stateHome },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    printedSecret = await eventually(
      () => /secret[^:]*: (whsec_\S+)/.exec(stderr)?.[1] ?? '',
      (secret) => secret !== '',
    );
    expect(printedSecret).toBe(listenSecretFor(key));
    // The stream starts from now: events are made once it is connected.
    await eventually(
      () => stderr,
      (text) => text.includes('paygate listen: connected'),
    );
    for (let index = 0; index < 3; index++) await paidPayment(merchant.api_key);
    await eventually(
      () => receiver.verified.length,
      (count) => count >= 3,
    );
    expect(receiver.rejected).toEqual([]);
    expect(receiver.verified.map((event) => event.id)).toEqual(await storedIds(merchant.api_key));
    const lines = stdout.split('\n').filter((line) => line.includes('payment.paid'));
    expect(lines).toHaveLength(3);
    for (const line of lines) expect(line).toMatch(/^\S+Z {2}payment\.paid {2}evt_\S+ {2}--> 204 \(\d+ ms\)$/);

    // The connection breaks: what is made meanwhile arrives after reconnecting, each event once.
    await proxy.cut();
    for (let index = 0; index < 2; index++) await paidPayment(merchant.api_key);
    await eventually(
      () => stderr,
      (text) => text.includes('reconnecting'),
    );
    await proxy.restore();
    await eventually(
      () => stderr,
      (text) => /connected, resuming after evt_/.test(text),
    );
    await eventually(
      () => receiver.verified.length,
      (count) => count >= 5,
    );
    expect(receiver.verified.map((event) => event.id)).toEqual(await storedIds(merchant.api_key));
    expect(receiver.rejected).toEqual([]);

    child.kill('SIGTERM');
    const [code] = await once(child, 'close');
    expect(code).toBe(0);
  });

  it('stops with exit code 1 when the key lacks the webhooks scope', async () => {
    const merchant = await testApp.createMerchant();
    const key = await testApp.createKey(merchant.shop_id, ['payments']);
    const refused = spawn(process.execPath, [PAYGATE_BIN, 'listen', '--url', baseUrl, '--forward-to', receiver.url], {
      env: { PATH: process.env.PATH, LOG_LEVEL: 'warn', PAYGATE_API_KEY: key, XDG_STATE_HOME: stateHome },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let errors = '';
    refused.stderr!.on('data', (chunk: Buffer) => (errors += chunk.toString()));
    const [code] = await once(refused, 'close');
    expect(code).toBe(1);
    expect(errors).toContain('403 forbidden');
  });

  it('a listen started again resumes after the last event the stopped one forwarded; --from-now and a stale resume point start from now', async () => {
    const merchant = await testApp.createMerchant();
    const key = await testApp.createKey(merchant.shop_id, ['webhooks']);
    const ownState = await mkdtemp(join(tmpdir(), 'paygate-listen-state-'));
    const own = await startVerifyingReceiver(() => listenSecretFor(key));
    /** A listen of this key until `stop()`; its stderr so far. */
    function startListen(...extra: string[]) {
      const process_ = spawn(
        process.execPath,
        [PAYGATE_BIN, 'listen', '--url', baseUrl, '--forward-to', own.url, '--events', 'payment.*', ...extra],
        {
          env: { PATH: process.env.PATH, LOG_LEVEL: 'warn', PAYGATE_API_KEY: key, XDG_STATE_HOME: ownState },
          stdio: ['ignore', 'ignore', 'pipe'],
        },
      );
      let errors = '';
      process_.stderr!.on('data', (chunk: Buffer) => (errors += chunk.toString()));
      return {
        errors: () => errors,
        connected: () =>
          eventually(
            () => errors,
            (text) => text.includes('paygate listen: connected'),
          ),
        async stop() {
          process_.kill('SIGTERM');
          const [code] = await once(process_, 'close');
          expect(code).toBe(0);
        },
      };
    }
    const forwarded = (count: number) =>
      eventually(
        () => own.verified.length,
        (seen) => seen >= count,
      );
    try {
      const first = startListen();
      await first.connected();
      await paidPayment(merchant.api_key);
      await forwarded(1);
      await first.stop();
      const stateFiles = await readdir(join(ownState, 'paygate', 'listen'));
      expect(stateFiles).toHaveLength(1);

      // Stopped: three events are made; the next listen forwards those three, each once.
      for (let index = 0; index < 3; index++) await paidPayment(merchant.api_key);
      const second = startListen();
      await eventually(second.errors, (text) => /connected, resuming after evt_/.test(text));
      expect(second.errors()).toContain(`the last listen of this shop stopped after ${own.verified[0]!.id}`);
      await forwarded(4);
      expect(own.verified.map((event) => event.id)).toEqual(await storedIds(merchant.api_key));
      await second.stop();

      // --from-now: the saved point is not used; only what comes after connecting is forwarded.
      await paidPayment(merchant.api_key);
      const fromNow = startListen('--from-now');
      await fromNow.connected();
      expect(fromNow.errors()).not.toContain('resuming after');
      await paidPayment(merchant.api_key);
      await forwarded(5);
      const stored = await storedIds(merchant.api_key);
      expect(own.verified.map((event) => event.id)).toEqual([...stored.slice(0, 4), stored[5]]);
      await fromNow.stop();

      // A resume point the stream does not have (older than it keeps): 400, a warning, then from now.
      const file = join(ownState, 'paygate', 'listen', stateFiles[0]!);
      const account = await api(key, 'GET', '/v1/account');
      await writeFile(
        file,
        JSON.stringify({
          gateway_url: baseUrl,
          shop_id: account.shop_id,
          last_event_id: 'evt_0000000000000000000000000',
          saved_at: new Date().toISOString(),
        }),
      );
      const stale = startListen();
      await eventually(
        stale.errors,
        (text) => /warning: .* starting from now/.test(text) && text.includes('connected'),
      );
      await paidPayment(merchant.api_key);
      await forwarded(6);
      expect(own.verified.at(-1)!.id).toBe((await storedIds(merchant.api_key)).at(-1));
      await stale.stop();
      expect(own.rejected).toEqual([]);
    } finally {
      await own.close();
      await rm(ownState, { recursive: true, force: true });
    }
  });
});

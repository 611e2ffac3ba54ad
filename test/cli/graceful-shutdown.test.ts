// `paygate serve` on SIGTERM: stops accepting, lets a webhook delivery that is
// in flight finish and be recorded, then exits 0; past PAYGATE_SHUTDOWN_TIMEOUT_MS
// it exits 1 and the unfinished delivery stays queued for a retry.
import type { ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { PAYGATE_BIN, startPaygate } from '../support/cli.ts';
import { startReceiver, type Answer, type Receiver } from '../webhooks/receiver.ts';

interface Running {
  readonly child: ChildProcess;
  readonly url: string;
  readonly output: () => string;
}

function exited(child: ChildProcess): Promise<{ code: number | null }> {
  return new Promise((resolve) => child.once('exit', (code) => resolve({ code })));
}

/** Asks until `probe` holds; the test's timeout is the only bound. */
async function until(probe: () => boolean): Promise<void> {
  while (!probe()) await new Promise((resolve) => setTimeout(resolve, 20));
}

describe('paygate serve shuts down gracefully on SIGTERM (embedded database)', () => {
  let dataDir: string;
  let receiver: Receiver;
  const env = () => ({ PAYGATE_DATA_DIR: dataDir, PORT: '0', PAYGATE_WEBHOOK_ALLOW_PRIVATE: '1', PAYGATE_DEMO: '1' });

  beforeEach(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'paygate-shutdown-'));
  });
  afterEach(async () => {
    await receiver?.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  async function startWithPaidPayment(
    answer: Answer,
    extraEnv: Record<string, string> = {},
  ): Promise<{ server: Running; apiKey: string }> {
    receiver = await startReceiver(() => answer);
    const server = await startPaygate([], { ...env(), ...extraEnv });
    const { api_key: apiKey } = JSON.parse(await readFile(join(dataDir, 'demo-credentials.json'), 'utf8')) as {
      api_key: string;
    };
    const headers = { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' };
    const created = await request(`${server.url}/v1/payments`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ amount: 100, currency: 'RUB', callback_url: receiver.url }),
    });
    expect(created.statusCode).toBe(201);
    const { payment_id: paymentId } = (await created.body.json()) as { payment_id: string };
    const paid = await request(`${server.url}/v1/test_helpers/payments/${paymentId}/pay`, {
      method: 'POST',
      headers: { authorization: headers.authorization },
    });
    expect(paid.statusCode).toBe(200);
    await paid.body.dump();
    // The worker has sent payment.paid: the delivery is in flight.
    await until(() => receiver.requests.length === 1);
    return { server, apiKey };
  }

  async function eventStatusAfterRestart(apiKey: string): Promise<string> {
    const restarted = await startPaygate([], env());
    try {
      const response = await request(`${restarted.url}/v1/webhooks/events?limit=1`, {
        headers: { authorization: `Bearer ${apiKey}` },
      });
      const { data } = (await response.body.json()) as { data: Array<{ type: string; status: string }> };
      expect(data[0]?.type).toBe('payment.paid');
      return data[0]!.status;
    } finally {
      restarted.child.kill('SIGKILL');
      await exited(restarted.child);
    }
  }

  it('finishes the delivery in flight, records it, and exits 0, however many SIGTERMs arrive', async () => {
    let answerDelivery!: () => void;
    const deliveryAnswered = new Promise<void>((resolve) => (answerDelivery = resolve));
    // At info the gateway logs when it starts shutting down.
    const { server, apiKey } = await startWithPaidPayment(
      { status: 200, answerWhen: deliveryAnswered },
      { LOG_LEVEL: 'info' },
    );
    let answered = false;
    const exit = exited(server.child).then((result) => ({ ...result, answered }));
    // Twice, as a process group signal reaches both a wrapper that forwards it and the gateway.
    server.child.kill('SIGTERM');
    server.child.kill('SIGTERM');
    // The receiver answers only once the gateway is shutting down with the delivery in flight.
    await until(() => server.output().includes('shutting down') || server.child.exitCode !== null);
    expect(server.child.exitCode, server.output()).toBeNull();
    answered = true;
    answerDelivery();
    const { code, answered: answeredBeforeExit } = await exit;
    expect(code, server.output()).toBe(0);
    expect(server.output()).toContain('paygate stopped');
    // The process waited for the receiver's answer instead of cutting it off.
    expect(answeredBeforeExit).toBe(true);
    expect(receiver.requests).toHaveLength(1);
    expect(await eventStatusAfterRestart(apiKey)).toBe('delivered');
  });

  it('past PAYGATE_SHUTDOWN_TIMEOUT_MS exits 1, and the unfinished delivery is still queued', async () => {
    const { server, apiKey } = await startWithPaidPayment({ hang: true }, { PAYGATE_SHUTDOWN_TIMEOUT_MS: '1000' });
    const exit = exited(server.child);
    server.child.kill('SIGTERM');
    const { code } = await exit;
    expect(code).toBe(1);
    // Cut short by the setting (its own message), not by the 10 s delivery timeout.
    expect(server.output()).toContain('shutdown cut short: in-flight work did not finish within 1000 ms');
    expect(await eventStatusAfterRestart(apiKey)).toBe('pending');
  });

  it('a SIGTERM that arrives while the gateway is still starting is kept: the start finishes, then it stops cleanly', async () => {
    const child = spawn(process.execPath, [PAYGATE_BIN, 'serve'], {
      env: { ...process.env, PAYGATE_DATA_DIR: dataDir, PORT: '0', LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    let signalled = false;
    const exit = exited(child);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      // Printed before the HTTP port opens: the signal lands mid-start, as an orchestrator's may
      // once /readyz answers but the workers and the admin socket are not up yet.
      if (!signalled && output.includes('No merchant yet')) {
        signalled = true;
        child.kill('SIGTERM');
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    const { code } = await exit;
    expect(signalled, output).toBe(true);
    expect(code, output).toBe(0);
    expect(output).toContain('paygate listening on');
    expect(output).toContain('paygate stopped');
  });
});

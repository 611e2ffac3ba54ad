// `paygate trigger EVENT` against a real gateway (`paygate serve` in a child
// process, on the test's database), itself run as a child process with only the
// gateway's URL and a sandbox key: every event kind of the seed is made through
// the public API and the test helpers, appears in GET /v1/webhooks/events with
// the data of the objects it made, and reaches a real receiver on loopback signed
// with the shop's secret (verified with standardwebhooks). A live key is refused
// before anything is made.
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { commands } from '../../src/cli/commands.ts';
import { INVOICE_OUTCOMES, TRIGGER_KINDS } from '../../src/cli/remote/trigger-scenarios.ts';
import { backends, createServerDatabase, dropServerDatabase } from '../support/databases.ts';
import { lastJsonLine, runPaygate, startPaygate } from '../support/cli.ts';

interface Delivery {
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

/** A webhook receiver on loopback: every delivery kept by its webhook-id; `next(id, n)` waits for the n-th of one. */
function startReceiver(): Promise<{
  server: Server;
  url: string;
  delivered(id: string, count: number): Promise<Delivery[]>;
}> {
  const byId = new Map<string, Delivery[]>();
  const waiters: Array<() => void> = [];
  const server = createServer((request, response) => {
    let body = '';
    request.setEncoding('utf8');
    request.on('data', (chunk: string) => (body += chunk));
    request.on('end', () => {
      const id = String(request.headers['webhook-id']);
      byId.set(id, [...(byId.get(id) ?? []), { headers: request.headers, body }]);
      response.writeHead(200).end('ok');
      for (const wake of waiters.splice(0)) wake();
    });
  });
  const delivered = async (id: string, count: number): Promise<Delivery[]> => {
    while ((byId.get(id)?.length ?? 0) < count) await new Promise<void>((resolve) => waiters.push(resolve));
    return byId.get(id)!;
  };
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({ server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`, delivered }),
    ),
  );
}

interface StoredEvent {
  id: string;
  type: string;
  data: Record<string, unknown>;
  destination_url: string | null;
}

describe.each(backends)('paygate trigger on %s', (backend) => {
  let dataDir: string;
  let databaseUrl: string | undefined;
  let gateway: { child: ChildProcess; url: string };
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let key: string;
  let liveKey: string;
  let secret: string;
  let cliEnv: Record<string, string | undefined>;

  const api = async <T>(path: string, init: { method?: string; body?: unknown; key?: string } = {}): Promise<T> => {
    const response = await fetch(`${gateway.url}${path}`, {
      method: init.method ?? 'GET',
      headers: {
        authorization: `Bearer ${init.key ?? key}`,
        ...(init.body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: init.body === undefined ? undefined : JSON.stringify(init.body),
    });
    expect(response.ok, `${path}: ${response.status}`).toBe(true);
    return (await response.json()) as T;
  };

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'paygate-trigger-'));
    databaseUrl = backend === 'postgres' ? await createServerDatabase() : undefined;
    const env = {
      PAYGATE_DATA_DIR: dataDir,
      DATABASE_URL: databaseUrl,
      PAYGATE_ALLOW_HTTP_WEBHOOKS: '1',
      PAYGATE_WEBHOOK_ALLOW_PRIVATE: '1',
    };
    const sandbox = await runPaygate(
      ['merchant', 'create', '--name', 'Trigger', '--email', 't@example.test', '--json'],
      env,
    );
    expect(sandbox.code, sandbox.stderr).toBe(0);
    ({ api_key: key, webhook_secret: secret } = lastJsonLine<{ api_key: string; webhook_secret: string }>(
      sandbox.stdout,
    ));
    const live = await runPaygate(
      ['merchant', 'create', '--name', 'Live', '--email', 'live@example.test', '--live', '--json'],
      env,
    );
    expect(live.code, live.stderr).toBe(0);
    liveKey = lastJsonLine<{ api_key: string }>(live.stdout).api_key;
    gateway = await startPaygate(['--port', '0'], env);
    receiver = await startReceiver();
    await api('/v1/webhooks/endpoint', { method: 'PUT', body: { url: receiver.url } });
    // Only what a developer's machine has: the gateway's URL and a key; no database, no data folder.
    cliEnv = { PAYGATE_URL: gateway.url, PAYGATE_API_KEY: key };
  });

  afterAll(async () => {
    if (gateway) {
      gateway.child.kill('SIGTERM');
      await new Promise((resolve) => gateway.child.once('close', resolve));
    }
    receiver?.server.close();
    await rm(dataDir, { recursive: true, force: true });
    if (databaseUrl) await dropServerDatabase(databaseUrl);
  });

  /** Runs the trigger, then checks the event in the log and its signed delivery to the receiver. */
  async function triggered(args: string[]): Promise<StoredEvent> {
    const result = await runPaygate(['trigger', ...args, '--json'], cliEnv);
    expect(result.code, result.stderr).toBe(0);
    const printed = lastJsonLine<StoredEvent>(result.stdout);
    const stored = await api<StoredEvent>(`/v1/webhooks/events/${printed.id}`);
    expect(stored).toMatchObject({ id: printed.id, type: args[0], data: printed.data, destination_url: receiver.url });
    const [delivery] = await receiver.delivered(printed.id, 1);
    const verified = new Webhook(secret).verify(
      delivery!.body,
      delivery!.headers as Record<string, string>,
    ) as StoredEvent;
    expect(verified).toMatchObject({ id: printed.id, type: args[0], data: stored.data });
    return stored;
  }

  it.each(['pay', 'fail', 'expire'] as const)(
    'payment test helper %s: the payment it made moves and its event is delivered signed',
    async (action) => {
      const type = { pay: 'payment.paid', fail: 'payment.failed', expire: 'payment.expired' }[action];
      const event = await triggered([type]);
      const payment = await api<{ status: string }>(`/v1/payments/${String(event.data.payment_id)}`);
      expect(event.data.status).toBe(payment.status);
      expect(payment.status).toBe({ pay: 'paid', fail: 'failed', expire: 'expired' }[action]);
    },
  );

  it('payment.refunded carries the refund the acquirer confirmed', async () => {
    const event = await triggered(['payment.refunded']);
    expect(event.data).toMatchObject({
      status: 'paid',
      amount_refunded: 50,
      refund: { amount: 50, status: 'succeeded' },
    });
  });

  it.each(INVOICE_OUTCOMES)('crypto.invoice.updated --status %s: the invoice ends so', async (outcome) => {
    const event = await triggered(['crypto.invoice.updated', '--status', outcome]);
    const invoice = await api<{ status: string; paid_amount: string }>(
      `/v1/crypto/invoices/${String(event.data.invoice_id)}`,
    );
    expect(invoice.status).toBe(outcome);
    expect(event.data).toMatchObject({
      status: outcome,
      paid_amount: { paid: '10', overpaid: '12', underpaid: '4', expired: '0' }[outcome],
    });
  });

  it('crypto.wallet.deposit: the wallet it made received 5 USDT, credited', async () => {
    const event = await triggered(['crypto.wallet.deposit']);
    expect(event.data).toMatchObject({
      wallet: { received_amount: '5' },
      deposit: { amount: '5', status: 'credited' },
    });
  });

  it('crypto.balance.funded: 5 USDT credited to the main account', async () => {
    const event = await triggered(['crypto.balance.funded']);
    expect(event.data).toMatchObject({ amount: '5', deposit: { status: 'credited' } });
  });

  it.each([
    ['crypto.refund.updated', 'refund_id', '/v1/crypto/refunds/'],
    ['crypto.payout.updated', 'payout_id', '/v1/crypto/payouts/'],
  ])('%s: the transfer sent on the simulated chain completes', async (type, idField, path) => {
    const event = await triggered([type]);
    const resource = await api<{ status: string; tx_hash: string }>(`${path}${String(event.data[idField])}`);
    expect(resource.status).toBe('completed');
    expect(event.data).toMatchObject({ status: 'completed', tx_hash: resource.tx_hash });
  });

  it('crypto.batch.completed: both payouts of the batch completed', async () => {
    const event = await triggered(['crypto.batch.completed']);
    expect(event.data).toMatchObject({ item_count: 2, counts: { completed: 2, failed: 0 } });
  });

  it('cabinet.withdrawal.completed: the withdrawal asked and approved by the test helper is sent and completes', async () => {
    const event = await triggered(['cabinet.withdrawal.completed']);
    expect(event.data).toMatchObject({
      status: 'completed',
      amount: '1',
      requested_by: 'test_helpers:requester',
      decision: { by: 'test_helpers:approver', approved: true },
    });
    expect(event.data.tx_hash).toEqual(expect.any(String));
  });

  it("a live shop's key is refused, naming why, and nothing is made", async () => {
    const result = await runPaygate(
      ['trigger', 'payment.paid', '--api-key', liveKey, '--callback-url', receiver.url],
      cliEnv,
    );
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('drives sandbox shops only');
    const payments = await api<{ data: unknown[] }>('/v1/payments', { key: liveKey });
    expect(payments.data).toEqual([]);
  });

  it('events list shows the triggered events, and events resend delivers one again with the same webhook-id', async () => {
    const event = await triggered(['payment.paid']);
    const listed = await runPaygate(['events', 'list', '--type', 'payment.paid', '--limit', '2', '--json'], cliEnv);
    expect(listed.code, listed.stderr).toBe(0);
    const events = lastJsonLine<StoredEvent[]>(listed.stdout);
    expect(events.length).toBe(2);
    expect(events[0]).toMatchObject({ id: event.id, type: 'payment.paid' });
    const table = await runPaygate(['events', 'list', '--limit', '1'], cliEnv);
    expect(table.stdout.split('\n')[0]).toMatch(/^EVENT\s+TYPE\s+STATUS\s+ATTEMPTS\s+CREATED$/);
    const resent = await runPaygate(['events', 'resend', event.id, '--json'], cliEnv);
    expect(resent.code, resent.stderr).toBe(0);
    expect(lastJsonLine<StoredEvent>(resent.stdout).id).toBe(event.id);
    const deliveries = await receiver.delivered(event.id, 2);
    expect(
      new Webhook(secret).verify(deliveries[1]!.body, deliveries[1]!.headers as Record<string, string>),
    ).toMatchObject({
      id: event.id,
    });
    const missing = await runPaygate(['events', 'resend', 'evt_missing'], cliEnv);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('404 not_found');
  });
});

describe('paygate trigger --list', () => {
  it('names every event kind the command completes, each with what it makes', async () => {
    const result = await runPaygate(['trigger', '--list', '--json'], {});
    expect(result.code, result.stderr).toBe(0);
    const kinds = lastJsonLine<Array<{ event: string; what: string }>>(result.stdout);
    const entry = commands.find((command) => command.words.join(' ') === 'trigger')!;
    expect(kinds.map((kind) => kind.event)).toEqual(entry.arguments);
    expect(kinds.map((kind) => kind.event)).toEqual(TRIGGER_KINDS.map((kind) => kind.name));
    for (const kind of kinds) expect(kind.what.length).toBeGreaterThan(10);
  });
});

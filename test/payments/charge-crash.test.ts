// kill -9 between the acquirer's "charged" and the gateway's record of it: a real
// gateway process (crashing-gateway.ts, a hook at src/payments/crash-points.ts) dies
// right after the sandbox acquirer booked the capture. The attempt recorded before
// the call survives; expiry leaves the payment alone; reconciliation pays it once.
// Also: the operator's `paygate payments suspense list|refund` commands.
import type { ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Registry } from 'prom-client';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.ts';
import type { AppContext } from '../../src/context.ts';
import { openDatabase } from '../../src/db/database.ts';
import { DependencyHealth } from '../../src/health/dependency-health.ts';
import { createLogger } from '../../src/logger.ts';
import { testKeyring } from '../support/keyring.ts';
import { applyAttemptOutcome, chargeAttempt, startAttempt } from '../../src/payments/attempt-service.ts';
import { createSandboxConnector } from '../../src/payments/connectors/sandbox/sandbox-connector.ts';
import { createExpiryWorker } from '../../src/payments/expiry-worker.ts';
import { findPaymentById } from '../../src/payments/payment-repository.ts';
import { createReconciliationWorker } from '../../src/payments/reconciliation-worker.ts';
import { createDeliveryWorker } from '../../src/webhooks/delivery-worker.ts';
import { lastJsonLine, runPaygateInProcess, startPaygate } from '../support/cli.ts';
import { testConfig } from '../support/app.ts';
import { backends, createServerDatabase, dropServerDatabase } from '../support/databases.ts';
import { startReceiver, type Receiver } from '../webhooks/receiver.ts';

const PAYER = { returnUrl: 'http://127.0.0.1/pay/return', description: 'Test shop: order' };

const CRASHING_GATEWAY = fileURLToPath(new URL('./crashing-gateway.ts', import.meta.url));

function field(html: string, name: string): string | undefined {
  return new RegExp(`name="${name}" value="([^"]*)"`).exec(html)?.[1];
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const closed = new Promise((resolve) => child.once('close', resolve));
  child.kill('SIGTERM');
  await closed;
}

describe.each(backends)('a gateway killed between the charge and its record, on %s', (backend) => {
  let env: Record<string, string | undefined>;
  let dataDir: string;
  let databaseUrl: string | undefined;
  let receiver: Receiver;
  let apiKey: string;

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'paygate-crash-'));
    databaseUrl = backend === 'postgres' ? await createServerDatabase() : undefined;
    receiver = await startReceiver();
    env = {
      PAYGATE_DATA_DIR: dataDir,
      DATABASE_URL: databaseUrl,
      PORT: '0',
      PAYGATE_ALLOW_HTTP_WEBHOOKS: '1',
      PAYGATE_WEBHOOK_ALLOW_PRIVATE: '1',
    };
    expect((await runPaygateInProcess(['migrate'], env)).code).toBe(0);
    const created = await runPaygateInProcess(
      ['merchant', 'create', '--name', 'Crash shop', '--email', 'crash@example.test', '--json'],
      env,
    );
    expect(created.code).toBe(0);
    apiKey = lastJsonLine<{ api_key: string }>(created.stdout).api_key;
  });
  afterAll(async () => {
    await receiver.close();
    await rm(dataDir, { recursive: true, force: true });
    if (databaseUrl) await dropServerDatabase(databaseUrl);
  });

  /** The gateway's database, opened by the test while no gateway runs (PGlite is one process). */
  async function withDatabase<T>(clock: ManualClock, work: (context: AppContext) => Promise<T>): Promise<T> {
    const handle = await openDatabase({ url: databaseUrl, dataDir: join(dataDir, 'pglite') });
    const config = testConfig();
    const logger = createLogger(config);
    const context: AppContext = {
      db: handle.db,
      backend,
      clock,
      config,
      metrics: new Registry(),
      logger,
      health: new DependencyHealth(logger),
      keyring: testKeyring,
    };
    try {
      return await work(context);
    } finally {
      await handle.close();
    }
  }

  async function createPayment(baseUrl: string, body: Record<string, unknown>) {
    const response = await request(`${baseUrl}/v1/payments`, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ amount: 2500, currency: 'RUB', callback_url: receiver.url, ...body }),
    });
    expect(response.statusCode).toBe(201);
    return (await response.body.json()) as { payment_id: string; order_code: string; expires_at: string };
  }

  it('the capture is recorded and paid once after kill -9, the payment never expires, the merchant gets exactly one payment.paid', async () => {
    const crashing = await startPaygate(['after_acquirer_success'], env, [CRASHING_GATEWAY]);
    let payment: Awaited<ReturnType<typeof createPayment>>;
    try {
      payment = await createPayment(crashing.url, { method: 'card' });
      const page = await request(`${crashing.url}/pay/${payment.order_code}`);
      const html = await page.body.text();
      const cookie = String(page.headers['set-cookie']).split(';')[0]!;
      const form = new URLSearchParams({
        csrf: field(html, 'csrf')!,
        attempt: field(html, 'attempt')!,
        'cc-number': '4242 4242 4242 4242',
        'cc-exp': '12/34',
        'cc-csc': '123',
      });
      const exited = new Promise<NodeJS.Signals | null>((resolve) =>
        crashing.child.once('exit', (_code, signal) => resolve(signal)),
      );
      // The gateway dies while answering: the payer's browser sees the connection drop.
      await expect(
        request(`${crashing.url}/pay/${payment.order_code}/card`, {
          method: 'POST',
          headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
          body: form.toString(),
        }),
      ).rejects.toThrow();
      expect(await exited).toBe('SIGKILL');
    } finally {
      if (crashing.child.exitCode === null && crashing.child.signalCode === null) crashing.child.kill('SIGKILL');
    }

    const afterExpiry = new ManualClock(new Date(new Date(payment.expires_at).getTime() + 5_000));
    await withDatabase(afterExpiry, async (context) => {
      // The acquirer has the money; the gateway has only the attempt it wrote before the call.
      const charges = await context.db
        .selectFrom('sandbox_acquirer_charges')
        .select(['charge_key', 'status'])
        .where('payment_id', '=', payment.payment_id)
        .execute();
      expect(charges).toEqual([{ charge_key: expect.stringContaining(payment.payment_id), status: 'succeeded' }]);
      const attempts = await context.db
        .selectFrom('payment_attempts')
        .select(['charge_key', 'status'])
        .where('payment_id', '=', payment.payment_id)
        .execute();
      expect(attempts).toEqual([{ charge_key: charges[0]!.charge_key, status: 'pending' }]);
      expect((await findPaymentById(context.db, payment.payment_id))!.status).toBe('pending');

      // An hour later: expiry leaves it alone, reconciliation finds the capture.
      expect(await createExpiryWorker(context).runOnce()).toBe(0);
      expect(await createReconciliationWorker(context).runOnce()).toBe(1);
      expect(await createExpiryWorker(context).runOnce()).toBe(0);
      expect((await findPaymentById(context.db, payment.payment_id))!).toMatchObject({
        status: 'paid',
        paid_total_kopecks: 250_000n,
        expired_at: null,
      });
      const transfers = await context.db
        .selectFrom('ledger_transfers')
        .select(['type', 'amount'])
        .where('reference_id', '=', payment.payment_id)
        .execute();
      expect(transfers).toEqual([{ type: 'payment', amount: 250_000n }]);
      const events = await context.db
        .selectFrom('webhook_events')
        .select('type')
        .where('payload', 'like', `%${payment.payment_id}%`)
        .execute();
      expect(events).toEqual([{ type: 'payment.paid' }]);
      // The merchant's receiver gets it (the delivery worker on the same, later, clock).
      const delivery = createDeliveryWorker(context);
      try {
        await delivery.drain();
      } finally {
        await delivery.stop();
      }
    });
    expect(receiver.requests.map((received) => JSON.parse(received.body))).toEqual([
      expect.objectContaining({
        type: 'payment.paid',
        data: expect.objectContaining({ payment_id: payment.payment_id, status: 'paid' }),
      }),
    ]);

    // Started again, the gateway reads it as paid and sends nothing more.
    const restarted = await startPaygate(['--role', 'all'], env);
    try {
      const read = await request(`${restarted.url}/v1/payments/${payment.payment_id}`, {
        headers: { authorization: `Bearer ${apiKey}` },
      });
      expect(await read.body.json()).toMatchObject({ payment_id: payment.payment_id, status: 'paid' });
    } finally {
      await stop(restarted.child);
    }
    expect(receiver.requests).toHaveLength(1);
  });

  it('`paygate payments suspense list` shows a held capture and `refund` returns it through the connector, once', async () => {
    const server = await startPaygate(['--role', 'all'], env);
    let payment: Awaited<ReturnType<typeof createPayment>>;
    try {
      payment = await createPayment(server.url, { method: null });
    } finally {
      await stop(server.child);
    }
    // Two tabs both started paying; the second capture cannot be applied.
    const heldId = await withDatabase(new ManualClock(new Date()), async (context) => {
      const row = (await findPaymentById(context.db, payment.payment_id))!;
      const connector = createSandboxConnector(context);
      const begin = (nonce: string, method: 'card' | 'sberpay') =>
        startAttempt(context, {
          payment: row,
          connector,
          chargeKey: `${row.id}:${nonce}`,
          method,
          amountKopecks: row.amount_total_kopecks,
        });
      const card = (await begin('cli-tab-card', 'card'))!;
      const sberpay = (await begin('cli-tab-sberpay', 'sberpay'))!;
      await applyAttemptOutcome(
        context,
        card,
        await chargeAttempt(connector, card, {
          ...PAYER,
          card: { number: '4242424242424242', expiryMonth: 12, expiryYear: 2034, securityCode: '123' },
        }),
      );
      const held = await applyAttemptOutcome(context, sberpay, await chargeAttempt(connector, sberpay, PAYER));
      expect(held.applied_as).toBe('suspense');
      return held.id;
    });

    const listed = await runPaygateInProcess(['payments', 'suspense', 'list', '--json'], env);
    expect(listed.code).toBe(0);
    expect(lastJsonLine<unknown[]>(listed.stdout)).toEqual([
      expect.objectContaining({
        attempt_id: heldId,
        payment_id: payment.payment_id,
        amount: 2500,
        method: 'sberpay',
        reason: 'payment_already_paid',
        refund_status: 'none',
      }),
    ]);
    const refunded = await runPaygateInProcess(['payments', 'suspense', 'refund', '--attempt', heldId, '--json'], env);
    expect(refunded.code).toBe(0);
    expect(lastJsonLine(refunded.stdout)).toMatchObject({ attempt_id: heldId, refund_status: 'refunded' });
    const again = await runPaygateInProcess(['payments', 'suspense', 'refund', '--attempt', heldId, '--json'], env);
    expect(lastJsonLine(again.stdout)).toEqual(lastJsonLine(refunded.stdout));
    const unknown = await runPaygateInProcess(['payments', 'suspense', 'refund', '--attempt', 'pat_missing'], env);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('No payment attempt pat_missing');

    await withDatabase(new ManualClock(new Date()), async (context) => {
      const sandboxRefunds = await context.db
        .selectFrom('sandbox_acquirer_refunds')
        .innerJoin(
          'sandbox_acquirer_charges',
          'sandbox_acquirer_charges.charge_key',
          'sandbox_acquirer_refunds.charge_key',
        )
        .select('sandbox_acquirer_refunds.refund_key')
        .where('sandbox_acquirer_charges.payment_id', '=', payment.payment_id)
        .where('sandbox_acquirer_charges.method', '=', 'sberpay')
        .execute();
      expect(sandboxRefunds).toHaveLength(1);
      const refunds = await context.db
        .selectFrom('ledger_transfers')
        .select('type')
        .where('reference_id', '=', heldId)
        .execute();
      expect(refunds.map((transfer) => transfer.type)).toEqual(['capture_unapplied', 'refund']);
    });
  });
});

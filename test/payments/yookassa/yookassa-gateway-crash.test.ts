// kill -9 of a gateway charging through YooKassa, between YooKassa's "succeeded"
// and our record of it: a real gateway process (../crashing-gateway.ts) confirms
// the simulator's payment.succeeded notification with GET /payments/{id} and dies
// before applying it. YooKassa got no 200, so it sends the notification again;
// the gateway, started again on the same address, applies it once: paid,
// credited once, one payment.paid.
import type { ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../../src/db/database.ts';
import {
  SIMULATOR_SHOP,
  startYooKassaSimulator,
  type YooKassaSimulator,
} from '../../../src/payments/connectors/yookassa/simulator/index.ts';
import { lastJsonLine, runPaygateInProcess, startPaygate } from '../../support/cli.ts';
import { backends, createServerDatabase, dropServerDatabase } from '../../support/databases.ts';
import { eventually } from '../../support/eventually.ts';
import { freePort } from '../../support/free-port.ts';
import { startReceiver, type Receiver } from '../../webhooks/receiver.ts';
import { cardPaymentSentToAcquirer, merchantApi } from '../gateway-over-http.ts';

const CRASHING_GATEWAY = fileURLToPath(new URL('../crashing-gateway.ts', import.meta.url));

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const closed = new Promise((resolve) => child.once('close', resolve));
  child.kill('SIGTERM');
  await closed;
}

describe.each(backends)(
  'a YooKassa gateway killed between the confirmed notification and its record, on %s',
  (backend) => {
    let env: Record<string, string | undefined>;
    let dataDir: string;
    let databaseUrl: string | undefined;
    let receiver: Receiver;
    let simulator: YooKassaSimulator;
    let yookassaPaymentOf: (paymentId: string) => string;
    let api: ReturnType<typeof merchantApi>;
    let gateway: string;

    beforeAll(async () => {
      dataDir = await mkdtemp(join(tmpdir(), 'paygate-yookassa-crash-'));
      databaseUrl = backend === 'postgres' ? await createServerDatabase() : undefined;
      receiver = await startReceiver();
      // YooKassa's own schedule: its next try is minutes away, so the test makes it by hand.
      simulator = await startYooKassaSimulator({ port: 0 });
      // One address for both runs: YooKassa keeps the notification URL of the shop's settings.
      const port = await freePort();
      gateway = `http://127.0.0.1:${port}`;
      env = {
        PAYGATE_DATA_DIR: dataDir,
        DATABASE_URL: databaseUrl,
        PORT: String(port),
        PAYGATE_PUBLIC_URL: gateway,
        PAYGATE_ALLOW_HTTP_WEBHOOKS: '1',
        PAYGATE_WEBHOOK_ALLOW_PRIVATE: '1',
        PAYGATE_ACQUIRER_NOTIFICATION_SOURCES_YOOKASSA: '127.0.0.1/32',
      };
      expect((await runPaygateInProcess(['migrate'], env)).code).toBe(0);
      const created = await runPaygateInProcess(
        [
          'merchant',
          'create',
          '--name',
          'YooKassa crash shop',
          '--email',
          'yookassa-crash@example.test',
          '--live',
          '--json',
        ],
        env,
      );
      expect(created.code, created.stderr).toBe(0);
      const merchant = lastJsonLine<{ api_key: string; shop_id: string }>(created.stdout);
      api = merchantApi(gateway, merchant.api_key);
      const secretFile = join(dataDir, 'yookassa.key');
      await writeFile(secretFile, SIMULATOR_SHOP.secretKey);
      const connected = await runPaygateInProcess(
        [
          'shop',
          'connector',
          'set',
          '--shop',
          merchant.shop_id,
          '--provider',
          'yookassa',
          '--credential',
          `shop_id=${SIMULATOR_SHOP.shopId}`,
          '--credential-file',
          `secret_key=${secretFile}`,
          '--api-url',
          simulator.url,
          '--json',
        ],
        env,
      );
      expect(connected.code, connected.stderr).toBe(0);
      const connection = lastJsonLine<{ id: string }>(connected.stdout);
      simulator.setNotificationUrl(
        SIMULATOR_SHOP.shopId,
        `${gateway}/acquirers/yookassa/notifications/${connection.id}`,
      );
      yookassaPaymentOf = (paymentId) =>
        [...simulator.payments.values()].find((candidate) => candidate.metadata?.['paygate_payment_id'] === paymentId)!
          .id;
    });
    afterAll(async () => {
      await simulator?.close();
      await receiver?.close();
      await rm(dataDir, { recursive: true, force: true });
      if (databaseUrl) await dropServerDatabase(databaseUrl);
    });

    it('after kill -9, YooKassa’s repeated notification pays the payment once; one payment.paid; the merchant credited once', async () => {
      const crashing = await startPaygate(['after_notification_confirmed'], env, [CRASHING_GATEWAY]);
      let paymentId: string;
      let yookassaPaymentId: string;
      try {
        const sent = await cardPaymentSentToAcquirer(gateway, api, receiver.url);
        paymentId = sent.paymentId;
        const formUrl = sent.acquirerUrl;
        yookassaPaymentId = yookassaPaymentOf(paymentId);
        expect(formUrl).toContain(`orderId=${yookassaPaymentId}`);

        const exited = new Promise<NodeJS.Signals | null>((resolve) =>
          crashing.child.once('exit', (_code, signal) => resolve(signal)),
        );
        // The payer pays on YooKassa's page; its notification kills the gateway mid-way.
        await fetch(formUrl);
        const paid = await fetch(formUrl, {
          method: 'POST',
          redirect: 'manual',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: 'action=pay',
        });
        expect(paid.status).toBe(303);
        expect(await exited).toBe('SIGKILL');
      } finally {
        if (crashing.child.exitCode === null && crashing.child.signalCode === null) crashing.child.kill('SIGKILL');
      }
      // YooKassa has the money; its one notification was not answered 200.
      expect(simulator.payments.get(yookassaPaymentId)!.status).toBe('succeeded');
      const sent = await eventually(
        () =>
          simulator.deliveries.filter(
            (delivery) => (delivery.body['object'] as { id?: string } | undefined)?.id === yookassaPaymentId,
          ),
        (deliveries) => deliveries.length === 1 && deliveries.every((delivery) => delivery.attempts >= 1),
      );
      expect(sent.map((delivery) => [delivery.body['event'], delivery.delivered])).toEqual([
        ['payment.succeeded', false],
      ]);

      const restarted = await startPaygate(['--role', 'all'], env);
      try {
        expect((await api(`/v1/payments/${paymentId}`)).json['status']).toBe('pending');
        // YooKassa's next try (minutes later in production) of the notification, to the same URL.
        for (const delivery of sent) {
          const repeated = await fetch(delivery.url, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify(delivery.body),
          });
          expect(repeated.status, await repeated.text()).toBe(200);
        }
        expect((await api(`/v1/payments/${paymentId}`)).json).toMatchObject({ status: 'paid', amount: 2500 });
        await eventually(
          () => receiver.requests.length,
          (count) => count >= 1,
        );
      } finally {
        await stop(restarted.child);
      }
      expect(receiver.requests.map((received) => JSON.parse(received.body))).toEqual([
        expect.objectContaining({
          type: 'payment.paid',
          data: expect.objectContaining({ payment_id: paymentId, status: 'paid' }),
        }),
      ]);
      // With no gateway running, the books: one credit, one event, one applied attempt.
      const handle = await openDatabase({ url: databaseUrl, dataDir: join(dataDir, 'pglite') });
      try {
        const transfers = await handle.db
          .selectFrom('ledger_transfers')
          .select(['type', 'amount'])
          .where('reference_id', '=', paymentId)
          .execute();
        expect(transfers).toEqual([{ type: 'payment', amount: 250_000n }]);
        const events = await handle.db
          .selectFrom('webhook_events')
          .select('type')
          .where('payload', 'like', `%${paymentId}%`)
          .execute();
        expect(events).toEqual([{ type: 'payment.paid' }]);
        const attempts = await handle.db
          .selectFrom('payment_attempts')
          .select(['status', 'applied_as', 'provider_reference'])
          .where('payment_id', '=', paymentId)
          .execute();
        expect(attempts).toEqual([
          { status: 'succeeded', applied_as: 'payment', provider_reference: yookassaPaymentId },
        ]);
      } finally {
        await handle.close();
      }
    });
  },
);

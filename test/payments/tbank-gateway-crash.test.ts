// kill -9 of a gateway charging through T-Bank, between T-Bank's "paid" and our
// record of it: a real gateway process (crashing-gateway.ts) confirms the
// simulator's notification with GetState and dies before applying it. T-Bank
// got no `OK`, so it sends the notification again; the gateway, started again
// on the same address, applies it once: paid, credited once, one payment.paid.
import type { ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/database.ts';
import {
  SIMULATOR_TERMINAL,
  startTBankSimulator,
  type TBankSimulator,
} from '../../src/payments/connectors/tbank/simulator/index.ts';
import { lastJsonLine, runPaygateInProcess, startPaygate } from '../support/cli.ts';
import { backends, createServerDatabase, dropServerDatabase } from '../support/databases.ts';
import { eventually } from '../support/eventually.ts';
import { freePort } from '../support/free-port.ts';
import { startReceiver, type Receiver } from '../webhooks/receiver.ts';
import { cardPaymentSentToAcquirer, merchantApi } from './gateway-over-http.ts';

const CRASHING_GATEWAY = fileURLToPath(new URL('./crashing-gateway.ts', import.meta.url));

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const closed = new Promise((resolve) => child.once('close', resolve));
  child.kill('SIGTERM');
  await closed;
}

describe.each(backends)(
  'a T-Bank gateway killed between the confirmed notification and its record, on %s',
  (backend) => {
    let env: Record<string, string | undefined>;
    let dataDir: string;
    let databaseUrl: string | undefined;
    let receiver: Receiver;
    let simulator: TBankSimulator;
    let api: ReturnType<typeof merchantApi>;
    let gateway: string;

    beforeAll(async () => {
      dataDir = await mkdtemp(join(tmpdir(), 'paygate-tbank-crash-'));
      databaseUrl = backend === 'postgres' ? await createServerDatabase() : undefined;
      receiver = await startReceiver();
      simulator = await startTBankSimulator({ port: 0 });
      // One address for both runs: T-Bank keeps the NotificationURL Init gave it.
      const port = await freePort();
      gateway = `http://127.0.0.1:${port}`;
      env = {
        PAYGATE_DATA_DIR: dataDir,
        DATABASE_URL: databaseUrl,
        PORT: String(port),
        PAYGATE_PUBLIC_URL: gateway,
        PAYGATE_ALLOW_HTTP_WEBHOOKS: '1',
        PAYGATE_WEBHOOK_ALLOW_PRIVATE: '1',
        PAYGATE_ACQUIRER_NOTIFICATION_SOURCES_TBANK: '127.0.0.1/32',
      };
      expect((await runPaygateInProcess(['migrate'], env)).code).toBe(0);
      const created = await runPaygateInProcess(
        [
          'merchant',
          'create',
          '--name',
          'T-Bank crash shop',
          '--email',
          'tbank-crash@example.test',
          '--live',
          '--json',
        ],
        env,
      );
      expect(created.code, created.stderr).toBe(0);
      const merchant = lastJsonLine<{ api_key: string; shop_id: string }>(created.stdout);
      api = merchantApi(gateway, merchant.api_key);
      const passwordFile = join(dataDir, 'tbank.pw');
      await writeFile(passwordFile, SIMULATOR_TERMINAL.password);
      const connected = await runPaygateInProcess(
        [
          'shop',
          'connector',
          'set',
          '--shop',
          merchant.shop_id,
          '--provider',
          'tbank',
          '--credential',
          `terminal_key=${SIMULATOR_TERMINAL.terminalKey}`,
          '--credential-file',
          `password=${passwordFile}`,
          '--api-url',
          simulator.url,
        ],
        env,
      );
      expect(connected.code, connected.stderr).toBe(0);
    });
    afterAll(async () => {
      await simulator?.close();
      await receiver?.close();
      await rm(dataDir, { recursive: true, force: true });
      if (databaseUrl) await dropServerDatabase(databaseUrl);
    });

    it('after kill -9, T-Bank’s repeated notification pays the payment once; one payment.paid; the merchant credited once', async () => {
      const crashing = await startPaygate(['after_notification_confirmed'], env, [CRASHING_GATEWAY]);
      let paymentId: string;
      let tbankPaymentId: string;
      try {
        const sent = await cardPaymentSentToAcquirer(gateway, api, receiver.url);
        paymentId = sent.paymentId;
        const formUrl = sent.acquirerUrl;
        const session = [...simulator.sessions.values()].find((candidate) => candidate.orderId === paymentId)!;
        tbankPaymentId = session.paymentId;

        const exited = new Promise<NodeJS.Signals | null>((resolve) =>
          crashing.child.once('exit', (_code, signal) => resolve(signal)),
        );
        // The payer pays on T-Bank's form; its notification kills the gateway mid-way.
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
      // T-Bank has the money; no notification was answered OK.
      expect(simulator.sessions.get(tbankPaymentId)!.status).toBe('CONFIRMED');
      const sent = await eventually(
        () => simulator.deliveries.filter((delivery) => String(delivery.body['PaymentId']) === tbankPaymentId),
        (deliveries) => deliveries.length === 2 && deliveries.every((delivery) => delivery.attempts >= 1),
      );
      expect(sent.map((delivery) => delivery.delivered)).toEqual([false, false]);

      const restarted = await startPaygate(['--role', 'all'], env);
      try {
        expect((await api(`/v1/payments/${paymentId}`)).json['status']).toBe('pending');
        // T-Bank's next tries (hourly in production) of both notifications, to the same URL.
        for (const delivery of sent) {
          const repeated = await fetch(delivery.url, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify(delivery.body),
          });
          expect([repeated.status, await repeated.text()]).toEqual([200, 'OK']);
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
        expect(attempts).toEqual([{ status: 'succeeded', applied_as: 'payment', provider_reference: tbankPaymentId }]);
      } finally {
        await handle.close();
      }
    });
  },
);

// Shared pieces of the T-Bank tests: the documented examples, a loopback
// server that answers with fixed bodies, and a notification receiver that
// hands what it receives to a connector and answers with the connector's reply.
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import type { AcquirerConnector, NotificationResult } from '../../../src/payments/connectors/acquirer-connector.ts';

export interface DocsExamples {
  readonly source: string;
  readonly tokenExample: { password: string; token: string; request: Record<string, unknown> };
  readonly notificationTokenExample: { password: string; notification: Record<string, unknown> };
  readonly methods: Record<
    'Init' | 'GetState' | 'GetQr' | 'CheckOrder' | 'Cancel',
    {
      request: Record<string, unknown>;
      response: Record<string, unknown>;
      notSimulated?: Record<string, string>;
      notSimulatedInPayments?: Record<string, string>;
    }
  >;
}

export const docs = JSON.parse(
  readFileSync(new URL('./fixtures/tbank-docs-examples.json', import.meta.url), 'utf8'),
) as DocsExamples;

export const silentLogger = pino({ level: 'silent' });

export async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

export async function closeServer(server: Server): Promise<void> {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}

export function jsonKind(value: unknown): string {
  if (Array.isArray(value)) return 'array';
  if (value === null) return 'null';
  return typeof value;
}

/** Receives T-Bank notifications over HTTP and lets `connector` judge them. */
export async function startNotificationReceiver() {
  const results: NotificationResult[] = [];
  let connector: AcquirerConnector | undefined;
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      if (!connector?.handleNotification) {
        response.writeHead(503).end();
        return;
      }
      connector
        .handleNotification({
          headers: request.headers,
          rawBody: Buffer.concat(chunks).toString('utf8'),
          remoteAddress: request.socket.remoteAddress ?? '',
        })
        .then((result) => {
          results.push(result);
          response.writeHead(result.reply.statusCode, { 'content-type': result.reply.contentType });
          response.end(result.reply.body);
        })
        .catch(() => response.writeHead(500).end());
    });
  });
  const url = await listen(server);
  return {
    url: `${url}/acquirers/tbank/notifications`,
    results,
    attach(target: AcquirerConnector): void {
      connector = target;
    },
    close: () => closeServer(server),
  };
}

// Shared pieces of the acquirer connector and simulator tests: a silent logger,
// a loopback server's start and stop, a JSON value's kind, and a notification
// receiver that hands what it receives to a connector and answers with the
// connector's reply.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import type { AcquirerConnector, NotificationResult } from '../../src/payments/connectors/acquirer-connector.ts';

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

/** Receives an acquirer's notifications over HTTP and lets `connector` judge them, answering with its reply. */
export async function startNotificationReceiver(provider: string) {
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
    url: `${url}/acquirers/${provider}/notifications`,
    results,
    attach(target: AcquirerConnector): void {
      connector = target;
    },
    close: () => closeServer(server),
  };
}

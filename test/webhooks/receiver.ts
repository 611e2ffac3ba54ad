// A real HTTP receiver on 127.0.0.1 for webhook tests: records every request
// and answers as the test's handler says (status, headers, body, delay, when the
// test lets it, or never).
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

interface ReceivedRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

export interface Answer {
  readonly status?: number;
  readonly headers?: Record<string, string>;
  readonly body?: string;
  readonly delayMs?: number;
  /** Answer once this settles (the test decides when). */
  readonly answerWhen?: Promise<void>;
  /** Never answer (the sender must time out). */
  readonly hang?: boolean;
  /** Send the status line and headers, then nothing more, never ending the body. */
  readonly hangAfterHeaders?: boolean;
  /** Stream body chunks without end until the sender goes away. */
  readonly endlessBody?: boolean;
}

export type Handler = (request: ReceivedRequest, index: number) => Answer;

export interface Receiver {
  readonly url: string;
  readonly requests: ReceivedRequest[];
  /** Requests whose connection is still open (answered or not): a hanging request counts until the sender gives up. */
  readonly open: number;
  handler: Handler;
  close(): Promise<void>;
}

export async function startReceiver(handler: Handler = () => ({ status: 200, body: 'ok' })): Promise<Receiver> {
  const requests: ReceivedRequest[] = [];
  let open = 0;
  const receiver: Receiver = {
    url: '',
    requests,
    get open() {
      return open;
    },
    handler,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const received: ReceivedRequest = {
        method: request.method ?? '',
        path: request.url ?? '',
        headers: request.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      };
      requests.push(received);
      open++;
      response.on('close', () => open--);
      const answer = receiver.handler(received, requests.length - 1);
      if (answer.hang) return;
      if (answer.hangAfterHeaders || answer.endlessBody) {
        response.writeHead(answer.status ?? 200, { 'content-type': 'text/plain' });
        response.flushHeaders();
        if (answer.endlessBody) {
          const chunk = 'y'.repeat(1_000);
          const timer = setInterval(() => response.write(chunk), 1);
          response.on('close', () => clearInterval(timer));
        }
        return;
      }
      const reply = () => {
        response.writeHead(answer.status ?? 200, answer.headers ?? {});
        response.end(answer.body ?? '');
      };
      if (answer.answerWhen) void answer.answerWhen.then(reply);
      else if (answer.delayMs) setTimeout(reply, answer.delayMs);
      else reply();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  (receiver as { url: string }).url = `http://127.0.0.1:${port}/hooks`;
  return receiver;
}

/** A URL on 127.0.0.1 where nothing listens (the port was bound, then released). */
export async function closedPortUrl(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}/hooks`;
}

// A loopback HTTP relay in front of the gateway that a test tells what to do
// with each request, in order: forward it, forward it and then cut the
// connection before the answer reaches the client (a lost answer), cut it
// without forwarding, or answer itself (a 503 or 429 with Retry-After). It
// records what arrived, so a test sees the SDK's retries and their headers.
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

type RelayAction =
  | 'forward'
  | 'forward-then-cut'
  | 'cut'
  | { readonly status: number; readonly headers?: Record<string, string>; readonly body?: unknown };

interface RelayedRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
}

export interface FlakyRelay {
  readonly url: string;
  readonly requests: RelayedRequest[];
  /** The actions for the next requests; once used up, every request is forwarded. */
  plan(...actions: RelayAction[]): void;
  close(): Promise<void>;
}

export async function startFlakyRelay(upstream: string): Promise<FlakyRelay> {
  const requests: RelayedRequest[] = [];
  const planned: RelayAction[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      requests.push({ method: request.method ?? '', path: request.url ?? '', headers: request.headers });
      const action = planned.shift() ?? 'forward';
      if (action === 'cut') return void request.socket.destroy();
      if (typeof action === 'object') {
        response.writeHead(action.status, { 'content-type': 'application/json', ...action.headers });
        return void response.end(JSON.stringify(action.body ?? { error: 'service_unavailable', message: 'relay' }));
      }
      const headers = new Headers();
      for (const [name, value] of Object.entries(request.headers)) {
        if (typeof value === 'string' && name !== 'host' && name !== 'connection') headers.set(name, value);
      }
      const body = chunks.length === 0 ? undefined : Buffer.concat(chunks);
      fetch(`${upstream}${request.url ?? ''}`, { method: request.method, headers, body })
        .then(async (answer) => {
          const text = Buffer.from(await answer.arrayBuffer());
          // The gateway has done the work; the client never hears of it.
          if (action === 'forward-then-cut') return void request.socket.destroy();
          const copied: Record<string, string> = {};
          answer.headers.forEach((value, name) => {
            if (name !== 'content-length' && name !== 'transfer-encoding' && name !== 'connection')
              copied[name] = value;
          });
          response.writeHead(answer.status, copied);
          response.end(text);
        })
        .catch(() => request.socket.destroy());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    plan: (...actions) => void planned.push(...actions),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

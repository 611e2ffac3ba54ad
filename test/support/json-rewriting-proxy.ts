// An HTTP relay in front of a JSON API (a TRON node: the simulated chain) that
// a test can make lie: each POST is forwarded to the real server, and the test
// may rewrite the request body on the way in and the parsed JSON answer on the
// way out. What the gateway sees from a compromised node, or from anyone on a
// plain-http path to an honest one.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseNodeJson } from '../../src/crypto/tron/node-transport.ts';

export interface JsonRewrite {
  /** The body forwarded instead of `body`. */
  request?(path: string, body: Record<string, unknown>): Record<string, unknown>;
  /** The answer returned instead of `answer` (`request` is the body as the client sent it). */
  answer?(path: string, answer: unknown, request: Record<string, unknown>): unknown;
}

export interface JsonRewritingProxy {
  readonly url: string;
  /** Replaces the rewrite (none: an honest relay). */
  rewrite(rewrite: JsonRewrite | undefined): void;
  /** Paths asked through the relay, in order. */
  readonly asked: string[];
  close(): Promise<void>;
}

export async function startJsonRewritingProxy(targetUrl: string): Promise<JsonRewritingProxy> {
  let current: JsonRewrite | undefined;
  const asked: string[] = [];
  const server: Server = createServer((incoming, outgoing) => {
    const chunks: Buffer[] = [];
    incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
    incoming.on('end', () => {
      void (async () => {
        const path = incoming.url ?? '/';
        asked.push(path);
        const text = Buffer.concat(chunks).toString('utf8');
        const sent = (text ? parseNodeJson(text) : {}) as Record<string, unknown>;
        const forwarded = current?.request ? current.request(path, structuredClone(sent)) : sent;
        const upstream = await fetch(targetUrl + path, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: stringify(forwarded),
        });
        const answerText = await upstream.text();
        let body = answerText;
        if (current?.answer) {
          let answer: unknown;
          try {
            answer = parseNodeJson(answerText);
          } catch {
            answer = undefined;
          }
          if (answer !== undefined) body = stringify(current.answer(path, answer, sent));
        }
        outgoing.writeHead(upstream.status, { 'content-type': 'application/json' });
        outgoing.end(body);
      })().catch((error: unknown) => {
        outgoing.writeHead(502, { 'content-type': 'text/plain' });
        outgoing.end(String(error));
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    asked,
    rewrite(rewrite) {
      current = rewrite;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** JSON with bigints written as plain integers, as a node writes int64 fields. */
function stringify(value: unknown): string {
  const marked = JSON.stringify(value, (_key, item: unknown) =>
    typeof item === 'bigint' ? `\u0000big:${item}` : item,
  );
  return marked.replace(/"\\u0000big:(-?\d+)"/g, '$1');
}

// A real Server-Sent Events client for stream tests: one HTTP connection to the
// gateway's port, frames parsed by eventsource-parser (as `paygate listen` does),
// every event and comment recorded for the test to wait on.
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { request } from 'undici';
import { eventually } from '../support/eventually.ts';

export interface SseConnection {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  /** The error body of a refused stream. */
  readonly error: unknown;
  readonly events: EventSourceMessage[];
  readonly comments: string[];
  /** True once the server ended the stream. */
  readonly ended: boolean;
  waitForEvents(count: number): Promise<EventSourceMessage[]>;
  close(): void;
}

export async function openSse(
  url: string,
  apiKey: string,
  headers: Record<string, string> = {},
): Promise<SseConnection> {
  const abort = new AbortController();
  const response = await request(url, {
    headers: { authorization: `Bearer ${apiKey}`, accept: 'text/event-stream', ...headers },
    signal: abort.signal,
  });
  const events: EventSourceMessage[] = [];
  const comments: string[] = [];
  let ended = false;
  let error: unknown;
  if (response.statusCode === 200) {
    const parser = createParser({ onEvent: (event) => events.push(event), onComment: (text) => comments.push(text) });
    void (async () => {
      const decoder = new TextDecoder();
      try {
        for await (const chunk of response.body) parser.feed(decoder.decode(chunk, { stream: true }));
      } catch {
        // aborted by close()
      }
      ended = true;
    })();
  } else {
    error = await response.body.json();
  }
  return {
    status: response.statusCode,
    headers: response.headers,
    error,
    events,
    comments,
    get ended() {
      return ended;
    },
    waitForEvents: (count) =>
      eventually(
        () => events.slice(0, count),
        (seen) => seen.length >= count,
      ),
    close: () => abort.abort(),
  };
}

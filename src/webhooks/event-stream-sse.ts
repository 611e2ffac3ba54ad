// Server-Sent Events framing of an event stream: one frame per event (`id:` the
// event id, `event:` its type, `data:` the exact webhook body), a comment line as
// heartbeat, and an end when the stream closes or the client reads too slowly.
import { PassThrough, type Readable } from 'node:stream';
import type { EventStream, StreamedEvent } from './event-stream.ts';

/** Unread bytes a client may leave behind before its stream is ended (it resumes with Last-Event-ID). */
const MAX_BUFFERED_BYTES = 1024 * 1024;
/** What a browser's EventSource waits before reconnecting. */
const RECONNECT_HINT_MS = 2_000;

function sseFrame(event: StreamedEvent): string {
  // Types and ids never hold line breaks, and the payload is one-line JSON.
  return `id: ${event.id}\nevent: ${event.type}\ndata: ${event.payload}\n\n`;
}

/** The response body of a stream: it pumps events until the stream closes, then ends (and closes the stream when the body goes away). */
export function sseBody(stream: EventStream, options: { heartbeatMs: number }): Readable {
  const body = new PassThrough();
  const heartbeat = setInterval(() => body.write(': heartbeat\n\n'), options.heartbeatMs);
  const finish = () => {
    clearInterval(heartbeat);
    stream.close();
  };
  body.on('close', finish);
  body.on('error', finish);
  body.write(`retry: ${RECONNECT_HINT_MS}\n: connected\n\n`);
  void pump(stream, body).finally(() => {
    clearInterval(heartbeat);
    body.end();
  });
  return body;
}

async function pump(stream: EventStream, body: PassThrough): Promise<void> {
  try {
    while (!stream.closed) {
      const events = await stream.next();
      if (events.length > 0) body.write(events.map(sseFrame).join(''));
      if (body.writableLength > MAX_BUFFERED_BYTES) stream.close();
    }
  } catch (error) {
    // A failed read ends the stream; the client reconnects and resumes with Last-Event-ID.
    stream.close();
    body.destroy(error instanceof Error ? error : new Error(String(error)));
  }
}

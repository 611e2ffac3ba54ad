// The shop's webhook events as they commit (GET /v1/webhooks/stream, Server-Sent
// Events): an async iterator of events, each carrying the exact body a webhook
// delivery of it would. The gateway's frames are simple (`id:`, `event:`, one
// `data:` line, comments as heartbeat), read here by the SSE line rules, so the
// package needs no dependency. One connection: to resume after a break, open a
// new stream with the last event's id as `lastEventId`.

export interface StreamedWebhookEvent {
  /** The event id (`evt_…`), the same as a delivery's `webhook-id`. */
  readonly id: string;
  readonly type: string;
  /** The exact JSON body a webhook delivery of this event carries. */
  readonly body: string;
}

export interface EventStreamOptions {
  /** Resume after this event (sent as Last-Event-ID). */
  readonly lastEventId?: string;
  /** Event types, `*` for any run of characters: `['payment.*']`. */
  readonly types?: readonly string[];
  /** Closes the stream. */
  readonly signal?: AbortSignal;
}

/** Splits a byte stream into SSE events (the spec's field rules; comments and `retry:` are skipped). */
export async function* sseEvents(body: ReadableStream<Uint8Array>): AsyncGenerator<StreamedWebhookEvent> {
  const decoder = new TextDecoder();
  let buffer = '';
  let id = '';
  let type = '';
  let data: string[] = [];
  for await (const chunk of body) {
    buffer += decoder.decode(chunk, { stream: true });
    const lines = buffer.split(/\r\n|\r|\n/);
    buffer = lines.pop() ?? '';
    for (const line of lines) {
      if (line === '') {
        if (data.length > 0) yield { id, type: type || 'message', body: data.join('\n') };
        type = '';
        data = [];
        continue;
      }
      if (line.startsWith(':')) continue;
      const colon = line.indexOf(':');
      const field = colon === -1 ? line : line.slice(0, colon);
      const value = colon === -1 ? '' : line.slice(colon + 1).replace(/^ /, '');
      if (field === 'id') id = value;
      else if (field === 'event') type = value;
      else if (field === 'data') data.push(value);
    }
  }
}

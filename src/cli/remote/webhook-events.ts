// The shop's webhook events as GET /v1/webhooks/events shows them, read page by page.
import type { GatewayClient } from './gateway-client.ts';

export interface WebhookEvent {
  readonly id: string;
  readonly type: string;
  readonly created_at: string;
  readonly data: Record<string, unknown>;
  readonly destination_url: string | null;
  readonly status: string;
  readonly attempt_count: number;
  readonly last_attempt_at: string | null;
  readonly next_attempt_at: string | null;
}

/** The API's page size bound. */
const PAGE_LIMIT_MAX = 100;

/** Up to `limit` events, newest first, of one type when `type` is given. */
export async function listEvents(
  client: GatewayClient,
  options: { readonly type?: string | undefined; readonly limit: number },
): Promise<WebhookEvent[]> {
  const events: WebhookEvent[] = [];
  let cursor: string | null = null;
  do {
    const query = new URLSearchParams({ limit: String(Math.min(PAGE_LIMIT_MAX, options.limit - events.length)) });
    if (options.type !== undefined) query.set('type', options.type);
    if (cursor !== null) query.set('cursor', cursor);
    const page = await client.get<{ data: WebhookEvent[]; next_cursor: string | null }>(
      `/v1/webhooks/events?${query.toString()}`,
    );
    events.push(...page.data);
    cursor = page.next_cursor;
  } while (cursor !== null && events.length < options.limit);
  return events;
}
